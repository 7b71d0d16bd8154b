/**
 * The export's rows as the engines write them (CONTRACT §7): each NDJSON row as one text value
 * and each CSV row as its cells, built in SQL over the planner's export read
 * (`planRecordsExport`), and the Parquet columns typed for the file. The engine writes the bytes
 * itself (DuckDB `COPY ... TO`, PostgreSQL `COPY ... TO STDOUT`), so no value of those windows
 * becomes a JavaScript value on the way (an export's first window does: record-export.ts).
 *
 * Each value's text is exactly what `marketingRecords` gives, as JavaScript prints it:
 * - strings: between quotes as they are, or, when they hold a quote, a backslash or a control
 *   character, JSON-quoted by the engine's `to_json`, which escapes them as `JSON.stringify` does;
 *   other characters are written as they are, as `JSON.stringify` writes them;
 * - counts (at most 2147483647, load rules) as their digits;
 * - doubles (`jsNumberText`): the engines print the same shortest round-trip digits as JavaScript;
 *   only the notation differs (DuckDB's `12.0`, either engine's `1.6e+16` where JavaScript writes
 *   the digits out below 1e21), and is rewritten here.
 * - CSV cells: formula-like text neutralised (`FORMULA_TRIGGERS`, the contract's one rule), then
 *   quoted by the engine's CSV writer as csv-writer.ts quotes (a comma, quote, CR or LF inside;
 *   quotes doubled).
 */
import {
  CURRENCIES,
  type CurrencyCode,
  FORMULA_TRIGGERS,
  RECORD_FIELDS,
  type RecordField,
} from "@mdq/contract";
import type { SqlDialect } from "../../model/engine.js";
import type { PlannedExport } from "./export-plan.js";

/** A layout the engines write one text value per row for. */
export type LineFormat = "ndjson" | "csv";

/** The record fields that are numbers (the others are text). */
export const NUMBER_FIELDS: ReadonlySet<RecordField> = new Set([
  "impressions",
  "clicks",
  "spend",
  "conversions",
  "revenue",
]);
const COUNT_FIELDS: ReadonlySet<RecordField> = new Set(["impressions", "clicks"]);

/**
 * The text fields whose values a load may begin with a formula trigger (`FORMULA_TRIGGERS`) or fill
 * with what JSON escapes (a quote, a backslash, a tab, CR or LF): the others cannot by the load
 * rules (load/record-rules.ts: a date, an ISO country code, a data source or channel id of
 * `[a-z0-9_.-]`, a currency code), so their CSV cells are never neutralised nor their JSON escaped
 * and neither is tested (PostgreSQL, scale 30, a window of 52,920 CSV rows: 470–525 ms against
 * 520–680).
 */
const FREE_TEXT_FIELDS: ReadonlySet<RecordField> = new Set(["recordId", "campaignId", "campaignName"]);

