/**
 * How a records or aggregate page is read, whatever the engine: the planned page, its count, the
 * missing-rate checks and the data version, all inside one read snapshot the engine provides.
 * Each engine supplies only how to run a planned statement on its snapshot (`SnapshotReader`).
 */
import type { CurrencyCode } from "../currencies.js";
import { inDayOrder, type PackedColumn, type PackedColumns, PackedKind, packedPages } from "./packed-page.js";
import {
  aggregateReadsRollup,
  type PackedReading,
  type PagePosition,
  type PlannedAggregatePage,
  type PlannedCount,
  type PlannedPackedPage,
  type PlannedSql,
  planAggregateCount,
  planAggregateMissingRate,
  planAggregatePage,
  planDataVersion,
  planFxRates,
  planPackedRecordsPage,
  planRecordsDayCurrencies,
  planRollupPartials,
  recordsNeedRates,
} from "./query-planner.js";
import type { AggregateQuery, RecordsQuery } from "./query-request.js";
import { type DayRates, FxHistory, MoneyConverter, YearlyRates } from "./record-money.js";
import { rollupPageRows, totalRollupPartials } from "./rollup-aggregate.js";
import type { SqlDialect } from "./sql-dialect.js";
import {
  MissingFxRateError,
  type PageResult,
  type RecordColumn,
  type RecordsPage,
  type RecordValue,
  textValue,
  type Utf8Column,
} from "./store.js";
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
   * Runs a packed page's statement (query-planner.ts `PlannedPackedPage`: one row, its row count
   * and its text), the text as UTF-8 bytes where the engine can hand them over undecoded.
   */
  runPacked(statement: PlannedSql): Promise<ResultTable>;
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
 * A `marketingRecords` page in columns with its total and data version, then up to `pages - 1`
 * pages after it read by the same statement (read-ahead); MissingFxRateError when a rate lacks.
 * Every sort and filter reads through the same steps:
 * 1. the query's facts (`walkFacts`: count, rows per day, missing-rate verdict), read once per
 *    query and data generation and kept in `walks`, from the record rollup unless campaigns are
 *    filtered;
 * 2. the rows (`planPackedRecordsPage`, one statement): from the previous page's boundary when a
 *    walk served it (keyset), else at its offset; sorted by the day alone, over the days they span;
 * 3. the columns (`recordColumns`), stored money converted by record-money.ts (the one conversion
 *    of output money), with the FX history read once per generation;
 * 4. the data version, once per query and generation.
 * `knownRates`: the FX rates of the query's range when the caller has read them already (an
 * export's snapshot); else they are read once per generation and calendar year (`walkRates`).
 */
export async function readRecordsPages(
  reader: SnapshotReader,
  query: RecordsQuery,
  walks: WalkMemory,
  pages = 1,
  knownRates: (() => Promise<DayRates>) | null = null,
): Promise<RecordsPage[]> {
  const generation = await reader.generation();
  const walk = generation === null ? null : walks.walkOf(generation, query);
  const rates = knownRates ?? walkRates(reader, walks, generation, query.scope);
  const facts = await walkFacts(reader, query, walk, rates);
  if (facts.count.missingRate !== null) throw missingRateError(facts.count.missingRate);
  const dataVersion = walk?.dataVersion ?? (await readDataVersion(reader, query));
  if (walk) walk.dataVersion = dataVersion;
  const totalCount = facts.count.total;
  const { page, pageSize } = query.page;
  const left = totalCount - (page - 1) * pageSize;
  const empty: RecordsPage = {
    fields: query.fields,
    rowCount: 0,
    columns: query.fields.map(() => ({ values: [], places: 0 })),
    totalCount,
    dataVersion,
  };
  if (left <= 0) return [empty];
  const rows = pageSize * Math.max(1, Math.min(pages, Math.ceil(left / pageSize)));
  const after = walk?.boundaries.get(page - 1) ?? null;
  const narrowed = sortedByDayAlone(query) ? narrowToPage(query, facts.days, after, rows) : null;
  const position = { after, rows, spansRows: narrowed !== null };
  const { plan, packed } = await readPacked(reader, narrowed ?? query, position);
  const selectsMoney = query.fields.includes("spend") || query.fields.includes("revenue");
  const money = selectsMoney ? new MoneyConverter(query.currency, await rates()) : null;
  const answered: RecordsPage[] = [];
  for (const columns of packed) {
    const rowCount = rowsOfPage(columns, plan);
    answered.push({
      fields: query.fields,
      rowCount,
      columns: recordColumns(columns, plan, query, money),
      totalCount,
      dataVersion,
    });
    if (walk) rememberBoundary(walk, page + answered.length - 1, boundaryOf(columns, plan, rowCount - 1));
  }
  return answered.length > 0 ? answered : [empty];
}

/**
 * The rows at `position` of `query` packed (`planPackedRecordsPage`), cut into pages: read again
 * with its text escaped when a text value holds the separator (no load stores one), and again
 * sorted when its rows, joined in the order the cut handed them, are not in the sort's order.
 */
