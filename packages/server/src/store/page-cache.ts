/**
 * A cache of answered pages in front of any store, valid for one data generation.
 *
 * A page's answer depends only on its query (brand, range, effective grants, filters, fields,
 * sort, page, currency, metrics, grouping: all in the key) and on the data it reads: records and
 * FX rates. The store counts every write of those (`dataGeneration`); the generation is read
 * before the page, so a page computed while a load commits is filed under the older generation
 * and never served once the newer one is seen. Grant changes need no invalidation: the effective
 * grants are part of the key. Errors (a missing FX rate) are never cached.
 *
 * Daily-sync traffic asks for each page about once, so the cache mostly serves retries, resumed
 * walks and many apps of one brand reading the same days; bench/README.md reports MDQ with and
 * without it.
 */
import { LRUCache } from "lru-cache";
import type { AggregateQuery, RecordsQuery } from "./query-request.js";
import type { DataGeneration, PageResult, RecordReads } from "./store.js";

type Row = Record<string, unknown>;

/** Rough bytes of a cached page: what bounds the cache's memory. */
function pageBytes(page: PageResult<Row>): number {
  const first = page.rows[0];
  const fields = first ? Object.keys(first).length : 0;
  return 256 + page.rows.length * (64 + fields * 40);
}

/**
 * Wraps `store` so that `queryRecords` and `queryAggregate` answer from memory when the same query
 * was answered under the current data generation; `maxBytes` 0 returns `store` itself.
 * @example const store = withPageCache(await openStore(config), 64 * 1024 * 1024);
 */
export function withPageCache<S extends RecordReads & DataGeneration>(
  store: S,
  maxBytes: number,
  onLookup?: (query: "records" | "aggregate", result: "hit" | "miss") => void,
): S {
  if (maxBytes <= 0) return store;
  const pages = new LRUCache<string, PageResult<Row>>({
    maxSize: maxBytes,
    sizeCalculation: (page) => Math.max(1, pageBytes(page)),
  });
  /** Concurrent misses of one key share one store read. */
  const inFlight = new Map<string, Promise<PageResult<Row>>>();

  const cached = async (
    kind: "records" | "aggregate",
    query: RecordsQuery | AggregateQuery,
    read: () => Promise<PageResult<Row>>,
  ): Promise<PageResult<Row>> => {
    const generation = await store.dataGeneration();
    const key = `${generation}\u0000${kind}\u0000${JSON.stringify(query)}`;
    const hit = pages.get(key);
    if (hit) {
      onLookup?.(kind, "hit");
      return hit;
    }
    const pending = inFlight.get(key);
    if (pending) {
      onLookup?.(kind, "hit");
      return pending;
    }
    onLookup?.(kind, "miss");
    const reading = read().then(
      (page) => {
        inFlight.delete(key);
        pages.set(key, page);
        return page;
      },
      (error: unknown) => {
        inFlight.delete(key);
        throw error;
      },
    );
    inFlight.set(key, reading);
    return reading;
  };

  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === "queryRecords") {
        return (query: RecordsQuery) => cached("records", query, () => target.queryRecords(query));
      }
      if (property === "queryAggregate") {
        return (query: AggregateQuery) => cached("aggregate", query, () => target.queryAggregate(query));
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
