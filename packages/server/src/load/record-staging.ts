/**
 * A load's fast path (issue 19): the records file read by DuckDB in one statement straight into a
 * staging table of stored columns (`STAGING_COLUMNS`), every rule of `record-rules.ts` evaluated
 * in that same statement as one flag per row, then one scan of the table that checks the flags,
 * the vocabularies and the duplicate keys. On the DuckDB store the table is a temporary table of
 * the store's writer connection, committed before the load's transaction reads it
 * (duckdb-store.ts `replaceStaged`); for PostgreSQL it is in a scratch DuckDB, written out for COPY.
 *
 * This path only tells a clean file from one that is not (`RecordsNotClean`). A file that is not
 * clean is read again by `readRecordsFile` (records-file.ts), which names every problem's line,
 * column and reason: the messages have one source, and a clean file pays for none of it.
 */
import type { BigIntStats } from "node:fs";
import { stat } from "node:fs/promises";
import type { DuckDBConnection } from "@duckdb/node-api";
import type { LoadFormat } from "@mdq/contract";
import { isCalendarDate } from "@mdq/contract";
import { isOutOfMemory } from "../store/duckdb/duckdb-errors.js";
import type { FxRateStarts } from "../store/model/store.js";
import { rolledUpRowsOf, rolledUpTableOf } from "../store/sql/rollup-table.js";
import { STAGING_COLUMNS } from "../store/writes/record-replace.js";
import { csvFieldColumn, quoteIdentifier, sqlString } from "./file-staging.js";
import { RecordsFileError } from "./load-errors.js";
import type { LoadProgressReporter } from "./load-progress.js";
import { allRated } from "./rate-rule.js";
import {
  COLUMN_RULES,
  floatPrecisionRule,
  NATURAL_KEY,
  RECORD_COLUMNS,
  type RecordColumn,
  typedNumberBad,
} from "./record-rules.js";
import { csvColumns, ndjsonColumns, parquetColumns, type TypedColumnType } from "./record-stagers.js";
import { recordIdOf, storedColumnOf, storedColumns } from "./records-reader.js";

/** The fast check found a problem (or could not read the file): the file must be diagnosed. */
export class RecordsNotClean extends Error {
  override readonly name = "RecordsNotClean";
}

/**
 * A clean file staged, and rolled up into `rolledUpTableOf(staging)`: its rows and its distinct
 * days, ascending.
 */
export interface StagedRecords {
  rows: number;
  days: string[];
  /**
   * Staged as a view over the file (`StagingOptions.overFile`): throws a `RecordsFileError` when
   * the file changed since it was first read, so that rows read after the checks are not loaded.
   */
  unchanged?: () => Promise<void>;
}

/** How a file is staged. */
export interface StagingOptions {
  /**
   * A view over the file instead of a table (Parquet only; any other format is staged as a
   * table): each statement reading the staged rows reads the file again, which costs a Parquet
   * file less than writing its rows into a table and reading them back, and keeps memory bounded
   * without spilling. Measured on the DuckDB store's statements of a 1 M-row Parquet load (a bare
   * DuckDB on two threads under the load's 256 MB): 1.55 s staged as a table, 1.33–1.35 s as a
   * view; 10 M rows 18.6 s against 12.2 s, the table spilling past the memory limit (issue 19).
   * The file's rows are read three or four times: `unchanged` tells a file that changed meanwhile.
   */
  overFile?: boolean;
  /**
   * The first day of each currency's stored rates: a row whose currency has no rate on or before
   * its day makes the file not clean (rate-rule.ts), checked over the rollup, a few rows per day.
   */
  rateStarts?: FxRateStarts;
}

/** What a records file's read needs: the checked request of `readRecordsFile`. */
export interface StagingRequest {
  path: string;
  format: LoadFormat;
  mapping: Partial<Record<string, string>>;
}

/** The file's rows as canonical VARCHAR columns: a SELECT list over a FROM clause. */
interface FileSource {
  select: string[];
  from: string;
  /** Where record ids come from: a column of the file, the natural key, or per row (NDJSON keys). */
  recordId: "file" | "derived" | "per-row";
  floatSources: Partial<Record<RecordColumn, string>>;
  /** Dates, counts and amounts selected with their own type, not as text (Parquet). */
  typed: ReadonlyMap<RecordColumn, TypedColumnType>;
}

/** The columns whose vocabulary is checked in TypeScript, over their distinct values. */
const VOCABULARY_COLUMNS = ["market", "data_source", "channel", "currency"] as const;

