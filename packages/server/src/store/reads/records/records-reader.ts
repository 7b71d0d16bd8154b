/**
 * How a records page is read, whatever the engine: its walk's facts, its rows (records-plan.ts),
 * their columns and the data version, all inside one read snapshot the engine provides. Each
 * engine supplies only how to run a planned statement on its snapshot (model/engine.ts
 * `SnapshotReader`).
 */
import type { ResultTable, SnapshotReader } from "../../model/engine.js";
import { type RecordsQuery, sortedByDayAlone } from "../../model/query-request.js";
import {
  type RecordColumn,
  type RecordsPage,
  type RecordValue,
  textValue,
  type Utf8Column,
} from "../../model/store.js";
import { missingRateError } from "../../model/store-errors.js";
import { type DayRates, MoneyConverter } from "../../sql/record-money.js";
import { walkRates } from "../fx-rates/fx-rates-reader.js";
import { readDataVersion } from "../versions/versions-reader.js";
import {
  type DayCount,
  type PageBoundary,
  pageDays,
  rememberBoundary,
  type Walk,
  type WalkCount,
  type WalkMemory,
} from "../walk-memory.js";
import { inDayOrder, type PackedColumn, type PackedColumns, PackedKind, packedPages } from "./packed-page.js";
import {
  type PackedReading,
  type PagePosition,
  type PlannedPackedPage,
  planPackedRecordsPage,
  planRecordsDayCurrencies,
  recordsNeedRates,
} from "./records-plan.js";

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
 * A packed page's values (reads/records/records-plan.ts `PlannedPackedPage`, packed-page.ts) cut into pages of
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
 * A walk's facts, read once (and kept in `walk` when there is one): one statement counts the rows
 * per day and source currency; the missing-rate verdict is the count query's own
 * (reads/aggregate/aggregate-plan.ts `missingRateSample`): of the (currency, day) pairs whose conversion lacks a
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
