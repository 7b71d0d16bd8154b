/**
 * The query planner: turns a validated request into parameterised SQL. Values never enter the
 * SQL text; only identifiers and expressions chosen from closed lists here do.
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
import { isDateDimension, RECORD_FIELDS } from "@mdq/contract";
import { BASE_CURRENCY, CURRENCIES, CURRENCY_CODES, type CurrencyCode } from "../currencies.js";
import { brandVersionColumn } from "./data-versions.js";
import type {
  AggregateQuery,
  AggregateSortField,
  Dimension,
  Metric,
  RecordField,
  RecordSortField,
  RecordsQuery,
  RowScope,
  SortEntry,
} from "./query-request.js";
import { ROLLUP_TABLE, rollupSum } from "./record-rollup.js";
import { currencyLiteral, type SqlDialect } from "./sql-dialect.js";
import { sortedByDayAlone } from "./walk-memory.js";

/** SQL text with its positional parameters (`?` or `$n`, per dialect). */
export interface PlannedSql {
  sql: string;
  params: (string | number | bigint)[];
}

/** A planned page query: the SQL and, per leading result column, the GraphQL field it fills. */
export interface PlannedPage extends PlannedSql {
  fields: string[];
}

/**
 * Where a records page ended in its sort order: its last row's sort keys, as text (`sortKeyText`:
 * a day as `YYYY-MM-DD`, a number as its integer digits, money as the converted minor units the
 * engine ordered by), and its record id, the final tie-break.
 */
export interface SortBoundary {
  keys: string[];
  recordId: string;
}

/**
 * Where a records page starts: after `after` (the previous page's boundary, under any sort: the
 * engine reads no earlier row, a Top-N without an offset) or, without one, at the page's offset.
 */
export interface PagePosition {
  after: SortBoundary | null;
  /** Rows to read: the page's size unless more are read ahead (`planPackedRecordsPage`). */
  rows?: number;
  /**
   * Whether the query's days are those the rows read span, and no more (page-reads.ts
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

/**
 * A planned aggregate page: after the fields' columns, two that every row repeats (window
 * functions, so the page needs no second round trip): the number of groups, and of rows whose
 * conversion lacks a rate.
 */
export interface PlannedAggregatePage extends PlannedPage {
  windowColumns: { totalCount: number; missingRateRows: number };
}

/**
 * A planned count, one row of three columns: `total` rows (or groups), then the currency and the
 * day (`YYYY-MM-DD`) of a sample conversion lacking a rate, both NULL when none lacks one.
 */
export type PlannedCount = PlannedSql;

/** A planned read of the data version: one row, one column (how many loads touched the range). */
export type PlannedDataVersion = PlannedSql;

/** The parameters of one statement being planned, and the dialect it is written in. */
class Statement {
  readonly params: PlannedSql["params"] = [];

  constructor(readonly dialect: SqlDialect) {}

