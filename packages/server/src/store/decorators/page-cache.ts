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
 * without it. What it does for a first-time walk is read-ahead: a records page it does not hold
 * but whose previous page it holds is read with the pages after it, up to `READ_AHEAD_ROWS` rows,
 * in one statement (any sort), and those pages wait here, apart from the answered ones, until
 * their walk asks them (and are awaited by requests that arrive meanwhile). When no other page
 * read is in flight, a walk answered the last page of its batch has the next batch read at once,
 * before it asks it (`readNextBatchWhenAlone`).
 *
 * Apart, because in one LRU the pages that 8 concurrent walks had just been answered pushed out
 * the pages read ahead for the others before they were asked, so those were read again: a 32 MB
 * cache cost 25 % more CPU per walk than a 64 MB one. Kept apart, answered pages can have the
 * smaller budget, and a walk's next page still waits for it (issue 17: the server's peak RSS at
 * scale 600 under 8 walks, docs/architecture.md).
 */
import { LRUCache } from "lru-cache";
import type { AggregateQuery, RecordsQuery } from "../model/query-request.js";
import type { PageResult, RecordsPage, Store } from "../model/store.js";
import { StoreDecorator } from "./store-decorator.js";

type Row = Record<string, unknown>;
type CachedPage = PageResult<Row> | RecordsPage;

/**
 * Rough bytes of a cached page: what bounds the cache's memory. A records page's is generous: its
 * columns and the packed bytes its text points into (its JSON is written anew for each response,
 * graphql/response-buffers.ts).
 */
export function pageBytes(page: CachedPage): number {
  if ("columns" in page) return 256 + page.rowCount * (64 + page.fields.length * 64);
  const first = page.rows[0];
  const fields = first ? Object.keys(first).length : 0;
  return 256 + page.rows.length * (64 + fields * 40);
}

/**
 * Rows a records page reads ahead at most (in whole pages, at least the page asked): the pages
 * after it are filed here for the requests that follow, as a sync asks them (issue 11).
 */
export const READ_AHEAD_ROWS = 10_000;

/** Tells a cache lookup's result (metrics). */
export type PageCacheLookup = (query: "records" | "aggregate", result: "hit" | "miss") => void;

/**
 * Wraps `store` so that `queryRecords` and `queryAggregate` answer from memory when the same query
 * was answered under the current data generation; `maxBytes` 0 returns `store` itself. Answered
 * pages take at most `maxBytes`; pages read ahead and not asked yet, as much again.
 * @example const store = withPageCache(await openStore(config), 32 * 1024 * 1024);
 */
export function withPageCache(store: Store, maxBytes: number, onLookup?: PageCacheLookup): Store {
  return maxBytes <= 0 ? store : new PageCache(store, maxBytes, onLookup);
}

/** The page cache: a typed decorator of the store (store-decorator.ts) overriding its page reads. */
export class PageCache extends StoreDecorator {
  /** Pages answered: what a repeated query is answered from. */
  private readonly pages: LRUCache<string, CachedPage>;
  /** Records pages read ahead that no request has asked yet; asked, a page moves to `pages`. */
  private readonly waiting: LRUCache<string, RecordsPage>;
  /** Concurrent misses of one aggregate key share one store read. */
  private readonly inFlight = new Map<string, Promise<PageResult<Row>>>();
  /** Records pages being read, the pages read ahead included (null: not in the batch after all). */
  private readonly recordsInFlight = new Map<string, Promise<RecordsPage | null>>();

  constructor(
    inner: Store,
    maxBytes: number,
    private readonly onLookup?: PageCacheLookup,
  ) {
    super(inner);
    const sizeCalculation = (page: CachedPage) => Math.max(1, pageBytes(page));
    this.pages = new LRUCache<string, CachedPage>({ maxSize: maxBytes, sizeCalculation });
    this.waiting = new LRUCache<string, RecordsPage>({ maxSize: maxBytes, sizeCalculation });
  }

  override queryAggregate(query: AggregateQuery): Promise<PageResult<Row>> {
    return this.cached("aggregate", query, () => super.queryAggregate(query));
  }

  /** The page of `query`: cached, being read (maybe ahead), or read with its next pages. */
  override async queryRecords(query: RecordsQuery): Promise<RecordsPage[]> {
    const generation = await this.inner.dataGeneration();
    const key = keyOf(generation, "records", query);
    let hit = this.pages.get(key) as RecordsPage | undefined;
    // Whether the page was read ahead of its walk (then the walk may be at its batch's end).
    let readAhead = false;
    if (hit === undefined) {
      hit = this.answeredAhead(key);
      readAhead = hit !== undefined;
    }
    const reading = hit ? undefined : this.recordsInFlight.get(key);
    if (reading) {
      hit = (await reading) ?? undefined;
      // Read ahead while this request waited: it is answered now.
      if (hit && this.answeredAhead(key)) readAhead = true;
    }
    if (hit) {
      this.onLookup?.("records", "hit");
      if (readAhead) this.readNextBatchWhenAlone(generation, query, hit);
      return [hit];
    }
    this.onLookup?.("records", "miss");
    return [await this.readAhead(generation, query)];
  }