/** A date as the contract writes it: checked here by its shape and by DuckDB's calendar. */
const DATE_SHAPE = "[0-9]{4}-[0-9]{2}-[0-9]{2}";
const notInCalendar = (x: string) => `TRY_CAST(${x} AS DATE) IS NULL`;

/** The name of a stored column beside the file's own while a file is staged. */
const stored = (column: string) => `stored__${column}`;

/** What joins the values of a row's `wholeValue` match: U+001F, which none of the patterns matches. */
const JOINED_BY = "\\x1f";

/**
 * Reads the file into the new table `staging` on `connection` (or makes `staging` a view over it:
 * `StagingOptions.overFile`) and checks it. Resolves with its rows and days when every rule
 * holds; rejects with `RecordsNotClean` otherwise (the table or view may be left behind: the
 * caller or its scratch database drops it), or with a
 * `RecordsFileError` for a problem of the file as a whole (its header, a missing column).
 */
export async function stageRecords(
  connection: DuckDBConnection,
  staging: string,
  request: StagingRequest,
  progress?: LoadProgressReporter,
  { overFile = false, rateStarts }: StagingOptions = {},
): Promise<StagedRecords> {
  const overParquet = overFile && request.format === "parquet";
  const file = overParquet
    ? await fileIdentity(request.path).catch((error: unknown) => {
        throw new RecordsNotClean(error instanceof Error ? error.message : String(error));
      })
    : null;
  const source = await fileSource(connection, request, overParquet).catch((error: unknown) => {
    if (error instanceof RecordsFileError || isOutOfMemory(error)) throw error;
    // DuckDB cannot read the file's columns (a Parquet file that is not one).
    throw new RecordsNotClean(error instanceof Error ? error.message : String(error));
  });
  const recordId =
    source.recordId === "per-row"
      ? `CASE WHEN record_id IS NULL THEN ${recordIdOf(false)} ELSE record_id END`
      : recordIdOf(source.recordId === "file");
  const given = source.recordId === "per-row" ? ", record_id IS NOT NULL AS id_given" : "";
  // A view's rows are numbered by their place in the file, as a table's by `rowid` (the
  // staged order duckdb/staged-order.ts reads).
  const rowNumber = overParquet ? ", file_row_number AS rowid" : "";
  // The load's rollup is made here (the store's replace reads it, `StagedRows.rolledUp`), with
  // the flags counted: the rows, vocabularies and days are then read from a few rows per day. Read
  // from the staged rows, they took a scan of their own (1 M rows: 44–51 ms; the rollup 31–34 ms).
  const rolledUp = rolledUpTableOf(staging);
  await progress?.watchReading(connection);
  try {
    // Two steps: the stored values beside the file's text, then the flag, which compares the
    // stored numbers with their bounds (`storedAtMost`) rather than testing their text. A view
    // takes no parameter: its file is named by a literal. Its rows are first read by the rollup.
    await connection.run(
      `CREATE TEMP ${overParquet ? "VIEW" : "TABLE"} ${staging} AS
        SELECT ${STAGING_COLUMNS.map((column) => `${stored(column)} AS ${column}`).join(", ")},
          ${badRow(source)} AS bad${given}${rowNumber}
        FROM (SELECT *, ${storedColumns(recordId, "TRY_CAST", source.typed, stored)}
          FROM (SELECT ${source.select.join(", ")} FROM ${source.from}))`,
      overParquet ? [] : [request.path],
    );
    await connection.run(
      `CREATE TEMP TABLE ${rolledUp} AS ${rolledUpRowsOf(staging, [
        "count_if(bad) AS bad",
        `${given ? "count_if(id_given)" : "0"} AS given`,
      ])}`,
    );
  } catch (error) {
    progress?.stop();
    // Out of memory says nothing of the file: reading it again would not name a problem.
    if (isOutOfMemory(error)) throw error;
    // The file does not parse as its format (a broken CSV row, a line that is not JSON).
    throw new RecordsNotClean(error instanceof Error ? error.message : String(error));
  }
  const checks = await connection.runAndReadAll(
    `SELECT coalesce(sum(rows), 0) AS rows, sum(bad) AS bad,
      ${VOCABULARY_COLUMNS.map((column) => `list(DISTINCT ${column}) AS ${column}`).join(", ")},
      list(DISTINCT date) AS days, sum(given) AS given
    FROM ${rolledUp}`,
  );
  const found = checks.getRowObjectsJS()[0]!;
  const rows = Number(found["rows"]);
  progress?.read(rows);
  if (rows === 0) throw new RecordsNotClean("the file holds no records");
  // Days come as dates, written here (no strftime over every row): a year past 9999 as
  // "+010000-…", a date DuckDB could not read (NULL) as "", neither a calendar day.
  const days = (found["days"] as (Date | null)[]).map((day) => day?.toISOString().slice(0, 10) ?? "").sort();
  const idsChecked =
    source.recordId === "file" || (source.recordId === "per-row" && Number(found["given"]) === rows);
  const clean =
    Number(found["bad"]) === 0 &&
    (source.recordId !== "per-row" || [0, rows].includes(Number(found["given"]))) &&
    days.every(isCalendarDate) &&
    VOCABULARY_COLUMNS.every((column) =>
      (found[column] as string[]).every((value) =>
        COLUMN_RULES[column].every((rule) => rule.kind === "sql" || rule.valid(value)),
      ),
    ) &&
    (await keysUnique(connection, staging, [NATURAL_KEY.join(", "), ...(idsChecked ? ["record_id"] : [])])) &&
    (rateStarts === undefined || (await allRated(connection, rolledUp, rateStarts)));
  if (!clean) throw new RecordsNotClean("the file has problems");
  if (file === null) return { rows, days };
  const { path } = request;
  const unchanged = async () => {
    if (sameFile(file, await fileIdentity(path).catch(() => null))) return;
    throw new RecordsFileError(path, [
      { line: 0, message: "the file changed while it was loaded; load it again once it is written" },
    ]);
  };
  return { rows, days, unchanged };
}

