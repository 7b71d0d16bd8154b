/**
 * How a records or aggregate page is read, whatever the engine: the planned page, its count, the
 * missing-rate checks and the data version, all inside one read snapshot the engine provides.
 * Each engine supplies only how to run a planned statement on its snapshot (`SnapshotReader`).
 */
import type { CurrencyCode } from "../currencies.js";
import {
  type PlannedAggregatePage,
  type PlannedCount,
  type PlannedKeysetPage,
  type PlannedPage,
  type PlannedSql,
  planAggregateCount,
  planAggregateMissingRate,
  planAggregatePage,
  planDataVersion,
  planDayRates,
  planRecordsCount,
  planRecordsPage,
  planRecordsPerDay,
} from "./query-planner.js";
import type { AggregateQuery, RecordsQuery } from "./query-request.js";
import { type DayRates, dayRateKey, MoneyConverter } from "./record-money.js";
import type { SqlDialect } from "./sql-dialect.js";
import { MissingFxRateError, type PageResult } from "./store.js";
import {
  keysetSortable,
  type PageBoundary,
  pageDays,
  rememberBoundary,
  type Walk,
  type WalkCount,
  type WalkMemory,
} from "./walk-memory.js";

type Row = Record<string, unknown>;

/** A statement's result, read by position: each engine keeps its driver's cheapest layout. */
export interface ResultTable {
  readonly rowCount: number;
  /** The value at a 0-based row and column, as the driver returns it. */
  value(row: number, column: number): unknown;
}

/** One engine's reads inside one snapshot (a transaction on one connection). */
export interface SnapshotReader {
  readonly dialect: SqlDialect;
  /** Runs a planned statement. */
  run(statement: PlannedSql): Promise<ResultTable>;
  /**
   * The data generation this snapshot reads, or null when that is not known for sure (a write
   * raced its start): then nothing is reused from, or remembered for, other pages.
   */
  generation(): Promise<string | null>;
}

/** Runs `read` with a reader of one snapshot of an engine's data. */
export type InSnapshot = <Result>(read: (reader: SnapshotReader) => Promise<Result>) => Promise<Result>;

/** A currency and day whose conversion lacks a rate (CONTRACT §3 rule 7). */
export interface MissingRate {
  currency: string;
  date: string;
}

/** A planned count's answer. */
type CountResult = WalkCount;

/** An aggregate page's rows with what its window columns say. */
interface AggregateRows {
  rows: Row[];
  totalCount: number;
  missingRateRows: number;
}

/**
 * A `marketingRecords` page, its total and data version; MissingFxRateError when a rate lacks.
 * With `walks`, what does not depend on the page (count, missing-rate verdict, data version) is
 * read once per query and data generation, and a page of the day sort after a served page is a
 * keyset read from that page's boundary (walk-memory.ts): the same answer, without re-reading
 * the range for every page of a walk.
 */
export async function readRecordsPage(
  reader: SnapshotReader,
  query: RecordsQuery,
  walks?: WalkMemory,
): Promise<PageResult<Row>> {
  const generation = walks ? await reader.generation() : null;
  if (!walks || generation === null) {
    const rows = await readRows(reader, planRecordsPage(query, reader.dialect));
    const count = await readCount(reader, planRecordsCount(query, reader.dialect));
    if (count.missingRate !== null) throw missingRateError(count.missingRate);
    const dataVersion = await readDataVersion(reader, query);
    return { rows: withCurrency(rows, query.currency), totalCount: count.total, dataVersion };
  }
  const walk = walks.walkOf(generation, query);
  const keyset = keysetSortable(query) ? await readKeysetPage(reader, query, walk) : null;
  const rows = keyset ? null : await readRows(reader, planRecordsPage(query, reader.dialect));
  walk.count ??= await readCount(reader, planRecordsCount(query, reader.dialect));
  if (walk.count.missingRate !== null) throw missingRateError(walk.count.missingRate);
  walk.dataVersion ??= await readDataVersion(reader, query);
  return {
    rows: withCurrency(
      rows ??
        (await convertedRows(keyset!, query, () =>
          walks.dayRates(generation, query.scope, () => readDayRates(reader, query)),
        )),
      query.currency,
    ),
    totalCount: walk.count.total,
    dataVersion: walk.dataVersion,
  };
}

/** A keyset page's result and plan. */
interface KeysetRead {
  table: ResultTable;
  plan: PlannedKeysetPage;
}

/** A page of the day sort: from the previous page's boundary when known; remembers its own. */
async function readKeysetPage(reader: SnapshotReader, query: RecordsQuery, walk: Walk): Promise<KeysetRead> {
  const after = walk.boundaries.get(query.page.page - 1) ?? null;
  // Only a page that starts at a known place (page 1, or after a served page) is narrowed.
  const narrowed =
    after !== null || query.page.page === 1 ? await narrowToPage(reader, query, walk, after) : query;
  const plan = planRecordsPage(narrowed, reader.dialect, { after });
  const table = await reader.run(plan);
  if (table.rowCount > 0) {
    const last = table.rowCount - 1;
    rememberBoundary(walk, query.page.page, {
      date: String(table.value(last, plan.boundaryColumns.date)),
      recordId: String(table.value(last, plan.boundaryColumns.recordId)),
    });
  }
  return { table, plan };
}