/** A string literal of SQL for a fixed text of this module (no value ever enters SQL text). */
function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** `text` (a double's engine text) written out as JavaScript writes numbers below 1e21. */
function expandedExponent(text: string): string {
  const mantissa = `split_part(${text}, 'e+', 1)`;
  const exponent = `CAST(split_part(${text}, 'e+', 2) AS INTEGER)`;
  const digits = `replace(replace(${mantissa}, '-', ''), '.', '')`;
  const sign = `CASE WHEN left(${mantissa}, 1) = '-' THEN '-' ELSE '' END`;
  const whole = `${exponent} + 1`;
  return `${sign} || CASE WHEN length(${digits}) <= ${whole}
      THEN ${digits} || repeat('0', ${whole} - length(${digits}))
      ELSE left(${digits}, ${whole}) || '.' || substr(${digits}, ${whole} + 1) END`;
}

/**
 * A whole double of PostgreSQL at or above 2⁵³ (every double there is whole) as JavaScript writes
 * it: the fewest significant digits (15, 16, then 17) that read back as the same double, then
 * zeros. PostgreSQL's own text keeps a 17th digit for some of them where 16 are enough
 * (5.7830493669961696e+16, JavaScript's 57830493669961700): it is read as the exact decimal it
 * writes and rounded to each count of digits in turn.
 */
function postgresWholeText(column: string): string {
  const exact = `CAST(CAST(${column} AS text) AS numeric)`;
  const wholeDigits = `length(CAST(trunc(abs(${exact})) AS text))`;
  const rounded = (significant: number) => `round(${exact}, ${significant} - ${wholeDigits})`;
  const [fifteen, sixteen, seventeen] = [15, 16, 17].map(rounded);
  return `CASE WHEN CAST(${fifteen} AS float8) = ${column} THEN CAST(${fifteen} AS text)
      WHEN CAST(${sixteen} AS float8) = ${column} THEN CAST(${sixteen} AS text)
      ELSE CAST(${seventeen} AS text) END`;
}

/**
 * A double column as JavaScript's `String(number)` writes it. Below 1e15 both engines write the
 * shortest round-trip digits without an exponent, DuckDB with a `.0` on whole numbers; at 1e15 and
 * up to 1e21 they may use an exponent that JavaScript does not, and PostgreSQL, from 2⁵³, a digit
 * more than JavaScript (`postgresWholeText`). The values never fall below 1e-4 but for zero (a
 * count of ten-thousandths), where the notations differ again.
 */
export function jsNumberText(column: string, dialect: SqlDialect): string {
  const text = `CAST(${column} AS VARCHAR)`;
  const common =
    dialect.engine === "duckdb"
      ? `CASE WHEN ${column} = trunc(${column}) THEN CAST(CAST(${column} AS BIGINT) AS VARCHAR) ELSE ${text} END`
      : text;
  const wider =
    dialect.engine === "postgres"
      ? `WHEN abs(${column}) >= ${2 ** 53} THEN ${postgresWholeText(column)}`
      : "";
  const large = `CASE ${wider} WHEN strpos(${text}, 'e+') > 0 THEN ${expandedExponent(text)}
      WHEN right(${text}, 2) = '.0' THEN left(${text}, length(${text}) - 2) ELSE ${text} END`;
  return `CASE WHEN abs(${column}) < 1e15 OR abs(${column}) >= 1e21 THEN ${common} ELSE ${large} END`;
}

/**
 * A free-text column (`FREE_TEXT_FIELDS`) as a JSON string: between quotes as it is when it holds
 * nothing that JSON escapes (a quote, a backslash, a control character: loads refuse all of them
 * but tab, LF and CR), else by the engine's `to_json`, which escapes as `JSON.stringify` does.
 * Most values hold none, and looking for five bytes costs a row less than `to_json`.
 */
function jsonString(column: string, dialect: SqlDialect): string {
  const escaped =
    dialect.engine === "duckdb" ? `CAST(to_json(${column}) AS VARCHAR)` : `CAST(to_json(${column}) AS text)`;
  // DuckDB's `strpos` counts characters to the match; `contains` only finds it.
  const holds = (text: string) =>
    dialect.engine === "duckdb" ? `contains(${column}, ${text})` : `strpos(${column}, ${text}) > 0`;
  const escapes = [literal('"'), literal("\\"), "chr(9)", "chr(10)", "chr(13)"].map(holds).join(" OR ");
  return `CASE WHEN ${escapes} THEN ${escaped} ELSE concat('"', ${column}, '"') END`;
}

/** A text column neutralised as a CSV cell (`neutraliseCsvCell`): formula-like text gets a `'` first. */
function neutralised(column: string): string {
  const triggers = FORMULA_TRIGGERS.map((trigger) =>
    trigger === "\t" ? "chr(9)" : trigger === "\r" ? "chr(13)" : literal(trigger),
  );
  return `CASE WHEN left(${column}, 1) IN (${triggers.join(", ")}) THEN '''' || ${column} ELSE ${column} END`;
}

/**
 * The JSON text of one field of a row (`e."field"`): the text fields other than free text (a
 * date, a market, a data source, a channel, a currency: `FREE_TEXT_FIELDS`) between quotes as
 * they are, since the load rules leave them nothing JSON escapes.
 */
function fieldJson(field: RecordField, dialect: SqlDialect): string {
  const column = `e."${field}"`;
  if (COUNT_FIELDS.has(field)) return `CAST(${column} AS VARCHAR)`;
  if (NUMBER_FIELDS.has(field)) return jsNumberText(column, dialect);
  if (!FREE_TEXT_FIELDS.has(field)) return `concat('"', ${column}, '"')`;
  return jsonString(column, dialect);
}

/**
 * The top-level order of a line statement that reads more rows than `WINDOW_ROWS` (record-export.ts:
 * a window of one day that large). DuckDB keeps the subquery's ORDER BY through the projection
 * above it while a statement's rows fit in one row group, but not past it on more than one thread
 * (`MDQ_DUCKDB_THREADS`, or any read while a load runs on every core): one day of 182,700 rows came
 * out as CSV lines with 30 breaks of order on two threads, and none on one, nor at 85,050 rows.
 * Sorting again by the same keys at the top (the date's text sorts as the date) keeps the order;
 * it is not done for every window because it sorts the lines themselves (the year's export grew
 * the server's RSS by 88–105 MB against 58–64). PostgreSQL keeps a subquery's order through a
 * plain projection.
 */
function linesOrder(dialect: SqlDialect, oversized: boolean): string {
  return oversized && dialect.engine === "duckdb" ? ` ORDER BY e."date", e."recordId"` : "";
}

/**
 * The byte the engines' COPY writers take for a quote when they write NDJSON lines (`LINES` of
 * duckdb-export.ts and postgres-export.ts), with a delimiter no line holds. No line holds this
 * byte, nor a CR or LF (loads refuse control characters, JSON escapes them), so no line is quoted.
 */
export const LINE_QUOTE = 0x01;

const QUOTE_BYTE = 0x22;
const LF_BYTE = 0x0a;
const CR_BYTE = 0x0d;

/**
 * `chunks` of CSV records that end with LF (PostgreSQL's CSV writer has no other line end), each
 * ending with CRLF instead: an LF ends a record where it stands outside quotes (after an even
 * number of `"` in its record: a quoted cell's own quotes are doubled), and stays as it is inside
 * a quoted cell (names may hold line breaks).
 */
export async function* crlfRecords(chunks: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  let quoted = false;
  for await (const chunk of chunks) {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    /** The positions of the LFs that end records. */
    const ends: number[] = [];
    let quote = bytes.indexOf(QUOTE_BYTE);
    const passQuotesBefore = (position: number) => {
      for (; quote !== -1 && quote < position; quote = bytes.indexOf(QUOTE_BYTE, quote + 1)) quoted = !quoted;
    };
    for (let lf = bytes.indexOf(LF_BYTE); lf !== -1; lf = bytes.indexOf(LF_BYTE, lf + 1)) {
      passQuotesBefore(lf);
      if (!quoted) ends.push(lf);
    }
    passQuotesBefore(bytes.length);
    if (ends.length === 0) {
      yield bytes;
      continue;
    }
    const out = Buffer.allocUnsafe(bytes.length + ends.length);
    let written = 0;
    let from = 0;
    for (const end of ends) {
      written += bytes.copy(out, written, from, end);
      out[written] = CR_BYTE;
      written += 1;
      from = end;
    }
    bytes.copy(out, written, from);
    yield out;
  }
}

/**
 * The export's rows of `plan` as NDJSON lines (`line`), in its order: each as `JSON.stringify`
 * writes the `MarketingRecord` (its keys in the schema's order); the engine's writer adds the LF
 * that ends each line.
 */
export function planExportLines(plan: PlannedExport, dialect: SqlDialect, oversized = false): PlannedExport {
  const parts = RECORD_FIELDS.flatMap((field, index) => [
    literal(`${index === 0 ? "{" : ","}"${field}":`),
    fieldJson(field, dialect),
  ]);
  return {
    sql: `SELECT concat(${parts.join(", ")}, '}') AS line FROM (${plan.sql}) e${linesOrder(dialect, oversized)}`,
    params: plan.params,
  };
}

/**
 * The export's rows of `plan` as the cells of CSV lines, for an engine's own CSV writer to quote
 * and join (a field holding `,`, `"`, CR or LF quoted, its quotes doubled, as csv-writer.ts
 * writes: DuckDB's writer with CRLF after each row, duckdb-export.ts `CSV_CELLS`; PostgreSQL's,
 * whose LF `crlfRecords` makes CRLF, postgres-export.ts `CSV_CELLS`): the free text neutralised,
 * the numbers' text as `planExportLines` writes it. The same bytes as CSV lines built in SQL in
 * about two thirds of their time (DuckDB, scale 150, 90 days in windows, one thread: 1.22 s
 * against 1.79 s): those lines' quoting expressions alone cost each statement 74 ms of planning
 * against 35.
 */
export function planExportCsvCells(
  plan: PlannedExport,
  dialect: SqlDialect,
  oversized = false,
): PlannedExport {
  const cells = RECORD_FIELDS.map((field) => {
    const column = `e."${field}"`;
    if (COUNT_FIELDS.has(field)) return column;
    if (NUMBER_FIELDS.has(field)) return `${jsNumberText(column, dialect)} AS "${field}"`;
    if (!FREE_TEXT_FIELDS.has(field)) return column;
    return `${neutralised(column)} AS "${field}"`;
  });
  return {
    sql: `SELECT ${cells.join(", ")} FROM (${plan.sql}) e${linesOrder(dialect, oversized)}`,
    params: plan.params,
  };
}

/**
 * Rows per row group of an export's Parquet file (docs/api.md), whoever writes it: a row group is
 * sent as soon as it is full, so the first bytes wait for this many rows, and its writer holds
 * about one at a time. DuckDB's own default (122,880 rows) made the DuckDB store's first Parquet
 * bytes come 1.7–2.0 s after the export was asked at scale 150 (1.2 s with this).
 */
export const PARQUET_ROW_GROUP_ROWS = 16_384;

/**
 * The Parquet file's column types, as DuckDB names them: `date` a DATE, the counts BIGINT (INT64),
 * `conversions` a DOUBLE, the amounts DECIMAL(18, minor unit of `currency`), the rest text.
 */
export function parquetColumnTypes(currency: CurrencyCode): Readonly<Record<RecordField, string>> {
  const money = `DECIMAL(18, ${CURRENCIES[currency].minorUnits})`;
  return {
    recordId: "VARCHAR",
    date: "DATE",
    market: "VARCHAR",
    dataSource: "VARCHAR",
    channel: "VARCHAR",
    campaignId: "VARCHAR",
    campaignName: "VARCHAR",
    impressions: "BIGINT",
    clicks: "BIGINT",
    spend: money,
    conversions: "DOUBLE",
    revenue: money,
    currency: "VARCHAR",
  };
}

/**
 * The export's rows of `plan` with the Parquet file's types (`parquetColumnTypes`): the date and
 * the amounts cast (DATE and DECIMAL read alike in both engines) — the exact amounts, rounded from
 * GraphQL's doubles to the minor unit they came from; the others are already of their type.
 */
export function planExportParquet(plan: PlannedExport, currency: CurrencyCode): PlannedExport {
  const types = parquetColumnTypes(currency);
  const columns = RECORD_FIELDS.map((field) => {
    const column = `e."${field}"`;
    if (field === "date" || field === "spend" || field === "revenue")
      return `CAST(${column} AS ${types[field]}) AS "${field}"`;
    return column;
  });
  return { sql: `SELECT ${columns.join(", ")} FROM (${plan.sql}) e`, params: plan.params };
}

/**
 * The export's rows of `plan` as a text format's engine writer takes them: NDJSON as
 * `planExportLines`'s lines, CSV as `planExportCsvCells`'s cells.
 */
export function planExportText(
  format: LineFormat,
  plan: PlannedExport,
  dialect: SqlDialect,
  oversized = false,
): PlannedExport {
  return format === "ndjson"
    ? planExportLines(plan, dialect, oversized)
    : planExportCsvCells(plan, dialect, oversized);
}
