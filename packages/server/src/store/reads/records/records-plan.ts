/**
 * The plans of `marketingRecords` (SQL text only; records-reader.ts runs them): a page of any sort
 * and filter, packed or as rows, and the rows per day and source currency a walk learns first.
 * Values never enter the SQL text (sql/statement.ts `Statement.bind`); only identifiers and
 * expressions chosen from closed lists do.
 *
 * Money (CONTRACT §3 rule 7) is integer arithmetic so that every engine returns the same numbers:
 * amounts are stored in ten-thousandths (`*_e4`), rates in millionths per EUR (`rate_e6`).
 * - A record's amount in currency T is amount × rate(T) ÷ rate(source), rounded half-even to T's
 *   minor unit directly from the exact quotient.
 * - An aggregate converts each row exactly — rows of one source currency and day share a rate, so
 *   their sum is converted at once, to 10⁻⁸ (half-even) — sums, then rounds the sum half-even to
 *   T's minor unit.
 * The rate of a day is that day's rate, else the latest earlier one; EUR's rate is 1.
 *
 * The SQL is written once for every engine; what differs (placeholders, date functions, the
 * wide integer type, the per-day rate table) comes from a `SqlDialect`.
 */
import type { PlannedPage, PlannedSql, SqlDialect } from "../../model/engine.js";
import {
  type RecordField,
  type RecordSortField,
  type RecordsQuery,
  type SortBoundary,
  sortedByDayAlone,
} from "../../model/query-request.js";
import { dayRatesCte, MONEY_COLUMNS, rateJoins, targetOf } from "../../sql/money-conversion.js";
import { recordColumn } from "../../sql/record-columns.js";
import { rowSourceOf, whereClause } from "../../sql/row-scope.js";
import { pastBoundary, recordSortKey } from "../../sql/sort-boundary.js";
import { rowCount, Statement } from "../../sql/statement.js";

/**
 * Where a records page starts: after `after` (the previous page's boundary, under any sort: the
 * engine reads no earlier row, a Top-N without an offset) or, without one, at the page's offset.
 */
export interface PagePosition {
  after: SortBoundary | null;
  /** Rows to read: the page's size unless more are read ahead (`planPackedRecordsPage`). */
  rows?: number;
  /**
   * Whether the query's days are those the rows read span, and no more (reads/records/records-reader.ts
   * `narrowToPage`, a sort by the day alone): a packed page then writes each row's line before
   * the cut (`planPackedRecordsPage`).
   */
  spansRows?: boolean;
}

/**
 * A planned records page: after the fields' columns, each row's day and record id (the page's
 * boundary is its last row's), source currency and sort keys, each where a field does not already
 * hold it. Its `spend` and `revenue` columns hold the
 * stored amounts (ten-thousandths, source currency), converted by the caller with the FX history
 * (record-money.ts, the one place output money is converted): the page reads no rate table, nor
 * does wide arithmetic per row, unless it is sorted by money.
 */
export interface PlannedRecordsPage extends PlannedPage {
  boundaryColumns: { date: number; recordId: number };
  sourceCurrencyColumn: number;
  /** Each sort key's column, as boundary text (`SortBoundary.keys`). */
  sortKeyColumns: number[];
  /** How many columns a row has: a value a field holds is not repeated for the boundary. */
  width: number;
}

/** Whether a records query reads money: it converts, and its count checks every rate it needs. */
export function recordsNeedRates(query: RecordsQuery): boolean {
  return (
    query.fields.includes("spend") ||
    query.fields.includes("revenue") ||
    query.sort.some((entry) => entry.field === "SPEND" || entry.field === "REVENUE")
  );
}

/** Stored columns each record field reads (the page is cut before anything is computed). */
const RECORD_SOURCE_COLUMNS: Record<RecordField, readonly string[]> = {
  recordId: ["record_id"],
  date: ["date"],
  market: ["market"],
  dataSource: ["data_source"],
  channel: ["channel"],
  campaignId: ["campaign_id"],
  campaignName: ["campaign_name"],
  impressions: ["impressions"],
  clicks: ["clicks"],
  spend: ["spend_e4", "currency"],
  conversions: ["conversions_e4"],
  revenue: ["revenue_e4", "currency"],
  currency: [],
};