  /** Adds a parameter and returns its placeholder; call in the order placeholders appear. */
  bind = (value: string | number | bigint): string => {
    this.params.push(value);
    return this.dialect.placeholder(this.params.length);
  };
}

/**
 * A LIMIT's or OFFSET's row count written into the statement, never bound: DuckDB turns ORDER BY +
 * LIMIT into a Top-N only when both are constants (`TopN::CanOptimize`). DuckDB 1.5 binds a
 * prepared statement's parameters as constants, so a bound count gets a Top-N too (`EXPLAIN
 * EXECUTE`, 2026-11-29); a limit that is not a constant, `(SELECT n)`, gets a whole sort
 * (`SqlDialect.spanLimit`). A count is a whole number the request's validation bounded.
 */
function rowCount(rows: number): string {
  if (!Number.isSafeInteger(rows) || rows < 0) throw new Error(`not a row count: ${rows}`);
  return String(rows);
}

const MONEY_COLUMNS = { spend: "spend_e4", revenue: "revenue_e4" } as const;
const METRIC_COLUMNS: Record<Metric, string> = {
  IMPRESSIONS: "impressions",
  CLICKS: "clicks",
  SPEND: "spend_e4",
  CONVERSIONS: "conversions_e4",
  REVENUE: "revenue_e4",
};
const MONEY_METRICS: ReadonlySet<Metric> = new Set(["SPEND", "REVENUE"]);
/** The record fields in the schema's order (the export's columns). */
const RECORD_FIELD_ORDER: readonly RecordField[] = RECORD_FIELDS;

/** The grouping expression of a dimension (a DATE for the date dimensions). */
function dimensionGroup(dimension: Dimension, dialect: SqlDialect): string {
  switch (dimension) {
    case "DATE_DAY":
      return "r.date";
    case "DATE_WEEK":
      return dialect.weekStart("r.date");
    case "DATE_MONTH":
      return dialect.monthStart("r.date");
    case "MARKET":
      return "r.market";
    case "DATA_SOURCE":
      return "r.data_source";
    case "CHANNEL":
      return "r.channel";
    case "CAMPAIGN_ID":
      return "r.campaign_id";
  }
}

/** Builds the WHERE clause restricting rows to the brand, the range, the grants and the filter. */
function whereClause(scope: RowScope, statement: Statement): string {
  const { bind } = statement;
  const conditions = [
    `r.brand_id = ${bind(scope.brandId)}`,
    `r.date BETWEEN CAST(${bind(scope.from)} AS DATE) AND CAST(${bind(scope.to)} AS DATE)`,
  ];
  const inList = (column: string, values: string[]) => {
    // No grants means no rows (rule 1), and an empty list is not SQL.
    if (values.length === 0) {
      conditions.push("FALSE");
      return;
    }
    conditions.push(statement.dialect.oneOf(column, values.map(bind)));
  };
  inList("r.market", scope.markets);
  inList("r.data_source", scope.dataSources);
  if (scope.channels) inList("r.channel", scope.channels);
  if (scope.campaignIds) inList("r.campaign_id", scope.campaignIds);
  return conditions.join(" AND ");
}

/**
 * Where a plan reads rows of the scope from: the records, or the record rollup (record-rollup.ts)
 * when nothing it reads names a campaign or a record, for it holds every other column of the
 * records summed per (brand, day, market, data source, channel, currency). Both have the columns
 * `whereClause` and the dimensions read; `count` counts the records its rows stand for, `sum`
 * sums a stored column of theirs (a wide integer) over its rows `r`.
 */
interface RowSource {
  table: string;
  count: string;
  sum(column: string, dialect: SqlDialect): string;
}

const RECORDS: RowSource = { table: "records", count: "count(*)", sum: (column) => `sum(r.${column})` };
const ROLLUP: RowSource = { table: ROLLUP_TABLE, count: "sum(r.rows)", sum: rollupSum };

/**
 * The source of a plan over `scope`: the rollup unless the scope filters campaigns or the plan
 * reads a campaign or record column (`readsRecords`). The one place that decides it.
 */
function rowSourceOf(scope: RowScope, readsRecords: boolean): RowSource {
  return readsRecords || scope.campaignIds !== null ? RECORDS : ROLLUP;
}

/** The source of an aggregate's rows: the records when it groups by campaign. */
function aggregateSource(query: AggregateQuery): RowSource {
  return rowSourceOf(query.scope, query.groupBy.includes("CAMPAIGN_ID"));
}

/** The currency a plan converts to: checked once, before any of its SQL is written. */
interface Target {
  code: CurrencyCode;
  /** The code as a SQL literal (sql-dialect.ts `currencyLiteral`, the one check). */
  literal: string;
  minorUnits: number;
}

function targetOf(code: CurrencyCode): Target {
  const literal = currencyLiteral(code);
  return { code, literal, minorUnits: CURRENCIES[code].minorUnits };
}

/** Currencies quoted against the base: every supported one but EUR (whose rate is 1 by definition). */
const RATED_CURRENCIES = CURRENCY_CODES.filter((code) => code !== BASE_CURRENCY);

/**
 * The per-day rate table for the range: every supported currency, each day carrying the latest
 * rate on or before it (NULL before its first), plus EUR at 1.
 */
function dayRatesCte(scope: RowScope, statement: Statement): string {
  return `day_rates AS (${statement.dialect.dayRates(statement.bind, scope, BASE_CURRENCY, RATED_CURRENCIES)}
  )`;
}

/** Joins of each row to its source-currency rate (`s`) and the target currency's rate (`t`). */
function rateJoins(target: Target, statement: Statement): string {
  return `LEFT JOIN day_rates s ON s.currency = r.currency AND s.day = r.date
    LEFT JOIN day_rates t ON t.currency = ${statement.bind(target.code)} AND t.day = r.date`;
}

/**
 * Whether a row's conversion of `column` stays inside BIGINT in `div_half_even(n, d)`: n, the
 * amount × the target rate × `scale`, under 9 × 10¹⁸ (judged from doubles, so the test itself
 * cannot overflow, with room for their rounding below 2⁶³), and d, the source rate × at most 10⁴,
 * under 4 × 10¹⁸ (the macro doubles a remainder below d). Rates are positive (schema); amounts are
 * too by the load rules, but the test does not rely on it.
 */
function fitsBigint(column: string, scale: number, dialect: SqlDialect): string {
  const double = dialect.double;
  return `abs(CAST(r.${column} AS ${double})) * t.rate_e6 < CAST(${9e18 / scale} AS ${double})
    AND s.rate_e6 < ${4e18 / 10_000}`;
}

/**
 * `div_half_even(n, d)` of a converted amount: on BIGINT where the row's values allow it
 * (`fitsBigint`: nearly every row), else on the dialect's wide integer, with the same
 * exact result. The wide types are several times slower a row: DuckDB's HUGEINT divides in
 * software (a 94,500-row export's SELECT took 375 ms on HUGEINT, 121 ms on BIGINT), PostgreSQL's
 * `numeric` is arbitrary precision (about 1.2 µs a row more).
 */
function convertedDivision(
  column: string,
  scale: number,
  n: (value: string, rate: string) => string,
  d: (rate: string) => string,
  dialect: SqlDialect,
): string {
  const wide = dialect.wideInteger;
  return `CASE WHEN ${fitsBigint(column, scale, dialect)}
      THEN div_half_even(${n(`r.${column}`, "t.rate_e6")}, ${d("s.rate_e6")})
      ELSE div_half_even(${n(`CAST(r.${column} AS ${wide})`, "t.rate_e6")}, ${d(`CAST(s.rate_e6 AS ${wide})`)}) END`;
}

/** The record's amount converted to the target currency, in minor units (exact, half-even). */
function convertedMinor(column: string, target: Target, dialect: SqlDialect): string {
  const toMinor = 10 ** (4 - target.minorUnits);
  const converted = convertedDivision(
    column,
    1,
    (value, rate) => `${value} * ${rate}`,
    (rate) => `${rate} * ${toMinor}`,
    dialect,
  );
  // A stored amount (at most 10¹⁸ ten-thousandths) divides on BIGINT as it is.
  return `CASE WHEN r.currency = ${target.literal} THEN div_half_even(r.${column}, ${toMinor})
    ELSE ${converted} END`;
}

/** The record's amount converted to the target currency in 10⁻⁸ units (exact, half-even). */
function convertedE8(column: string, target: Target, dialect: SqlDialect): string {
  const converted = convertedDivision(
    column,
    10_000,
    (value, rate) => `${value} * ${rate} * 10000`,
    (rate) => rate,
    dialect,
  );
  return `CASE WHEN r.currency = ${target.literal} THEN CAST(r.${column} AS ${dialect.wideInteger}) * 10000
    ELSE ${converted} END`;
}

/** Condition true for a row whose conversion lacks a rate. */
function missingRate(target: Target): string {
  return `(r.currency <> ${target.literal} AND (s.rate_e6 IS NULL OR t.rate_e6 IS NULL))`;
}

/**
 * The aggregate finding a sample missing rate: the first `CUR YYYY-MM-DD` (the currency lacking
 * a rate, the day) in text order. `countColumns` splits it into typed columns at fixed places:
 * every code is three letters (`currencyLiteral` and the closed list of stored codes).
 */
function missingRateSample(target: Target, dialect: SqlDialect): string {
  return `min(CASE WHEN ${missingRate(target)}
    THEN (CASE WHEN s.rate_e6 IS NULL THEN r.currency ELSE ${target.literal} END) || ' ' || ${dialect.formatDate("r.date")} END)`;
}

/** The count's columns over a subquery yielding `total` and the missing-rate `sample`. */
function countColumns(counted: string): string {
  return `SELECT total, substr(sample, 1, 3) AS missing_currency, substr(sample, 5) AS missing_day
    FROM (${counted}) counted`;
}

/** The count's missing-rate columns when a count does not check rates. */
const NO_MISSING_RATE = "CAST(NULL AS VARCHAR) AS missing_currency, CAST(NULL AS VARCHAR) AS missing_day";

function money(minorExpression: string, target: Target, dialect: SqlDialect): string {
  const minorUnits = target.minorUnits;
  return `CAST(${minorExpression} AS ${dialect.double}) / ${10 ** minorUnits}`;
}

/** The output expression of a record field other than money and currency. */
function recordColumn(
  field: Exclude<RecordField, "spend" | "revenue" | "currency">,
  dialect: SqlDialect,
): string {
  switch (field) {
    case "recordId":
      return "r.record_id";
    case "date":
      return dialect.formatDate("r.date");
    case "market":
      return "r.market";
    case "dataSource":
      return "r.data_source";
    case "channel":
      return "r.channel";
    case "campaignId":
      return "r.campaign_id";
    case "campaignName":
      return "r.campaign_name";
    case "impressions":
      return `CAST(r.impressions AS ${dialect.double})`;
    case "clicks":
      return `CAST(r.clicks AS ${dialect.double})`;
    case "conversions":
      return `CAST(r.conversions_e4 AS ${dialect.double}) / 10000`;
  }
}

/** The sort key of a record sort field: stored columns, so that an index can serve the order. */
function recordSortKey(field: RecordSortField, target: Target, dialect: SqlDialect): string {
  switch (field) {
    case "DATE_DAY":
    case "MARKET":
    case "DATA_SOURCE":
    case "CHANNEL":
    case "CAMPAIGN_ID":
      return dimensionGroup(field, dialect);
    case "IMPRESSIONS":
      return "r.impressions";
    case "CLICKS":
      return "r.clicks";
    case "CONVERSIONS":
      return "r.conversions_e4";
    case "SPEND":
      return convertedMinor(MONEY_COLUMNS.spend, target, dialect);
    case "REVENUE":
      return convertedMinor(MONEY_COLUMNS.revenue, target, dialect);
  }
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

/** Separates the values of a packed records page (`planPackedRecordsPage`). */
export const PACKED_VALUE_SEPARATOR = "\u0001";
/** Escapes, in a packed page's text values, U+0002 (as U+0002 `b`) and the separator (U+0002 `a`). */
export const PACKED_ESCAPE = "\u0002";

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

/** A boundary's text of a sort key bound back as the key's type. */
function sortKeyValue(field: RecordSortField, placeholder: string, dialect: SqlDialect): string {
  switch (field) {
    case "DATE_DAY":
      return `CAST(${placeholder} AS DATE)`;
    case "MARKET":
    case "DATA_SOURCE":
    case "CHANNEL":
    case "CAMPAIGN_ID":
      return `CAST(${placeholder} AS VARCHAR)`;
    case "SPEND":
    case "REVENUE":
      return `CAST(${placeholder} AS ${dialect.wideInteger})`;
    default:
      return `CAST(${placeholder} AS BIGINT)`;
  }
}

/**
 * Rows after `boundary` in the order of `sort` (each key in its direction, then record id
 * ascending): past the first key, or equal to it and past the rest, and so on. The plain bound of
 * the first key comes first so that the engine can prune by it (zone maps, an index range).
 */
function pastBoundary(
  sort: readonly SortEntry<RecordSortField>[],
  boundary: SortBoundary,
  target: Target,
  statement: Statement,
): string {
  const { bind, dialect } = statement;
  const keys = sort.map((entry, index) => ({
    expression: recordSortKey(entry.field, target, dialect),
    value: () => sortKeyValue(entry.field, bind(boundary.keys[index]!), dialect),
    ...(entry.direction === "DESC" ? { inclusive: "<=", strict: "<" } : { inclusive: ">=", strict: ">" }),
  }));
  // Placeholders are bound in the order they appear in the text (template parts evaluate in order).
  const past = (index: number): string => {
    const key = keys[index];
    if (key === undefined) return `r.record_id > ${bind(boundary.recordId)}`;
    return `(${key.expression} ${key.strict} ${key.value()} OR (${key.expression} = ${key.value()} AND ${past(index + 1)}))`;
  };
  const first = keys[0]!;
  return `${first.expression} ${first.inclusive} ${first.value()} AND ${past(0)}`;
}

/**
 * A planned export read (`planRecordsExport`): every record field as a column named for it, in
 * `RECORD_FIELDS` order, money converted in SQL.
 */
export type PlannedExport = PlannedSql;

/** Where an export window's rows begin and end in its range's order (record-export.ts `exportWindows`). */
export interface ExportPosition {
  /** The last row a previous response delivered, when resuming; null otherwise. */
  after: SortBoundary | null;
  /** Rows to pass over first (after `after`). */
  skip: number;
  /** The most rows to read; null for all. */
  take: number | null;
}

/**
 * Plans the bulk export's rows of `scope` (CONTRACT §7), ascending by (day, record id), after
 * `position.after` when resuming, `position.skip` rows on, at most `position.take`: one column
 * per `MarketingRecord` field, named for it (`date` as `YYYY-MM-DD`, counts as BIGINT,
 * `conversions` and the amounts as the doubles GraphQL serves, the amounts converted as
 * `marketingRecords` converts them: `convertedMinor`, half-even to the minor unit, then ÷ 10^minor
 * units in a double, as record-money.ts does in JavaScript). The engines write these rows
 * themselves (store/export/export-sql.ts), but for a text export's first window; the read cannot
 * lack a rate, for the export's facts refused the range first when one lacks (page-reads.ts
 * `walkFacts`).
 */
export function planRecordsExport(
  scope: RowScope,
  currency: CurrencyCode,
  dialect: SqlDialect,
  position: ExportPosition,
): PlannedExport {
  const target = targetOf(currency);
  const statement = new Statement(dialect);
  const rates = dayRatesCte(scope, statement);
  const joins = rateJoins(target, statement);
  let where = whereClause(scope, statement);
  if (position.after)
    where += ` AND ${pastBoundary([{ field: "DATE_DAY", direction: "ASC" }], position.after, target, statement)}`;
  const column = (field: Exclude<RecordField, "spend" | "revenue" | "currency">) => {
    if (field === "impressions" || field === "clicks") return `CAST(r.${field} AS BIGINT)`;
    return recordColumn(field, dialect);
  };
  const columns = RECORD_FIELD_ORDER.map((field) => {
    const expression =
      field === "spend" || field === "revenue"
        ? money(convertedMinor(MONEY_COLUMNS[field], target, dialect), target, dialect)
        : field === "currency"
          ? `CAST(${target.literal} AS VARCHAR)`
          : column(field);
    return `${expression} AS "${field}"`;
  });
  const take = position.take === null ? "" : ` LIMIT ${rowCount(position.take)}`;
  const skip = position.skip > 0 ? ` OFFSET ${rowCount(position.skip)}` : "";
  return {
    sql: `WITH ${rates} SELECT ${columns.join(", ")} FROM records r ${joins} WHERE ${where}
      ORDER BY r.date ASC, r.record_id ASC${take}${skip}`,
    params: statement.params,
  };
}

/**
 * Plans the rows of a records query per day and source currency, as (day `YYYY-MM-DD`, currency,
 * rows) in day order: what a walk learns once before its first page (page-reads.ts
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

/**
 * Plans the stored FX rates the days of `range` can use (`SqlDialect.fxRates`) as rows (currency, day
 * `YYYY-MM-DD`, rate_e6): what walks and rollup aggregates convert with (record-money.ts
 * `FxHistory`, once per data generation and calendar year) and an export checks with.
 */
export function planFxRates(dialect: SqlDialect, range: { from: string; to: string }): PlannedSql {
  const statement = new Statement(dialect);
  const rates = dialect.fxRates(statement.bind, range, RATED_CURRENCIES);
  return {
    sql: `SELECT currency, ${dialect.formatDate("date")} AS day, rate_e6 FROM (${rates}) rates ORDER BY currency, date`,
    params: statement.params,
  };
}

function totalExpression(metric: Metric, target: Target, dialect: SqlDialect): string {
  const column = METRIC_COLUMNS[metric];
  if (MONEY_METRICS.has(metric)) {
    const minorUnits = target.minorUnits;
    const sumE8 = `coalesce(sum(${convertedE8(column, target, dialect)}), 0)`;
    return money(`div_half_even(${sumE8}, ${10 ** (8 - minorUnits)})`, target, dialect);
  }
  if (metric === "CONVERSIONS") return `CAST(coalesce(sum(r.${column}), 0) AS ${dialect.double}) / 10000`;
  return `CAST(coalesce(sum(r.${column}), 0) AS ${dialect.double})`;
}

/**
 * The metrics of an aggregate's partial sums, in the order `planRollupPartials` gives them
 * (rollup-aggregate.ts reads them so), and the stored columns they sum.
 */
export const PARTIAL_METRICS: readonly Metric[] = [
  "IMPRESSIONS",
  "CLICKS",
  "CONVERSIONS",
  "SPEND",
  "REVENUE",
];
const PARTIAL_SUMS = PARTIAL_METRICS.map((metric) => METRIC_COLUMNS[metric]);

/**
 * Plans one page of `marketingAggregate` in two steps. First the matching rows are summed per
 * group, source currency and day with native integer sums: rows sharing a currency and a day share
 * a rate, so converting their sum is converting each row (multiplication distributes). Then each
 * partial sum is converted (exact, half-even to 10⁻⁸), the partials are summed per group and the
 * total rounded half-even to the currency's minor unit. The group count and the missing-rate check
 * ride along as window functions. Not grouped by campaign, the first step sums the record rollup's
 * rows, already summed per currency and day, instead of the records (`rowSourceOf`).
 */
export function planAggregatePage(query: AggregateQuery, dialect: SqlDialect): PlannedAggregatePage {
  const target = targetOf(query.currency);
  const statement = new Statement(dialect);
  const withRates = query.metrics.some((metric) => MONEY_METRICS.has(metric));
  const source = aggregateSource(query);
  const ctes: string[] = withRates ? [dayRatesCte(query.scope, statement)] : [];
  const groups = query.groupBy.map((dimension, index) => ({
    dimension,
    inner: `${dimensionGroup(dimension, dialect)} AS g${index}`,
    outer: `r.g${index}`,
  }));
  const where = whereClause(query.scope, statement);
  const partialKeys = [...groups.map((group) => group.inner), "r.currency", "r.date"];
  const partialGroupBy = [...groups.map((_, index) => `${index + 1}`), "r.currency", "r.date"];
  const sums = PARTIAL_SUMS.map((column) => `${source.sum(column, dialect)} AS ${column}`);
  ctes.push(`partial AS (
    SELECT ${partialKeys.join(", ")}, ${sums.join(", ")}
    FROM ${source.table} r WHERE ${where} GROUP BY ${partialGroupBy.join(", ")})`);

  const columns: string[] = [];
  const fields: string[] = [];
  for (const group of groups) {
    columns.push(isDateDimension(group.dimension) ? dialect.formatDate(group.outer) : group.outer);
    fields.push(group.dimension);
  }
  for (const metric of query.metrics) {
    columns.push(totalExpression(metric, target, dialect));
    fields.push(`TOTAL_${metric}`);
  }
  const windowColumns = { totalCount: columns.length, missingRateRows: columns.length + 1 };
  columns.push("count(*) OVER ()");
  columns.push(withRates ? `sum(count(*) FILTER (WHERE ${missingRate(target)})) OVER ()` : "0");
  const joins = withRates ? rateJoins(target, statement) : "";
  const sortKey = (field: AggregateSortField) => {
    if (!field.startsWith("TOTAL_")) return groups.find((group) => group.dimension === field)!.outer;
    const metric = field.slice("TOTAL_".length) as Metric;
    const column = METRIC_COLUMNS[metric];
    return MONEY_METRICS.has(metric) ? `sum(${convertedE8(column, target, dialect)})` : `sum(r.${column})`;
  };
  const order = [
    ...query.sort.map((entry) => `${sortKey(entry.field)} ${entry.direction}`),
    ...groups.map((group) => `${group.outer} ASC`),
  ];
  const limit = rowCount(query.page.pageSize);
  const offset = rowCount((query.page.page - 1) * query.page.pageSize);
  const select = columns.map((expression, index) => `${expression} AS c${index}`).join(", ");
  return {
    sql: `WITH ${ctes.join(",\n")} SELECT ${select} FROM partial r ${joins}
      ${groups.length > 0 ? `GROUP BY ${groups.map((group) => group.outer).join(", ")}` : ""}
      ${order.length > 0 ? `ORDER BY ${order.join(", ")}` : ""}
      LIMIT ${limit} OFFSET ${offset}`,
    params: statement.params,
    fields,
    windowColumns,
  };
}

/** Whether an aggregate reads the record rollup (not grouped by campaign, campaigns not filtered). */
export function aggregateReadsRollup(query: AggregateQuery): boolean {
  return aggregateSource(query) === ROLLUP;
}

/**
 * Plans the rollup's partial sums of an aggregate (rollup-aggregate.ts converts and sums them):
 * per group, source currency and day, the native integer sums. Columns: each group's key as text
 * (dates `YYYY-MM-DD`, which sort as the dates do), the currency, the day, then the sums of
 * `PARTIAL_METRICS`, in its order.
 */
export function planRollupPartials(query: AggregateQuery, dialect: SqlDialect): PlannedSql {
  const statement = new Statement(dialect);
  const where = whereClause(query.scope, statement);
  const keys = query.groupBy.map((dimension) => {
    const group = dimensionGroup(dimension, dialect);
    return isDateDimension(dimension) ? dialect.formatDate(group) : group;
  });
  const groupBy = [...keys.map((_, index) => `${index + 1}`), "r.currency", "r.date"];
  return {
    sql: `SELECT ${[...keys, "r.currency", dialect.formatDate("r.date")].join(", ")},
      ${PARTIAL_SUMS.map((column) => ROLLUP.sum(column, dialect)).join(", ")}
      FROM ${ROLLUP.table} r WHERE ${where} GROUP BY ${groupBy.join(", ")}`,
    params: statement.params,
  };
}

/** Plans the number of groups of `marketingAggregate` (used when the page itself is empty). */
export function planAggregateCount(query: AggregateQuery, dialect: SqlDialect): PlannedCount {
  if (query.groupBy.length === 0) return { sql: `SELECT 1 AS total, ${NO_MISSING_RATE}`, params: [] };
  const statement = new Statement(dialect);
  const where = whereClause(query.scope, statement);
  const groupBy = query.groupBy.map((dimension) => dimensionGroup(dimension, dialect)).join(", ");
  return {
    sql: `SELECT count(*) AS total, ${NO_MISSING_RATE}
      FROM (SELECT 1 FROM ${aggregateSource(query).table} r WHERE ${where} GROUP BY ${groupBy}) groups`,
    params: statement.params,
  };
}

/** Plans a search for one sample missing rate of an aggregate (only run when one is known to miss). */
export function planAggregateMissingRate(query: AggregateQuery, dialect: SqlDialect): PlannedCount {
  const target = targetOf(query.currency);
  const statement = new Statement(dialect);
  const cte = `WITH ${dayRatesCte(query.scope, statement)}`;
  const joins = rateJoins(target, statement);
  const where = whereClause(query.scope, statement);
  return {
    sql: `${cte} ${countColumns(`SELECT 0 AS total, ${missingRateSample(target, dialect)} AS sample
      FROM ${aggregateSource(query).table} r ${joins} WHERE ${where}`)}`,
    params: statement.params,
  };
}

/**
 * Plans the data version of a range (`pageInfo.dataVersion`, data-versions.ts): the latest version
 * stamped on one of the brand's days in it, or on an FX change reaching them (the brand's own
 * counter: `<region>.<version>` compares with `marketingDataChanges`' `since`).
 */
export function planDataVersion(scope: RowScope, dialect: SqlDialect): PlannedDataVersion {
  const statement = new Statement(dialect);
  const { bind } = statement;
  return {
    sql: `SELECT greatest(
      coalesce((SELECT max(version) FROM day_versions WHERE brand_id = ${bind(scope.brandId)}
        AND date BETWEEN CAST(${bind(scope.from)} AS DATE) AND CAST(${bind(scope.to)} AS DATE)), 0),
      coalesce((SELECT max(version) FROM brand_fx_versions WHERE brand_id = ${bind(scope.brandId)}
        AND first_date <= CAST(${bind(scope.to)} AS DATE)), 0))`,
    params: statement.params,
  };
}

/**
 * Plans a brand's readiness facts for a processing date (CONTRACT §3 rule 8): whether it is
 * published, the last publish, and the last day with records inside the grants (NULL without
 * grants: no rows are readable). The last day is read from `day_row_counts` (data-versions.ts),
 * a row per day, market and data source, never from the records: its cost does not grow with them.
 */
export function planReadiness(
  brandId: string,
  processingDate: string,
  grants: { markets: string[]; dataSources: string[] },
  dialect: SqlDialect,
): PlannedSql {
  const statement = new Statement(dialect);
  const { bind } = statement;
  const granted = grants.markets.length > 0 && grants.dataSources.length > 0;
  const published = `EXISTS (SELECT 1 FROM publishes WHERE brand_id = ${bind(brandId)}
    AND processing_date = CAST(${bind(processingDate)} AS DATE)) AS published`;
  const lastProcessed = `(SELECT ${dialect.instant("max(published_at)")} FROM publishes
    WHERE brand_id = ${bind(brandId)}) AS last_processed_at`;
  const availableThrough = granted
    ? `(SELECT ${dialect.formatDate("max(date)")} FROM day_row_counts WHERE brand_id = ${bind(brandId)}
        AND market IN (${grants.markets.map(bind).join(", ")})
        AND data_source IN (${grants.dataSources.map(bind).join(", ")}))`
    : "CAST(NULL AS VARCHAR)";
  // The brand's data version in the same statement: one read instead of two.
  const version = brandVersionColumn(bind(brandId));
  return {
    sql: `SELECT ${published}, ${lastProcessed}, ${availableThrough} AS available_through, ${version}`,
    params: statement.params,
  };
}

/**
 * Plans a brand's data at a glance: its rows, first and last day (from `day_row_counts`, not the
 * records), and last publish.
 */
export function planDataStatus(brandId: string, dialect: SqlDialect): PlannedSql {
  const statement = new Statement(dialect);
  const { bind } = statement;
  const { formatDate, instant } = dialect;
  return {
    sql: `SELECT
      (SELECT coalesce(sum(rows), 0) FROM day_row_counts WHERE brand_id = ${bind(brandId)}) AS rows,
      (SELECT ${formatDate("min(date)")} FROM day_row_counts WHERE brand_id = ${bind(brandId)}) AS first_day,
      (SELECT ${formatDate("max(date)")} FROM day_row_counts WHERE brand_id = ${bind(brandId)}) AS last_day,
      (SELECT ${instant("published_at")} FROM publishes WHERE brand_id = ${bind(brandId)}
        ORDER BY processing_date DESC LIMIT 1) AS last_published_at,
      (SELECT ${formatDate("max(processing_date)")} FROM publishes WHERE brand_id = ${bind(brandId)})
        AS last_published_date`,
    params: statement.params,
  };
}

export type { SortEntry };
