/**
 * A store that counts what passes through it: rows served by records and aggregate queries
 * (`mdq_rows_served_total`) and failed calls by kind (`mdq_store_errors_total`), and logs
 * (throttled) while the database does not answer. A typed decorator (store-decorator.ts): every
 * call of the wrapped store passes through `forward`, capabilities included.
 */
import { LoadFileError } from "../load/load-errors.js";
import { RecordsNotClean } from "../load/record-staging.js";
import { StoreDecorator } from "../store/decorators/store-decorator.js";
import type { AggregateQuery, RecordsQuery } from "../store/model/query-request.js";
import type { PageResult, RecordsPage, Store } from "../store/model/store.js";
import { isExpectedStoreError, StoreUnavailableError } from "../store/model/store-errors.js";
import type { ServiceMetrics, StoreErrorKind } from "./metrics.js";
import { safeReason, ThrottledWarning, type WarningLogger } from "./throttled-warning.js";

type Row = Record<string, unknown>;

function kindOf(error: unknown): StoreErrorKind {
  return error instanceof StoreUnavailableError ? "unavailable" : "other";
}

/**
 * Whether `error` answers the request rather than being a failure of the store: a store error
 * that says so (a missing FX rate, a record-id clash), or a load's file found wanting while the
 * store staged it (the fast check's `RecordsNotClean`, which sends the file to the diagnosing
 * read; a `LoadFileError`, such as a file that changed while it was loaded). 422s, not 500s.
 */
function answersRequest(error: unknown): boolean {
  return isExpectedStoreError(error) || error instanceof LoadFileError || error instanceof RecordsNotClean;
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
      if (!answersRequest(error)) {
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