async function readPacked(
  reader: SnapshotReader,
  query: RecordsQuery,
  position: PagePosition,
): Promise<{ plan: PlannedPackedPage; packed: PackedColumns[] }> {
  const { pageSize } = query.page;
  const read = async (reading: PackedReading) => {
    const plan = planPackedRecordsPage(query, reader.dialect, position, reading);
    return { plan, packed: unpacked(await reader.runPacked(plan), plan, pageSize, reading.escaped === true) };
  };
  let reading: PackedReading = {};
  let { plan, packed } = await read(reading);
  if (packed === null) {
    reading = { escaped: true };
    ({ plan, packed } = await read(reading));
    if (packed === null) throw new Error("an escaped packed page does not hold the values of its rows");
  }
  if (plan.inCutOrder && !inDayOrder(packed, plan.boundaryColumns, query.sort[0]!.direction)) {
    ({ plan, packed } = await read({ ...reading, sortAgain: true }));
    if (packed === null) throw new Error("a packed page read again does not hold the values of its rows");
  }
  return { plan, packed };
}

/** The fields a packed page holds as whole numbers (packed-page.ts). */
const NUMERIC_FIELDS: ReadonlySet<string> = new Set([
  "impressions",
  "clicks",
  "conversions",
  "spend",
  "revenue",
]);

/**
 * A packed page's values (query-planner.ts `PlannedPackedPage`, packed-page.ts) cut into pages of
 * `pageSize`; null when a text value holds the separator (then the page is read `escaped`). Text
 * read on the way (the day and source currency money is converted with) is made strings; any other
 * text is kept as its bytes, written as they are by the GraphQL layer.
 */
function unpacked(
  packed: ResultTable,
  plan: PlannedPackedPage,
  pageSize: number,
  escaped: boolean,
): PackedColumns[] | null {
  const rowCount = Number(packed.value(0, 0) ?? 0);
  const text = packed.value(0, 1);
  if (rowCount === 0 || (typeof text !== "string" && !(text instanceof Uint8Array))) return [];
  const kinds = Array.from({ length: plan.width }, (_, column) => {
    if (NUMERIC_FIELDS.has(plan.fields[column] ?? "")) return PackedKind.Number;
    const readAsText = column === plan.boundaryColumns.date || column === plan.sourceCurrencyColumn;
    return readAsText ? PackedKind.Text : PackedKind.Utf8;
  });
  const bytes = typeof text === "string" ? Buffer.from(text) : text;
  return packedPages(bytes, rowCount, { kinds, pageSize, escaped });
}

/** The rows of a packed page: its day column is always read as values. */
function rowsOfPage(columns: PackedColumns, plan: PlannedPackedPage): number {
  return (columns[plan.boundaryColumns.date] as PackedValueList).length;
}

type PackedValueList = Exclude<PackedColumn, { utf8: Uint8Array }>;

/** Row `row` of a packed column as text. */
function packedText(column: PackedColumn, row: number): string {
  return Array.isArray(column) ? String(column[row]) : textValue(column, row);
}

/** Where the row `row` of a packed page stands in its sort (walk-memory.ts). */
function boundaryOf(columns: PackedColumns, plan: PlannedPackedPage, row: number): PageBoundary {
  return {
    keys: plan.sortKeyColumns.map((column) => packedText(columns[column]!, row)),
    recordId: packedText(columns[plan.boundaryColumns.recordId]!, row),
  };
}

/** Decimal places of ten-thousandths (`conversions`). */
const TEN_THOUSANDTHS = 4;

/**
 * The `RecordColumn`s of a packed page, one per field of the query, its own arrays reused (a page
 * is read once): text as read, whole numbers as read, stored amounts converted in place to the
 * target's minor units by `money`, which is only absent when no amount is selected. Only called
 * once the query's facts have found every rate it needs.
 */
function recordColumns(
  columns: PackedColumns,
  plan: PlannedPackedPage,
  query: RecordsQuery,
  money: MoneyConverter | null,
): RecordColumn[] {
  const rowCount = rowsOfPage(columns, plan);
  return query.fields.map((field) => {
    if (field === "currency") return { values: sameValues(query.currency, rowCount), places: 0 };
    const column = columns[plan.fields.indexOf(field)]!;
    if (!Array.isArray(column)) return column;
    const values: RecordValue[] = column;
    switch (field) {
      case "impressions":
      case "clicks":
      case "conversions":
        for (let row = 0; row < rowCount; row += 1)
          if (typeof values[row] !== "number") values[row] = Number(values[row]);
        return { values, places: field === "conversions" ? TEN_THOUSANDTHS : 0 };
      case "spend":
      case "revenue": {
        const days = columns[plan.boundaryColumns.date] as PackedValueList;
        const sources = columns[plan.sourceCurrencyColumn] as PackedValueList;
        for (let row = 0; row < rowCount; row += 1)
          values[row] = money?.convertMinor(values[row], sources[row] as string, days[row] as string) ?? null;
        return { values, places: money?.minorUnits ?? 0 };
      }
      case "date":
        return pageText(columns, plan.fields.indexOf(field)) ?? { values, places: 0 };
      default:
        return { values, places: 0 };
    }
  });
}