/**
 * Plans one page of `marketingRecords` as rows, for every sort: the inner query cuts the page
 * (Top-N over the matching rows, reading only the columns needed and the sort keys), the outer
 * query formats just the page's rows. Money is converted in SQL only as a sort key; the output's
 * amounts are the stored ones (`PlannedRecordsPage`). Converting the output in JavaScript instead
 * measured 0.46–1.08× the time of converting it in SQL (docs/architecture.md, "Money"). The bulk
 * export streams these rows; GraphQL pages read them packed (`planPackedRecordsPage`).
 */
export function planRecordsPage(
  query: RecordsQuery,
  dialect: SqlDialect,
  position: PagePosition,
): PlannedRecordsPage {
  const page = pageStatement(query, dialect, position);
  const columns = page.columns.map((column) => column.row);
  const select = columns.map((expression, index) => `${expression} AS c${index}`).join(", ");
  return {
    sql: `WITH ${page.ctes} SELECT ${select} FROM page r ORDER BY ${page.orderBy}`,
    params: page.statement.params,
    ...page.layout,
  };
}

/**
 * A planned records page packed into one row of two columns: how many rows it read and every
 * value of those rows as one text, in the page's order, row after row, each value in the layout of
 * `PlannedRecordsPage` and parted by `PACKED_VALUE_SEPARATOR`; whole numbers (impressions, clicks,
 * conversions in ten-thousandths, amounts) are their stored integers' digits. Every column is NOT
 * NULL, so a text holding the separator shows as more values than the rows make: loads refuse
 * control characters, and only then is the page read again `escaped` (`PACKED_ESCAPE`, each text
 * value escaped in SQL, which costs a walk's pages a tenth more when done for every page).
 */
export interface PlannedPackedPage extends PlannedRecordsPage {
  /**
   * Whether its rows are joined in the order the cut hands them rather than sorted again (a page
   * sorted by the day alone over the days it spans: `PackedReading.sortAgain`). The engine does not
   * promise that order, though the cut's rows are read by one thread: the reader checks it
   * (packed-page.ts `inDayOrder`) and reads the page again sorted when it does not hold.
   */
  inCutOrder: boolean;
}

/** How a packed page is read (`planPackedRecordsPage`). */
export interface PackedReading {
  /** Each text value escaped (`PACKED_ESCAPE`): a text value holds the separator. */
  escaped?: boolean;
  /** The rows sorted again as they are joined, as they are under any other sort. */
  sortAgain?: boolean;
}

/**
 * Plans `position.rows` rows (default: one page) of `marketingRecords` under any sort, packed
 * (`PlannedPackedPage`): the engine hands back one value instead of a value per row and field,
 * which is what pages cost most in the drivers (a DuckDB text value read by the driver costs about
 * a microsecond, and a row holds a dozen), and the rows after the page asked are a walk's next
 * pages (read-ahead, page-cache.ts).
 */
export function planPackedRecordsPage(
  query: RecordsQuery,
  dialect: SqlDialect,
  position: PagePosition,
  { escaped = false, sortAgain = false }: PackedReading = {},
): PlannedPackedPage {
  const lineOf = (columns: readonly PageColumn[]): string =>
    `concat_ws(chr(1), ${columns.map((column) => (escaped && column.text ? packedText(column.packed) : column.packed)).join(", ")})`;
  // Each row's values joined before the aggregate, which then sorts one text per row by its keys:
  // joined inside it, DuckDB sorted every column of the row and joined them after, a fifth more
  // of the statement (scale 30, 10,000 rows, one thread: 24–29 ms against 19–20). When the days
  // read hold little more than the rows asked, the line is written before the cut too, which then
  // sorts it in place of the row's columns: 15.5 → 13.9 ms of CPU (the same statement, 2026-11-29,
  // the same bytes). Over a whole range (another sort, a page at its offset) it is not: each of
  // its rows would be joined, not only the page's. The lines are then joined in the cut's order,
  // not sorted again by DuckDB, which copies every line into its sort (13.9 → 9.1 ms).
  const lineBeforeCut = position.spansRows === true && sortedByDayAlone(query);
  const page = pageStatement(query, dialect, position, lineBeforeCut ? lineOf : null);
  const lines = lineBeforeCut
    ? "page"
    : `(SELECT ${lineOf(page.columns)} AS line, ${page.orderKeys.join(", ")} FROM page r)`;
  const inCutOrder = lineBeforeCut && !sortAgain;
  // Read again sorted, on either engine: PostgreSQL's `aggregateInOrder` trusts its subquery's order.
  const joined = inCutOrder
    ? "string_agg(p.line, chr(1))"
    : sortAgain
      ? `string_agg(p.line, chr(1) ORDER BY ${page.orderIn("p.")})`
      : dialect.aggregateInOrder("p.line", "chr(1)", page.orderIn("p."));
  return {
    sql: `WITH ${page.ctes} SELECT count(*) AS n, ${dialect.utf8(joined)} AS packed FROM ${lines} p`,
    params: page.statement.params,
    ...page.layout,
    inCutOrder,
  };
}