/** `query` with its range cut to the days its keyset page can span (walk-memory.ts `pageDays`). */
async function narrowToPage(
  reader: SnapshotReader,
  query: RecordsQuery,
  walk: Walk,
  after: PageBoundary | null,
): Promise<RecordsQuery> {
  if (walk.days === undefined) {
    const table = await reader.run(planRecordsPerDay(query, reader.dialect));
    walk.days = Array.from({ length: table.rowCount }, (_, index) => ({
      day: String(table.value(index, 0)),
      rows: Number(table.value(index, 1)),
    }));
  }
  const span = pageDays(walk.days, query.sort[0]!.direction, after, query.page.pageSize);
  return span === null ? query : { ...query, scope: { ...query.scope, ...span } };
}

/**
 * A keyset page's rows with its stored amounts converted by the range's day rates (read once per
 * range and generation); only called once the count has found every rate the range needs.
 */
async function convertedRows(
  { table, plan }: KeysetRead,
  query: RecordsQuery,
  dayRates: () => Promise<DayRates>,
): Promise<Row[]> {
  const rows = rowsOf(table, plan.fields);
  const money = plan.fields.filter((field) => field === "spend" || field === "revenue");
  if (money.length === 0 || rows.length === 0) return rows;
  const converter = new MoneyConverter(query.currency, await dayRates());
  for (let index = 0; index < rows.length; index += 1) {
    const row = rows[index]!;
    const source = String(table.value(index, plan.sourceCurrencyColumn));
    const day = String(table.value(index, plan.boundaryColumns.date));
    for (const field of money) row[field] = converter.convert(row[field], source, day);
  }
  return rows;
}

/** The range's day-rate table (query-planner.ts `planDayRates`). */
async function readDayRates(reader: SnapshotReader, query: RecordsQuery): Promise<DayRates> {
  const table = await reader.run(planDayRates(query.scope, reader.dialect));
  const rates = new Map<string, bigint>();
  for (let index = 0; index < table.rowCount; index += 1) {
    const rate = table.value(index, 2) as bigint | string | number;
    rates.set(dayRateKey(String(table.value(index, 0)), String(table.value(index, 1))), BigInt(rate));
  }
  return rates;
}

/** A `marketingAggregate` page, its group count and data version; MissingFxRateError when a rate lacks. */
export async function readAggregatePage(
  reader: SnapshotReader,
  query: AggregateQuery,
): Promise<PageResult<Row>> {
  const page = await readAggregateRows(reader, planAggregatePage(query, reader.dialect));
  let totalCount = page.totalCount;
  if (page.rows.length === 0) {
    totalCount = (await readCount(reader, planAggregateCount(query, reader.dialect))).total;
    // A page past the end needs the same conversions as page 1: same answer as records give.
    if (totalCount > 0 && query.metrics.some((metric) => metric === "SPEND" || metric === "REVENUE")) {
      const sample = await readCount(reader, planAggregateMissingRate(query, reader.dialect));
      if (sample.missingRate !== null) throw missingRateError(sample.missingRate);
    }
  } else if (page.missingRateRows > 0) {
    const sample = await readCount(reader, planAggregateMissingRate(query, reader.dialect));
    throw missingRateError(sample.missingRate ?? { currency: query.currency, date: query.scope.from });
  }
  const dataVersion = await readDataVersion(reader, query);
  return { rows: withCurrency(page.rows, query.currency), totalCount, dataVersion };
}

/** Runs a planned page; each row's keys are the plan's `fields`. */
async function readRows(reader: SnapshotReader, plan: PlannedPage): Promise<Row[]> {
  return rowsOf(await reader.run(plan), plan.fields);
}

/** Runs a planned aggregate page; its window columns are read off the first row. */
async function readAggregateRows(reader: SnapshotReader, plan: PlannedAggregatePage): Promise<AggregateRows> {
  const table = await reader.run(plan);
  const rows = rowsOf(table, plan.fields);
  if (table.rowCount === 0) return { rows, totalCount: 0, missingRateRows: 0 };
  return {
    rows,
    totalCount: Number(table.value(0, plan.windowColumns.totalCount)),
    missingRateRows: Number(table.value(0, plan.windowColumns.missingRateRows)),
  };
}

function rowsOf(table: ResultTable, fields: readonly string[]): Row[] {
  const rows: Row[] = new Array(table.rowCount);
  for (let index = 0; index < table.rowCount; index += 1) {
    const row: Row = {};
    for (let column = 0; column < fields.length; column += 1)
      row[fields[column]!] = table.value(index, column);
    rows[index] = row;
  }
  return rows;
}

/** Runs a planned count (columns: total, missing_currency, missing_day). */
async function readCount(reader: SnapshotReader, plan: PlannedCount): Promise<CountResult> {
  const table = await reader.run(plan);
  if (table.rowCount === 0) return { total: 0, missingRate: null };
  const currency = table.value(0, 1);
  return {
    total: Number(table.value(0, 0) ?? 0),
    missingRate:
      currency === null || currency === undefined
        ? null
        : { currency: String(currency), date: String(table.value(0, 2)) },
  };
}

/** The data version of the brand's days in the range (`pageInfo.dataVersion`). */
async function readDataVersion(
  reader: SnapshotReader,
  query: RecordsQuery | AggregateQuery,
): Promise<string> {
  const table = await reader.run(planDataVersion(query.scope, reader.dialect));
  return String(table.rowCount === 0 ? 0 : (table.value(0, 0) ?? 0));
}

function withCurrency(rows: Row[], currency: CurrencyCode): Row[] {
  for (const row of rows) row["currency"] = currency;
  return rows;
}

function missingRateError(missing: MissingRate): MissingFxRateError {
  return new MissingFxRateError(missing.currency, missing.date);
}