/** `sameValues`' arrays, by value and length: a page never changes its columns, so pages share them. */
const sameValueArrays = new Map<string, readonly RecordValue[]>();
/** Arrays `sameValues` keeps at most (a currency and page size each). */
const MAX_SAME_VALUE_ARRAYS = 64;

/** `count` times `value`, one array for every page of that length (a page's `currency` column). */
function sameValues(value: string, count: number): readonly RecordValue[] {
  const key = `${count} ${value}`;
  let values = sameValueArrays.get(key);
  if (values === undefined) {
    if (sameValueArrays.size >= MAX_SAME_VALUE_ARRAYS) sameValueArrays.clear();
    values = new Array<RecordValue>(count).fill(value);
    sameValueArrays.set(key, values);
  }
  return values;
}

/**
 * Column `column` of a packed page as text kept as the page's bytes (`Utf8Column`), when the page
 * keeps them: written as bytes, not from the strings read for money and boundaries.
 */
function pageText(columns: PackedColumns, column: number): Utf8Column | null {
  const kept = columns.find((candidate) => !Array.isArray(candidate));
  if (kept === undefined || Array.isArray(kept)) return null;
  return { utf8: kept.utf8, starts: kept.starts, stride: kept.stride, offset: column, plain: kept.plain };
}

/** What a walk knows before its first page: the count with its missing-rate verdict, rows per day. */
export interface WalkFacts {
  count: WalkCount;
  days: DayCount[];
}

/**
 * The stored FX rates a walk (or a rollup aggregate) of `range` converts and checks with: those
 * each calendar year of its days can use (`SqlDialect.fxRates`), read once per generation and year
 * (`WalkMemory`), so that a dashboard's next window or a sync's next range in the same years reads
 * none; or, when the snapshot's generation is not known for sure, those of `range`, read for this
 * page alone. Not the whole history: ECB's since 1999 (279 k rates) took 0.3 s to read, on the
 * first answer after every load. Read per range, each new window of a 90-day aggregate at scale
 * 600 spent 7–10 ms of its 25–35 ms reading rates (2026-11-26); a year takes 20–25 ms, once.
 */
function walkRates(
  reader: SnapshotReader,
  walks: WalkMemory,
  generation: string | null,
  range: { from: string; to: string },
): () => Promise<DayRates> {
  if (generation === null) {
    let history: Promise<DayRates> | undefined;
    return () => {
      history ??= readFxHistory(reader, range);
      return history;
    };
  }
  return async () => {
    const years = calendarYears(range);
    const histories = await Promise.all(
      years.map((year) => walks.fxHistory(generation, year, () => readFxHistory(reader, year))),
    );
    return histories.length === 1
      ? histories[0]!
      : new YearlyRates(new Map(years.map((year, index) => [year.from.slice(0, 4), histories[index]!])));
  };
}

/** The calendar years `range` spans, each as its own range of days. */
function calendarYears(range: { from: string; to: string }): { from: string; to: string }[] {
  const years: { from: string; to: string }[] = [];
  for (let year = Number(range.from.slice(0, 4)); year <= Number(range.to.slice(0, 4)); year += 1) {
    const digits = String(year).padStart(4, "0");
    years.push({ from: `${digits}-01-01`, to: `${digits}-12-31` });
  }
  return years;
}

/**
 * A walk's facts, read once (and kept in `walk` when there is one): one statement counts the rows
 * per day and source currency; the missing-rate verdict is the count query's own
 * (query-planner.ts `missingRateSample`): of the (currency, day) pairs whose conversion lacks a
 * rate, the least `CUR YYYY-MM-DD`, naming the source currency when its rate lacks, else the
 * target.
 */
export async function walkFacts(
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
 * `query` with its range cut to the days `rows` rows after `after` can span (walk-memory.ts
 * `pageDays`), or null when it is not cut. Only a read that starts at a known place is narrowed:
 * page 1, or after a served page; any other page is read by its offset over the whole range.
 */
function narrowToPage(
  query: RecordsQuery,
  days: readonly DayCount[],
  after: PageBoundary | null,
  rows: number,
): RecordsQuery | null {
  if (after === null && query.page.page !== 1) return null;
  const span = pageDays(days, query.sort[0]!.direction, after, rows);
  return span === null ? null : { ...query, scope: { ...query.scope, ...span } };
}

/** The stored FX rates the days of `range` can use (query-planner.ts `planFxRates`). */
export async function readFxHistory(
  reader: SnapshotReader,
  range: { from: string; to: string },
): Promise<DayRates> {
  const table = await reader.run(planFxRates(reader.dialect, range));
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
  const rates = withMoney ? await walkRates(reader, walks, await reader.generation(), query.scope)() : null;
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

export function missingRateError(missing: MissingRate): MissingFxRateError {
  return new MissingFxRateError(missing.currency, missing.date);
}