/** A page's output column: its expression as a row's value, and as a packed value. */
interface PageColumn {
  row: string;
  packed: string;
  /** Whether it is stored text (escaped in an `escaped` packed page). */
  text?: boolean;
}

/** A text column packed: the escape character, then the separator, escaped (`PACKED_ESCAPE`). */
function packedText(expression: string): string {
  return `replace(replace(${expression}, chr(2), chr(2) || 'b'), chr(1), chr(2) || 'a')`;
}

/** The output column of a record field other than currency. */
function pageColumn(field: Exclude<RecordField, "currency">, dialect: SqlDialect): PageColumn {
  switch (field) {
    case "spend":
    case "revenue":
      return { row: `r.${MONEY_COLUMNS[field]}`, packed: `r.${MONEY_COLUMNS[field]}` };
    case "impressions":
    case "clicks":
      return { row: recordColumn(field, dialect), packed: `r.${field}` };
    case "conversions":
      return { row: recordColumn(field, dialect), packed: "r.conversions_e4" };
    case "date":
      return { row: recordColumn(field, dialect), packed: recordColumn(field, dialect) };
    default:
      return { row: recordColumn(field, dialect), packed: recordColumn(field, dialect), text: true };
  }
}

/**
 * What both forms of a records page share: the page CTE (Top-N of the rows past `after`, or at the
 * page's offset), its order, and its output columns in the layout of `PlannedRecordsPage`. Given
 * `lineOf`, the CTE holds each row's packed line (`planPackedRecordsPage`) in place of its columns.
 */
