/**
 * A store that counts what passes through it: rows served by records and aggregate queries
 * (`mdq_rows_served_total`) and failed calls by kind (`mdq_store_errors_total`), and logs
 * (throttled) while the database does not answer. It wraps any engine without knowing its
 * methods, so a method added to `Store` is metered too, and keeps its capabilities.
 */
import { isExpectedStoreError, StoreUnavailableError } from "../store/store-errors.js";
import type { ServiceMetrics, StoreErrorKind } from "./metrics.js";
import { safeReason, ThrottledWarning, type WarningLogger } from "./throttled-warning.js";

function kindOf(error: unknown): StoreErrorKind {
  return error instanceof StoreUnavailableError ? "unavailable" : "other";
}

const ROW_QUERIES: Record<string, string> = {
  queryRecords: "records",
  queryRecordsText: "records",
  queryAggregate: "aggregate",
};

/** Rows a row query served: a page's rows, or the rows of the first text page (the one asked). */
function rowsServed(result: unknown): number {
  if (result === null) return 0;
  if (Array.isArray(result)) return (result[0] as { rows?: number } | undefined)?.rows ?? 0;
  return (result as { rows: unknown[] }).rows.length;
}

/** `store`, metered into `metrics`; outages are logged to `log`. */
export function meteredStore<S extends object>(store: S, metrics: ServiceMetrics, log?: WarningLogger): S {
  const outage = new ThrottledWarning(log, "the store does not answer; requests that need it get 503");
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function" || property === "close") return value;
      let method = wrapped.get(property);
      if (!method) {
        const rowQuery = typeof property === "string" ? ROW_QUERIES[property] : undefined;
        method = async (...args: unknown[]) => {
          try {
            const result = await (value as (...args: unknown[]) => Promise<unknown>).apply(target, args);
            if (rowQuery) metrics.rowsServed.inc({ query: rowQuery }, rowsServed(result));
            outage.recovered("the store answers again");
            return result;
          } catch (error) {
            if (!isExpectedStoreError(error)) {
              const kind = kindOf(error);
              metrics.storeErrors.inc({ kind });
              if (kind === "unavailable")
                outage.warn({ operation: String(property), reason: safeReason(error) });
            }
            throw error;
          }
        };
        wrapped.set(property, method);
      }
      return method;
    },
  });
}
