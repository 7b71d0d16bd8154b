/**
 * How a records or aggregate page is read, whatever the engine: the planned page, its count, the
 * missing-rate checks and the data version, all inside one read snapshot the engine provides.
 * Each engine supplies only how to run a planned statement on its snapshot (`SnapshotReader`).
 */
import type { CurrencyCode } from "../currencies.js";
import { type TextPage, textPages } from "./page-text.js";
import {
  aggregateReadsRollup,
  type PlannedAggregatePage,
  type PlannedCount,
  type PlannedRecordsPage,
  type PlannedSql,
  planAggregateCount,
  planAggregateMissingRate,
  planAggregatePage,
  planDataVersion,
  planFxRates,
  planRecordsDayCurrencies,
  planRecordsPage,
  planRecordsText,
  planRollupPartials,
  recordsNeedRates,
} from "./query-planner.js";
import type { AggregateQuery, RecordsQuery } from "./query-request.js";
import { type DayRates, FxHistory, MoneyConverter } from "./record-money.js";
import { rollupPageRows, totalRollupPartials } from "./rollup-aggregate.js";
import type { SqlDialect } from "./sql-dialect.js";
import { MissingFxRateError, type PageResult } from "./store.js";
import {
  type DayCount,
  type PageBoundary,
  pageDays,
  rememberBoundary,
  sortedByDayAlone,
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
 * Every sort and filter reads through the same steps:
 * 1. the query's facts (`walkFacts`: count, rows per day, missing-rate verdict), read once per
 *    query and data generation and kept in `walks`, from the record rollup unless campaigns are
 *    filtered;
 * 2. the page (`readPageRows`): for the day sort from the previous page's boundary when a walk
 *    served it (keyset), else at its offset;
 * 3. its stored money converted (`convertedRows`, record-money.ts: the one conversion of output
 *    money), with the FX history read once per generation;
 * 4. the data version, once per query and generation.
 */
export async function readRecordsPage(
  reader: SnapshotReader,
  query: RecordsQuery,
  walks: WalkMemory,
): Promise<PageResult<Row>> {
  const generation = await reader.generation();
  const walk = generation === null ? null : walks.walkOf(generation, query);
  const rates = walkRates(reader, walks, generation);
  const facts = await walkFacts(reader, query, walk, rates);
  if (facts.count.missingRate !== null) throw missingRateError(facts.count.missingRate);
  const page = await readPageRows(reader, query, walk, facts.days);
  const dataVersion = walk?.dataVersion ?? (await readDataVersion(reader, query));
  if (walk) walk.dataVersion = dataVersion;
  return {
    rows: withCurrency(await convertedRows(page, query, rates), query.currency),
    totalCount: facts.count.total,
    dataVersion,
  };
}

/** What a walk knows before its first page: the count with its missing-rate verdict, rows per day. */
interface WalkFacts {
  count: WalkCount;
  days: DayCount[];
}

/**
 * The stored FX rates a walk converts and checks with: once per generation (`WalkMemory`), or,
 * when the snapshot's generation is not known for sure, read for this page alone.
 */
function walkRates(
  reader: SnapshotReader,
  walks: WalkMemory,
  generation: string | null,
): () => Promise<DayRates> {
  if (generation !== null) return () => walks.fxHistory(generation, () => readFxHistory(reader));
  let history: Promise<DayRates> | undefined;
  return () => {
    history ??= readFxHistory(reader);
    return history;
  };
}

/**
 * A walk's facts, read once (and kept in `walk` when there is one): one statement counts the rows
 * per day and source currency; the missing-rate verdict is the count query's own
 * (query-planner.ts `missingRateSample`): of the (currency, day) pairs whose conversion lacks a
 * rate, the least `CUR YYYY-MM-DD`, naming the source currency when its rate lacks, else the
 * target.
 */
async function walkFacts(
  reader: SnapshotReader,
  query: RecordsQuery,
  walk: Walk | null,
  rates: () => Promise<DayRates>,
): Promise<WalkFacts> {
  if (walk?.count && walk.days) return { count: walk.count, days: walk.days };
  const table = await reader.run(planRecordsDayCurrencies(query, reader.dialect));
  const lookup = recordsNeedRates(query) ? await rates() : null;
  const target = query.currency;
  const days: DayCount[] = [];
  let total = 0;
  let sample: string | null = null;
  for (let index = 0; index < table.rowCount; index += 1) {
    const day = String(table.value(index, 0));
    const currency = String(table.value(index, 1));
    const rows = Number(table.value(index, 2));
    total += rows;
    const last = days[days.length - 1];
    if (last?.day === day) last.rows += rows;
    else days.push({ day, rows });
    if (lookup === null || currency === target) continue;
    const sourceRate = lookup.rateOn(currency, day);
    if (sourceRate !== undefined && lookup.rateOn(target, day) !== undefined) continue;
    const missing = `${sourceRate === undefined ? currency : target} ${day}`;
    if (sample === null || missing < sample) sample = missing;
  }
  const count = {
    total,
    missingRate: sample === null ? null : { currency: sample.slice(0, 3), date: sample.slice(4) },
  };
  if (walk) {
    walk.count = count;
    walk.days = days;
  }
  return { count, days };
}

/**
 * A `marketingRecords` page of the day sort as JSON text (page-text.ts), then up to `pages - 1`
 * pages after it read in the same statement (read-ahead: what a walk asks next); null when the
 * text cannot answer the query (another sort, or a row the object path would write otherwise),
 * and `readRecordsPage` must. What does not depend on the page is read once per walk, as there.
 */
export async function readRecordsText(
  reader: SnapshotReader,
  query: RecordsQuery,
  walks: WalkMemory,
  pages: number,
): Promise<TextPage[] | null> {
  if (!sortedByDayAlone(query)) return null;
  const generation = await reader.generation();
  const walk = generation === null ? null : walks.walkOf(generation, query);
  const rates = walkRates(reader, walks, generation);
  const { count, days } = await walkFacts(reader, query, walk, rates);
  if (count.missingRate !== null) throw missingRateError(count.missingRate);
  const dataVersion = walk?.dataVersion ?? (await readDataVersion(reader, query));
  if (walk) walk.dataVersion = dataVersion;
  const { page, pageSize } = query.page;
  const left = count.total - (page - 1) * pageSize;
  const empty: TextPage = { json: Buffer.from("[]"), rows: 0, totalCount: count.total, dataVersion };
  if (left <= 0) return [empty];
  const rows = pageSize * Math.max(1, Math.min(pages, Math.ceil(left / pageSize)));
  const after = walk?.boundaries.get(page - 1) ?? null;
  const offset = after !== null ? 0 : (page - 1) * pageSize;
  const plan = planRecordsText(narrowToPage(query, days, after, rows), reader.dialect, {
    after,
    offset,
    rows,
  });
  const table = await reader.run(plan);
  const read = Number(table.value(0, 0) ?? 0);
  const text = table.value(0, 1) ?? "";
  const cut = textPages(typeof text === "string" ? Buffer.from(text) : (text as Uint8Array), read, {
    fields: query.fields,
    columns: plan.columns,
    currency: query.currency,
    money: recordsNeedRates(query) ? new MoneyConverter(query.currency, await rates()) : null,
    pageSize,
  });
  if (cut === null) return null;
  if (walk)
    for (const [index, served] of cut.entries()) rememberBoundary(walk, page + index, served.boundary);
  const answered = cut.map((served) => ({
    json: served.json,
    rows: served.rows,
    totalCount: count.total,
    dataVersion,
  }));
  return answered.length > 0 ? answered : [empty];
}

/** A records page's result and plan. */
interface PageRead {
  table: ResultTable;
  plan: PlannedRecordsPage;
}

/**
 * A records page, under any sort: from the previous page's boundary when the walk served that
 * page (a Top-N of the rows past it, no offset), else at its offset (one Top-N); its own boundary
 * is remembered for the next. Sorted by the day alone, it reads only the days it can span.
 */
async function readPageRows(
  reader: SnapshotReader,
  query: RecordsQuery,
  walk: Walk | null,
  days: readonly DayCount[],
): Promise<PageRead> {
  const after = walk?.boundaries.get(query.page.page - 1) ?? null;
  const narrowed = sortedByDayAlone(query) ? narrowToPage(query, days, after, query.page.pageSize) : query;
  const plan = planRecordsPage(narrowed, reader.dialect, { after });
  const table = await reader.run(plan);
  if (walk && table.rowCount > 0) {
    const last = table.rowCount - 1;
    rememberBoundary(walk, query.page.page, {
      keys: plan.sortKeyColumns.map((column) => String(table.value(last, column))),
      recordId: String(table.value(last, plan.boundaryColumns.recordId)),
    });
  }
  return { table, plan };
}

/**
 * `query` with its range cut to the days `rows` rows after `after` can span (walk-memory.ts
 * `pageDays`). Only a read that starts at a known place is narrowed: page 1, or after a served
 * page; any other page is read by its offset over the whole range.
 */
function narrowToPage(
  query: RecordsQuery,
  days: readonly DayCount[],
  after: PageBoundary | null,
  rows: number,
): RecordsQuery {
  if (after === null && query.page.page !== 1) return query;
  const span = pageDays(days, query.sort[0]!.direction, after, rows);
  return span === null ? query : { ...query, scope: { ...query.scope, ...span } };
}

/**
 * A page's rows with its stored amounts converted by the stored FX rates (read once per
 * generation); only called once the query's facts have found every rate the range needs.
 */
async function convertedRows(
  { table, plan }: PageRead,
  query: RecordsQuery,
  rates: () => Promise<DayRates>,
): Promise<Row[]> {
  const rows = rowsOf(table, plan.fields);
  const money = plan.fields.filter((field) => field === "spend" || field === "revenue");
  if (money.length === 0 || rows.length === 0) return rows;
  const converter = new MoneyConverter(query.currency, await rates());
  for (let index = 0; index < rows.length; index += 1) {
    const row = rows[index]!;
    const source = String(table.value(index, plan.sourceCurrencyColumn));
    const day = String(table.value(index, plan.boundaryColumns.date));
    for (const field of money) row[field] = converter.convert(row[field], source, day);
  }
  return rows;
}

/** Every stored FX rate (query-planner.ts `planFxRates`). */
async function readFxHistory(reader: SnapshotReader): Promise<DayRates> {
  const table = await reader.run(planFxRates(reader.dialect));
  return new FxHistory(
    Array.from({ length: table.rowCount }, (_, index) => ({
      currency: String(table.value(index, 0)),
      date: String(table.value(index, 1)),
      rateE6: BigInt(table.value(index, 2) as bigint | string | number),
    })),
  );
}

/** A `marketingAggregate` page, its group count and data version; MissingFxRateError when a rate lacks. */
export async function readAggregatePage(
  reader: SnapshotReader,
  query: AggregateQuery,
  walks: WalkMemory,
): Promise<PageResult<Row>> {
  if (aggregateReadsRollup(query)) return readRollupAggregatePage(reader, query, walks);
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

/**
 * An aggregate page from the record rollup (rollup-aggregate.ts): the partial sums read by one
 * statement, converted with the FX history kept per generation, like a records page's money.
 */
async function readRollupAggregatePage(
  reader: SnapshotReader,
  query: AggregateQuery,
  walks: WalkMemory,
): Promise<PageResult<Row>> {
  const table = await reader.run(planRollupPartials(query, reader.dialect));
  const withMoney = query.metrics.some((metric) => metric === "SPEND" || metric === "REVENUE");
  const rates = withMoney ? await walkRates(reader, walks, await reader.generation())() : null;
  const totals = totalRollupPartials(table, query, rates);
  if (totals.missingRate !== null) throw missingRateError(totals.missingRate);
  const rows = rollupPageRows(totals.groups, query);
  const dataVersion = await readDataVersion(reader, query);
  return { rows: withCurrency(rows, query.currency), totalCount: totals.groups.length, dataVersion };
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