/** What tells one state of a file from another: any write moves its change time. */
type FileIdentity = Pick<BigIntStats, "dev" | "ino" | "size" | "mtimeNs" | "ctimeNs">;

async function fileIdentity(path: string): Promise<FileIdentity> {
  const { dev, ino, size, mtimeNs, ctimeNs } = await stat(path, { bigint: true });
  return { dev, ino, size, mtimeNs, ctimeNs };
}

function sameFile(before: FileIdentity, after: FileIdentity | null): boolean {
  return (
    after !== null &&
    (["dev", "ino", "size", "mtimeNs", "ctimeNs"] as const).every((key) => before[key] === after[key])
  );
}

/**
 * Whether no two staged rows share any of `keys`, in one statement: each key's 64-bit `hash`
 * sorted, and a row whose hash equals the one before it counted. A sort of one integer column,
 * not a GROUP BY of a million groups nor `count(DISTINCT …)`: DuckDB spills both past its memory
 * limit (a distinct count of 10 M keys ran out of memory under a load's 128 MB, issue 19), and
 * the grouping built a hash table of every key. Measured on 1 M staged rows, both keys, two
 * threads under 256 MB (bare DuckDB, 2-core AMD EPYC, five runs each): grouped by hash 323–405
 * ms, sorted 212–247; 10 M rows 3.35–3.39 s against 2.82–3.18. Two keys that differ but share a
 * hash read as a duplicate: the file is then diagnosed by the exact read (records-file.ts), which
 * finds none and loads it, slower but never wrong; the odds are about n² / 2⁶⁵ (3 in 10⁸ for a
 * million rows).
 */
async function keysUnique(connection: DuckDBConnection, staging: string, keys: string[]): Promise<boolean> {
  const duplicates = keys.map(
    (key) => `(SELECT count(*) FROM (SELECT h, lag(h) OVER (ORDER BY h) AS previous
      FROM (SELECT hash(${key}) AS h FROM ${staging})) WHERE h = previous)`,
  );
  const found = await connection.runAndReadAll(`SELECT ${duplicates.join(" + ")}`);
  return Number(found.getColumnsJS()[0]![0]) === 0;
}

/**
 * The flag of a row breaking any rule: a missing value, a SQL rule (`COLUMN_RULES`), an amount
 * read from a binary float with more digits than it holds, a date that is not a calendar day.
 * Vocabularies are checked over distinct values after (`stageRecords`).
 *
 * The rules that are a match of the whole value (`SqlRule.wholeValue`, the date's shape) run as
 * one match of the row: the values joined by U+001F against the patterns joined by it. A value
 * holding U+001F, or a missing one (`concat_ws` skips NULL), leaves the row another number of
 * separators than the pattern has, no pattern matches one, nor an empty value, so the row fails
 * exactly when a value does or is missing. One match a row instead of one a value, and no test
 * of those values' presence of their own: a 1 M-row CSV's flags 60 ms faster (issue 19).
 */
