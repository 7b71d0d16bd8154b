/**
 * How a records or aggregate page is read, whatever the engine: the planned page, its count, the
 * missing-rate checks and the data version, all inside one read snapshot the engine provides.
 * Each engine supplies only how to run a planned statement on its snapshot (`SnapshotReader`).
 */
import type { CurrencyCode } from "../currencies.js";
import {
  type PlannedCount,
  type PlannedPage,
  planAggregateCount,
  planAggregateMissingRate,
  planAggregatePage,
  planRecordsCount,
  planRecordsPage,
} from "./query-planner.js";
import type { AggregateQuery, RecordsQuery, RowScope } from "./query-request.js";
import type { SqlDialect } from "./sql-dialect.js";
import { MissingFxRateError, type PageResult } from "./store.js";

type Row = Record<string, unknown>;

/** One engine's reads inside one snapshot (a transaction on one connection). */
export interface SnapshotReader {
  readonly dialect: SqlDialect;
  /** Runs a planned page; each row's keys are the plan's `fields`. */
  page(plan: PlannedPage): Promise<Row[]>;
  /** Runs a planned count: `total` and the `missing_rate` sample (`CUR YYYY-MM-DD`) or null. */
  count(plan: PlannedCount): Promise<{ total: number; missingRate: string | null }>;
  /** How many loads have touched the brand's days in the range (`pageInfo.dataVersion`). */
  dataVersion(scope: RowScope): Promise<string>;
}

/** A `marketingRecords` page, its total and data version; MissingFxRateError when a rate lacks. */
export async function readRecordsPage(reader: SnapshotReader, query: RecordsQuery): Promise<PageResult<Row>> {
  const page = await reader.page(planRecordsPage(query, reader.dialect));
  const count = await reader.count(planRecordsCount(query, reader.dialect));
  if (count.missingRate !== null) throw missingRateError(count.missingRate);
  const dataVersion = await reader.dataVersion(query.scope);
  return { rows: withCurrency(page, query.currency), totalCount: count.total, dataVersion };
}

/** A `marketingAggregate` page, its group count and data version; MissingFxRateError when a rate lacks. */
export async function readAggregatePage(
  reader: SnapshotReader,
  query: AggregateQuery,
): Promise<PageResult<Row>> {
  const rows = await reader.page(planAggregatePage(query, reader.dialect));
  let totalCount: number;
  const first = rows[0];
  if (first === undefined) {
    totalCount = (await reader.count(planAggregateCount(query, reader.dialect))).total;
    // A page past the end needs the same conversions as page 1: same answer as records give.
    if (totalCount > 0 && query.metrics.some((metric) => metric === "SPEND" || metric === "REVENUE")) {
      const sample = await reader.count(planAggregateMissingRate(query, reader.dialect));
      if (sample.missingRate !== null) throw missingRateError(sample.missingRate);
    }
  } else {
    totalCount = Number(first["__totalCount"]);
    if (Number(first["__missingRateRows"]) > 0) {
      const sample = await reader.count(planAggregateMissingRate(query, reader.dialect));
      throw missingRateError(sample.missingRate ?? `${query.currency} ${query.scope.from}`);
    }
    for (const row of rows) {
      delete row["__totalCount"];
      delete row["__missingRateRows"];
    }
  }
  const dataVersion = await reader.dataVersion(query.scope);
  return { rows: withCurrency(rows, query.currency), totalCount, dataVersion };
}

function withCurrency(rows: Row[], currency: CurrencyCode): Row[] {
  for (const row of rows) row["currency"] = currency;
  return rows;
}

function missingRateError(sample: string): MissingFxRateError {
  const [currency = "", date = ""] = sample.split(" ");
  return new MissingFxRateError(currency, date);
}