function pageStatement(
  query: RecordsQuery,
  dialect: SqlDialect,
  position: PagePosition,
  lineOf: ((columns: readonly PageColumn[]) => string) | null = null,
) {
  const target = targetOf(query.currency);
  const statement = new Statement(dialect);
  const selectsMoney = query.fields.includes("spend") || query.fields.includes("revenue");
  const sortsByMoney = query.sort.some((entry) => entry.field === "SPEND" || entry.field === "REVENUE");
  const ctes: string[] = sortsByMoney ? [dayRatesCte(query.scope, statement)] : [];
  const sourceColumns = new Set(["record_id", "date"]);
  for (const field of query.fields)
    for (const column of RECORD_SOURCE_COLUMNS[field]) sourceColumns.add(column);
  const sortKeys = query.sort.map((entry, index) => ({
    expression: `${recordSortKey(entry.field, target, dialect)} AS k${index}`,
    direction: entry.direction,
  }));
  const innerJoins = sortsByMoney ? rateJoins(target, statement) : "";
  let where = whereClause(query.scope, statement);
  const { after } = position;
  if (after) where += ` AND ${pastBoundary(query.sort, after, target, statement)}`;
  // Qualified keys (`r.k0`) in the outer ORDER BY: a bare name could resolve to an output alias.
  const orderBy = (qualifier: string, idQualifier = "r.") =>
    [
      ...sortKeys.map((key, index) => `${qualifier}k${index} ${key.direction}`),
      `${idQualifier}record_id ASC`,
    ].join(", ");
  const columns: PageColumn[] = [];
  const fields: string[] = [];
  for (const field of query.fields) {
    if (field === "currency") continue;
    fields.push(field);
    columns.push(pageColumn(field, dialect));
  }
  if (columns.length === 0) {
    columns.push(pageColumn("recordId", dialect));
    fields.push("recordId");
  }
  // A value a field already holds (the day, the record id, a day sort's key) is not read twice.
  const columnOf = (column: PageColumn): number => {
    const index = columns.findIndex((held) => held.packed === column.packed);
    return index === -1 ? columns.push(column) - 1 : index;
  };
  const day = dialect.formatDate("r.date");
  const boundaryColumns = {
    date: columnOf({ row: day, packed: day }),
    recordId: columnOf({ row: "r.record_id", packed: "r.record_id", text: true }),
  };
  const sourceCurrencyColumn = columnOf(
    selectsMoney ? { row: "r.currency", packed: "r.currency", text: true } : { row: "NULL", packed: "''" },
  );
  const sortKeyColumns = query.sort.map((entry, index) => {
    // The day sort's key is the row's day (`r.k` is `r.date`).
    const text = entry.field === "DATE_DAY" ? day : sortKeyText(entry.field, `r.k${index}`, dialect);
    return columnOf({ row: text, packed: text, text: TEXT_SORT_FIELDS.has(entry.field) });
  });
  // The page's rows: their stored columns and sort keys, or, given `lineOf`, each row's packed
  // line (over the stored columns: no value of it reads a sort key) and the keys it is sorted by.
  const innerSelect = lineOf
    ? [`${lineOf(columns)} AS line`, ...sortKeys.map((key) => key.expression), "r.record_id"]
    : [...[...sourceColumns].map((column) => `r.${column}`), ...sortKeys.map((key) => key.expression)];
  const { page, pageSize } = query.page;
  const limit = lineOf
    ? dialect.spanLimit(rowCount(position.rows ?? pageSize))
    : rowCount(position.rows ?? pageSize);
  const offset = rowCount(after ? 0 : (page - 1) * pageSize);
  ctes.push(`page AS (SELECT ${innerSelect.join(", ")} FROM records r ${innerJoins} WHERE ${where}
    ORDER BY ${orderBy("")} LIMIT ${limit} OFFSET ${offset})`);
  return {
    ctes: ctes.join(",\n"),
    orderBy: orderBy("r."),
    /** The page's order over a query of `page r` that selects `orderKeys`, qualified anew. */
    orderIn: (qualifier: string) => orderBy(qualifier, qualifier),
    orderKeys: [...sortKeys.map((_, index) => `r.k${index}`), "r.record_id"],
    statement,
    columns,
    layout: { fields, boundaryColumns, sourceCurrencyColumn, sortKeyColumns, width: columns.length },
  };
}

/** Sort fields whose keys are stored text (their boundary text is packed escaped). */
const TEXT_SORT_FIELDS: ReadonlySet<RecordSortField> = new Set([
  "MARKET",
  "DATA_SOURCE",
  "CHANNEL",
  "CAMPAIGN_ID",
]);

/** A sort key's value (`key`, the inner query's `k` column) as the text a boundary holds. */
function sortKeyText(field: RecordSortField, key: string, dialect: SqlDialect): string {
  switch (field) {
    case "DATE_DAY":
      return dialect.formatDate(key);
    case "MARKET":
    case "DATA_SOURCE":
    case "CHANNEL":
    case "CAMPAIGN_ID":
      return key;
    default:
      return `CAST(${key} AS VARCHAR)`;
  }
}

/**
 * Plans the rows of a records query per day and source currency, as (day `YYYY-MM-DD`, currency,
 * rows) in day order: what a walk learns once before its first page (reads/records/records-reader.ts
 * `walkFacts`): its count, the few days each keyset page spans (walk-memory.ts `pageDays`), and
 * which (currency, day) conversions it needs a rate for.
 */
export function planRecordsDayCurrencies(query: RecordsQuery, dialect: SqlDialect): PlannedSql {
  const statement = new Statement(dialect);
  const where = whereClause(query.scope, statement);
  const source = rowSourceOf(query.scope, false);
  return {
    sql: `SELECT ${dialect.formatDate("r.date")} AS day, r.currency, ${source.count} AS n
      FROM ${source.table} r WHERE ${where} GROUP BY r.date, r.currency ORDER BY r.date`,
    params: statement.params,
  };
}