  /**
   * Starts reading the batch after `page` (a page read ahead, just answered) when its walk has
   * no page of it left and no other page read of this cache is in flight: a walk alone then has
   * its next pages read while the main thread writes this one's answer and its client reads it,
   * so its next request finds them read or being read (one client's walk of 5000-row pages at
   * scale 30: the page after a batch 32–33 → 21–23 ms, bench/README.md "Issue 17, a walk alone").
   * Beside other reads it waits to be asked, as before: eight concurrent walks spent more CPU a
   * page reading every next batch early, and lost throughput. A walk that stops there leaves one
   * batch read for nobody. A failed batch read nothing: its pages' requests read them anew.
   */
  private readNextBatchWhenAlone(generation: string, query: RecordsQuery, page: RecordsPage): void {
    if (this.recordsInFlight.size > 0 || this.inFlight.size > 0) return;
    if (query.page.page * query.page.pageSize >= page.totalCount) return;
    const next = pageAfter(query, 1);
    const key = keyOf(generation, "records", next);
    if (this.pages.has(key) || this.waiting.has(key)) return;
    this.readAhead(generation, next, false).catch(() => undefined);
  }

  /** The page read ahead under `key`, moved to the answered pages; undefined when none waits. */
  private answeredAhead(key: string): RecordsPage | undefined {
    const page = this.waiting.get(key);
    if (page === undefined) return undefined;
    this.waiting.delete(key);
    this.pages.set(key, page);
    return page;
  }

  /**
   * Reads the page of `query` with the pages after it (`READ_AHEAD_ROWS`), each filed under its
   * own key once read, and awaited meanwhile by the requests asking for it. Only a walk reads
   * ahead: the page after one this cache holds. Page 1 is read alone: it is the first answer a
   * dashboard or a sync waits for, and a dashboard may never ask page 2 (read with page 2, the
   * first 5000-row page read, sorted and packed twice its rows: 2.0× the engine's SQL on
   * PostgreSQL at scale 150, bench/README.md); a walk's second page then reads ahead, so a walk
   * takes as many statements as before, or one more. A page asked out of order (a dashboard
   * jumping to page 20) is read alone too: reading ahead there would sort and pack ten times the
   * rows for pages nobody may ask (measured: a page 20 by CLICKS at scale 600, 2.2× the engine's
   * SQL with read-ahead). Not `asked` (a batch read before its walk asks it,
   * `readNextBatchWhenAlone`), its first page waits with the others.
   */
  private async readAhead(generation: string, query: RecordsQuery, asked = true): Promise<RecordsPage> {
    const { pages, waiting, recordsInFlight } = this;
    const walking = query.page.page > 1 && pages.has(keyOf(generation, "records", pageAfter(query, -1)));
    const ahead = walking ? Math.max(1, Math.floor(READ_AHEAD_ROWS / query.page.pageSize)) : 1;
    const batch = super.queryRecords(query, ahead);
    let first: Promise<RecordsPage | null> = batch.then((list) => list[0] ?? null);
    for (let index = 0; index < ahead; index += 1) {
      const pageKey = keyOf(generation, "records", pageAfter(query, index));
      if (index > 0 && (pages.has(pageKey) || waiting.has(pageKey) || recordsInFlight.has(pageKey))) continue;
      // A page past the batch is past the data's end, and a failed batch read nothing: null
      // sends a request for such a page to read it on its own.
      const reading =
        index === 0 && asked
          ? first
          : batch.then(
              (list) => list[index] ?? null,
              () => null,
            );
      const settled = reading.then(
        (page) => {
          recordsInFlight.delete(pageKey);
          // The page asked is answered now; the pages after it (all, unasked) wait for their walk.
          if (page !== null) (index === 0 && asked ? pages : waiting).set(pageKey, page);
          return page;
        },
        (error: unknown) => {
          recordsInFlight.delete(pageKey);
          throw error;
        },
      );
      // Pages read ahead that nobody asks for must not surface as unhandled rejections.
      if (index > 0 || !asked) settled.catch(() => undefined);
      else first = settled;
      recordsInFlight.set(pageKey, settled);
    }
    const page = await first;
    if (page === null) throw new Error("the store answered a records query with no page");
    return page;
  }

  private async cached(
    kind: "records" | "aggregate",
    query: RecordsQuery | AggregateQuery,
    read: () => Promise<PageResult<Row>>,
  ): Promise<PageResult<Row>> {
    const { pages, inFlight, onLookup } = this;
    const generation = await this.inner.dataGeneration();
    const key = keyOf(generation, kind, query);
    const hit = pages.get(key) as PageResult<Row> | undefined;
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
  }
}

/** `query` for the page `offset` pages after its own (before it, when negative). */
function pageAfter(query: RecordsQuery, offset: number): RecordsQuery {
  return { ...query, page: { ...query.page, page: query.page.page + offset } };
}

function keyOf(generation: string, kind: string, query: RecordsQuery | AggregateQuery): string {
  return `${generation}\u0000${kind}\u0000${JSON.stringify(query)}`;
}