function badRow(source: FileSource): string {
  const matched: { column: RecordColumn; pattern: string }[] = [];
  const terms = RECORD_COLUMNS.filter(
    (column) => column !== "record_id" || source.recordId === "file",
  ).flatMap((column) => {
    // A typed date is a day of DuckDB's calendar; one past year 9999 fails the days' check after.
    if (source.typed.get(column) === "date") return [`${column} IS NULL`];
    if (source.typed.has(column)) return [`${column} IS NULL`, typedNumberBad(column, column)];
    const floatSource = source.floatSources[column];
    const rules = (
      floatSource ? [...COLUMN_RULES[column], floatPrecisionRule(floatSource)] : COLUMN_RULES[column]
    ).filter((rule) => rule.kind === "sql");
    const whole = rules.find((rule) => rule.wholeValue);
    const pattern = column === "date" ? DATE_SHAPE : whole?.wholeValue;
    if (pattern) matched.push({ column, pattern });
    const storedBad = (limit: string) =>
      `${stored(storedColumnOf(column))} IS NULL OR ${stored(storedColumnOf(column))} > ${limit}`;
    return [
      // A missing or empty value fails the row's match, when the column is in it.
      ...(pattern ? [] : [`${column} IS NULL OR ${column} = ''`]),
      ...rules.flatMap((rule) => {
        if (rule === whole) return [];
        return [rule.storedAtMost ? storedBad(rule.storedAtMost) : rule.bad(column)];
      }),
      ...(column === "date" ? [notInCalendar(column)] : []),
    ];
  });
  if (matched.length > 0) {
    const row = `concat_ws(chr(31), ${matched.map(({ column }) => column).join(", ")})`;
    const patterns = matched.map(({ pattern }) => `(?:${pattern})`).join(JOINED_BY);
    terms.push(`NOT regexp_full_match(${row}, '${patterns}')`);
  }
  if (source.recordId === "per-row") {
    // Ids given on some rows only are caught by the count after; a given id obeys its rules.
    const idRules = COLUMN_RULES.record_id.flatMap((rule) =>
      rule.kind === "sql" ? [rule.bad("record_id")] : [],
    );
    terms.push(`record_id IS NOT NULL AND (record_id = '' OR ${idRules.join(" OR ")})`);
  }
  return `coalesce(${terms.map((term) => `(${term})`).join(" OR ")}, true)`;
}

/** How each format's rows are read: DuckDB's own reader, the fields as canonical VARCHAR columns. */
async function fileSource(
  connection: DuckDBConnection,
  request: StagingRequest,
  overFile = false,
): Promise<FileSource> {
  const { path, mapping } = request;
  if (request.format === "csv") {
    const { header, columns } = await csvColumns(path, mapping);
    const types = header.map((_, index) => `'${csvFieldColumn(index)}': 'VARCHAR'`);
    return {
      select: [...columns].map(([column, field]) => `${field} AS ${column}`),
      from: `read_csv($1, auto_detect = false, header = true, columns = {${types.join(", ")}},
        delim = ',', quote = '"', escape = '"', comment = '')`,
      recordId: columns.has("record_id") ? "file" : "derived",
      floatSources: {},
      typed: new Map(),
    };
  }
  if (request.format === "ndjson") {
    const { structure, select, floatSources } = ndjsonColumns(mapping, quoteIdentifier);
    const types = Object.entries(structure).map(([key, type]) => `${sqlString(key)}: '${type}'`);
    return {
      select,
      from: `read_ndjson($1, columns = {${types.join(", ")}})`,
      recordId: mapping["record_id"] === undefined ? "per-row" : "file",
      floatSources,
      typed: new Map(),
    };
  }
  const { columns, select, floatSources, typed } = await parquetColumns(connection, path, mapping);
  return {
    // A typed date, count or amount comes as it is, the rest as text.
    select: [
      ...[...columns.keys()].map((column, index) =>
        typed.has(column) ? `${columns.get(column)} AS ${column}` : select[index]!,
      ),
      ...(overFile ? ["file_row_number"] : []),
    ],
    from: overFile ? `read_parquet(${sqlString(path)}, file_row_number = true)` : "read_parquet($1)",
    recordId: columns.has("record_id") ? "file" : "derived",
    floatSources,
    typed,
  };
}
