/**
 * A store that counts what passes through it: rows served by records and aggregate queries
 * (`mdq_rows_served_total`) and failed calls by kind (`mdq_store_errors_total`), and logs
 * (throttled) while the database does not answer. A typed decorator (store-decorator.ts): every
 * call of the wrapped store passes through `forward`, capabilities included.
 */
import type { AggregateQuery, RecordsQuery } from "../store/query-request.js";
import type { PageResult, RecordsPage, Store } from "../store/store.js";
import { StoreDecorator } from "../store/store-decorator.js";
import { isExpectedStoreError, StoreUnavailableError } from "../store/store-errors.js";
import type { ServiceMetrics, StoreErrorKind } from "./metrics.js";
import { safeReason, ThrottledWarning, type WarningLogger } from "./throttled-warning.js";

type Row = Record<string, unknown>;

function kindOf(error: unknown): StoreErrorKind {
  return error instanceof StoreUnavailableError ? "unavailable" : "other";
}

/** `store`, metered into `metrics`; outages are logged to `log`. */
export class MeteredStore extends StoreDecorator {
  private readonly outage: ThrottledWarning;

  constructor(
    inner: Store,
    private readonly metrics: ServiceMetrics,
    log?: WarningLogger,
  ) {
    super(inner);
    this.outage = new ThrottledWarning(log, "the store does not answer; requests that need it get 503");
  }

  protected override async forward<Result>(operation: string, call: () => Promise<Result>): Promise<Result> {
    try {
      const result = await call();
      this.outage.recovered("the store answers again");
      return result;
    } catch (error) {
      if (!isExpectedStoreError(error)) {
        const kind = kindOf(error);
        this.metrics.storeErrors.inc({ kind });
        if (kind === "unavailable") this.outage.warn({ operation, reason: safeReason(error) });
      }
      throw error;
    }
  }

  /** Counts the rows of the page asked, not those read ahead. */
  override async queryRecords(query: RecordsQuery, pages?: number): Promise<RecordsPage[]> {
    const answered = await super.queryRecords(query, pages);
    this.metrics.rowsServed.inc({ query: "records" }, answered[0]?.rowCount ?? 0);
    return answered;
  }

  override async queryAggregate(query: AggregateQuery): Promise<PageResult<Row>> {
    const page = await super.queryAggregate(query);
    this.metrics.rowsServed.inc({ query: "aggregate" }, page.rows.length);
    return page;
  }
}
