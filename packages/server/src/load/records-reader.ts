/**
 * The read-back of a checked records file: the staged rows converted to stored types, handed to a
 * store as files it reads natively (`exportLoad`: Parquet or CSV), or record by record
 * (`records()`, for callers that want JavaScript objects).
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import type { StoredFileFormat, StoredRecord, StoredRecordsFile, StoredRows } from "../store/model/store.js";
import { ROLLED_UP_COLUMNS, rolledUpRowsOf } from "../store/sql/rollup-table.js";
import { STAGING_COLUMNS, STORED_ORDER } from "../store/writes/record-replace.js";
import { copiedThroughPipe } from "./copy-pipe.js";
import { type Scratch, sqlString } from "./file-staging.js";
import { AMOUNT_COLUMNS, NATURAL_KEY, RECORD_COLUMNS, type RecordColumn } from "./record-rules.js";
import type { RecordsFileFormat, Staged, TypedColumnType } from "./record-stagers.js";

/** A checked records file, ready to be stored. Call `close()` when done with it. */
export interface RecordsFile {
  format: RecordsFileFormat;
  rowCount: number;
  /** The distinct dates of the records, ascending: the days a load replaces. */
  days: string[];
  /** The records in file order; may be iterated more than once (not concurrently). */
  records(): AsyncIterable<StoredRecord>;
  /**
   * Writes the checked records as `brandId`'s load, in the files a store reads natively
   * (`writeStoredLoad`). DuckDB converts and writes them column by column, spilling to disk past
   * its memory limit: no JavaScript object per row, memory independent of the file's size. CSV
   * rows are written as they are read: `close()` only once the store has read them.
   */
  exportLoad(brandId: string, files: StoredLoadFiles, format: StoredFileFormat): Promise<StoredRows>;
  close(): void;
}

/** The text columns of a stored record, in layout order: all but the counts and the amounts. */
const TEXT_COLUMNS = RECORD_COLUMNS.filter(
  (column) => column !== "impressions" && column !== "clicks" && !AMOUNT_COLUMNS.has(column),
);

/** Rows of text fetched at once (see `readChecked`). */
const TEXT_BLOCK_ROWS = 65_536;

/** Joins the values of a text block; text values cannot contain it (control characters are refused). */
const TEXT_SEPARATOR = "\u001f";

/** How the checked rows are read back: which text columns are dictionary codes, which joined blocks. */
interface ReadPlan {
  dictionaries: Map<RecordColumn, string[]>;
  /** Text columns read as joined blocks, with the SQL expression of each. */
  blocked: { column: RecordColumn; expression: string }[];
}

/** How text becomes a number: `CAST` (checked values) or `TRY_CAST` (NULL for a bad value). */
export type SqlCast = "CAST" | "TRY_CAST";

/**
 * A whole number of a checked count column, as stored: digits, and zeros after a ".", which
 * DuckDB casts to BIGINT exactly (half the time of casting the digits before the "." split off).
 */
const countOf = (x: string, cast: SqlCast = "CAST") => `${cast}(${x} AS BIGINT)`;

/**
 * A checked decimal amount in ten-thousandths, exactly. DuckDB parses a DECIMAL(18,4) about four
 * times faster than it splits the text (a 1 M-row CSV's three amounts: 54 ms against 230, issue
 * 19), and exactly for a checked amount (at most 4 decimals but zeros). Its ten-thousandths fit
 * the type below 10¹⁰ only: an amount above it (up to the rules' 10¹⁴) is done by integer
 * arithmetic on its digits, which `coalesce` evaluates only for the rows its first argument
 * left NULL (`TRY` turns the overflow of their multiplication into NULL).
 */
const tenThousandths = (x: string, cast: SqlCast = "CAST") =>
  `coalesce(TRY(CAST(TRY_CAST(${x} AS DECIMAL(18, 4)) * 10000 AS BIGINT)),
    ${cast}(split_part(${x}, '.', 1) AS BIGINT) * 10000 + ${cast}(rpad(left(split_part(${x}, '.', 2), 4), 4, '0') AS BIGINT))`;

/** The record id of a staged row: the file's, or derived from the natural key (docs/load-format.md). */
export function recordIdOf(given: boolean): string {
  return given ? "record_id" : `substr(sha256(${NATURAL_KEY.join(" || '|' || ")}), 1, 24)`;
}

/**
 * The SELECT list of a stored record (`STAGING_COLUMNS`) over canonical VARCHAR columns: the
 * conversions to stored types, in one place for every path a load takes. A count or amount in
 * `typed` is read with its Parquet type instead (record-stagers.ts `typedColumns`): an
 * integer, or a DECIMAL of at most 4 decimals, times 10,000 exactly. A value too large for a
 * BIGINT of ten-thousandths is NULL or fails the statement: the file is diagnosed either way
 * (record-staging.ts).
 */
export function storedColumns(
  recordId: string,
  cast: SqlCast = "CAST",
  typed: ReadonlyMap<RecordColumn, TypedColumnType> = new Map(),
  as: (storedColumn: string) => string = (storedColumn) => storedColumn,
): string {
  const count = (x: RecordColumn) => (typed.has(x) ? `${cast}(${x} AS BIGINT)` : countOf(x, cast));
  const amount = (x: RecordColumn) => {
    const type = typed.get(x);
    if (type === "integer") return `${cast}(${x} AS BIGINT) * 10000`;
    return type === "decimal" ? `${cast}(${x} * 10000 AS BIGINT)` : tenThousandths(x, cast);
  };
  return `${recordId} AS ${as("record_id")}, ${cast}(date AS DATE) AS ${as("date")},
    market AS ${as("market")}, data_source AS ${as("data_source")}, channel AS ${as("channel")},
    campaign_id AS ${as("campaign_id")}, campaign_name AS ${as("campaign_name")},
    ${count("impressions")} AS ${as("impressions")}, ${count("clicks")} AS ${as("clicks")},
    ${amount("spend")} AS ${as(storedColumnOf("spend"))},
    ${amount("conversions")} AS ${as(storedColumnOf("conversions"))},
    ${amount("revenue")} AS ${as(storedColumnOf("revenue"))}, currency AS ${as("currency")}`;
}

/** The stored column of a file's column: an amount's ten-thousandths (`spend_e4`), or the same name. */
export function storedColumnOf(column: RecordColumn): string {
  return AMOUNT_COLUMNS.has(column) ? `${column}_e4` : column;
}

/** How DuckDB writes a stored load's CSV: no header, as `COPY ... FROM` reads it. */
const CSV_OPTIONS = "FORMAT csv, HEADER false";

/** Where a load's files go (`StoredRecordsFile`): `path`, a Parquet file of its rows. */
export type StoredLoadFiles = Pick<StoredRecordsFile, "rolledUpPath" | "recordIdsPath"> & { path: string };

/**
 * Writes the rows of `query` (`STAGING_COLUMNS` in stored types) as `brandId`'s load, the files a
 * store reads itself (`StoredRecordsFile`): their rollup and their record ids as headerless CSV,
 * then the rows of `records` in `STORED_ORDER`, as a Parquet file at `files.path` or as headerless
 * CSV bytes, written on `connection` as the store reads them (copy-pipe.ts: keep `connection`
 * open until then). `rolledUp`: a table of ours holding the rows rolled up already
 * (`rolledUpRowsOf`'s columns, maybe more), as the load's checks leave them (record-staging.ts);
 * without it, they are rolled up here.
 */
export async function writeStoredLoad(
  connection: DuckDBConnection,
  query: string,
  brandId: string,
  files: StoredLoadFiles,
  format: StoredFileFormat,
  rolledUp?: string,
): Promise<StoredRows> {
  const rollup = rolledUp
    ? `SELECT ${ROLLED_UP_COLUMNS.join(", ")} FROM ${rolledUp}`
    : rolledUpRowsOf(`(${query})`);
  await copyRows(connection, rollup, files.rolledUpPath, "csv");
  await copyRows(connection, `SELECT record_id FROM (${query})`, files.recordIdsPath, "csv");
  const rows = `SELECT ${sqlString(brandId)} AS brand_id, ${STAGING_COLUMNS.join(", ")} FROM (${query})
    ORDER BY ${STORED_ORDER}`;
  if (format === "csv") return { bytes: () => copiedThroughPipe(connection, rows, CSV_OPTIONS) };
  await copyRows(connection, rows, files.path, format);
  return { path: files.path };
}

async function copyRows(
  connection: DuckDBConnection,
  query: string,
  target: string,
  format: StoredFileFormat,
): Promise<void> {
  const options = format === "parquet" ? "FORMAT parquet" : CSV_OPTIONS;
  await connection.run(`COPY (${query}) TO ${sqlString(target)} (${options})`);
}

/**
 * A checked records file over the staged rows. Nothing is converted until the records are asked
 * for: `exportLoad` converts them in the statements that write them.
 */
export async function checkedRecordsFile(
  scratch: Scratch,
  format: RecordsFileFormat,
  staged: Staged,
  rowCount: number,
): Promise<RecordsFile> {
  const { connection } = scratch;
  const recordId = recordIdOf(staged.columns.has("record_id"));
  const days = await distinctDays(scratch);
  let plan: Promise<ReadPlan> | undefined;
  return {
    format,
    rowCount,
    days: days.sort(),
    records: async function* () {
      plan ??= readPlan(scratch, rowCount, recordId);
      yield* readChecked(scratch, await plan);
    },
    exportLoad: (brandId, files, stored) =>
      writeStoredLoad(connection, `SELECT ${storedColumns(recordId)} FROM staged`, brandId, files, stored),
    close: () => scratch.close(),
  };
}

/**
 * Converts the checked rows to stored types (exact integer arithmetic) into the table `checked`,
 * for `records()`.
 *
 * Turning a DuckDB string into a JavaScript string costs far more than reading a number, so text
 * reaches JavaScript in bulk: a column with few distinct values as integer codes into its list of
 * values (an ENUM's dictionary); any other as one joined string per block of rows, split in
 * JavaScript, queried from `staged` block by block while the records are read.
 */
async function readPlan(scratch: Scratch, rowCount: number, recordId: string): Promise<ReadPlan> {
  const { connection } = scratch;
  const candidates = TEXT_COLUMNS.filter((column) => column !== "record_id");
  const distinct = await connection.runAndReadAll(
    `SELECT ${candidates.map((column) => `count(DISTINCT ${column}) AS ${column}`).join(", ")} FROM staged`,
  );
  const distinctCounts = distinct.getRowObjectsJS()[0]!;
  const plan: ReadPlan = {
    dictionaries: new Map(),
    blocked: [{ column: "record_id", expression: recordId }],
  };
  const codes: string[] = [];
  for (const column of candidates) {
    if (Number(distinctCounts[column]) > rowCount / 2) {
      plan.blocked.push({ column, expression: column });
      continue;
    }
    await connection.run(`CREATE TYPE ${column}_values AS ENUM (SELECT DISTINCT ${column} FROM staged)`);
    const values = await connection.runAndReadAll(`SELECT unnest(enum_range(NULL::${column}_values))`);
    plan.dictionaries.set(column, values.getColumnsJS()[0]!.map(String));
    codes.push(`enum_code(CAST(${column} AS ${column}_values)) AS ${column}`);
  }
  const count = (x: string) => `CAST(split_part(${x}, '.', 1) AS INTEGER)`;
  await connection.run(
    `CREATE TABLE checked AS SELECT ${["CAST(row_index AS INTEGER) AS row_index", ...codes].join(", ")},
       ${count("impressions")} AS impressions, ${count("clicks")} AS clicks,
       ${tenThousandths("spend")} AS spend_e4, ${tenThousandths("conversions")} AS conversions_e4,
       ${tenThousandths("revenue")} AS revenue_e4
     FROM staged`,
  );
  return plan;
}

async function distinctDays(scratch: Scratch): Promise<string[]> {
  const reader = await scratch.connection.runAndReadAll("SELECT DISTINCT date FROM staged");
  return reader.getColumnsJS()[0]!.map(String);
}

/** Yields the checked rows in file order: numbers and codes row by row, text block by block. */
async function* readChecked(scratch: Scratch, plan: ReadPlan): AsyncGenerator<StoredRecord> {
  const coded = TEXT_COLUMNS.filter((column) => plan.dictionaries.has(column));
  const rows = await scratch.connection.stream(
    `SELECT row_index, ${[...coded, "impressions", "clicks", "spend_e4", "conversions_e4", "revenue_e4"].join(", ")}
     FROM checked`,
  );
  const textConnection = await scratch.connect();
  const joined = plan.blocked.map(
    ({ expression }) => `string_agg(${expression}, chr(31) ORDER BY row_index)`,
  );
  const blockQuery = `SELECT count(*), ${joined.join(", ")} FROM staged WHERE row_index >= $1 AND row_index < $2`;
  let text: string[][] = [];
  let textIndex = 0;
  let blockEnd = 0;
  let previousRow = -1;
  /** The text of the block of rows starting at `rowIndex`, the current row's index. */
  const nextBlock = async (rowIndex: number): Promise<void> => {
    blockEnd = rowIndex + TEXT_BLOCK_ROWS;
    const reader = await textConnection.runAndReadAll(blockQuery, [rowIndex, blockEnd]);
    const [count, ...values] = reader.getRows()[0]!;
    text = values.map((value) => String(value).split(TEXT_SEPARATOR));
    if (text.some((column) => column.length !== Number(count)))
      throw new Error("checked text does not match rows");
    textIndex = 0;
  };
  const textOf = new Map<RecordColumn, (row: unknown[]) => string>();
  coded.forEach((column, position) => {
    const values = plan.dictionaries.get(column)!;
    textOf.set(column, (row) => values[row[position + 1] as number]!);
  });
  plan.blocked.forEach(({ column }, position) => {
    textOf.set(column, () => text[position]![textIndex]!);
  });
  const numbersAt = coded.length + 1;
  const [recordId, date, market, dataSource, channel, campaignId, campaignName, currency] = TEXT_COLUMNS.map(
    (column) => textOf.get(column)!,
  ) as ((row: unknown[]) => string)[];
  try {
    for (;;) {
      const chunk = await rows.fetchChunk();
      if (chunk === null || chunk.rowCount === 0) return;
      const columns = chunk.getColumns();
      const row: unknown[] = new Array(columns.length);
      for (let index = 0; index < chunk.rowCount; index += 1) {
        for (let column = 0; column < columns.length; column += 1) row[column] = columns[column]![index];
        const rowIndex = row[0] as number;
        if (textIndex >= (text[0]?.length ?? 0)) await nextBlock(rowIndex);
        // Rows and text meet only if rows come in file order: check it rather than trust it.
        if (rowIndex <= previousRow || rowIndex >= blockEnd)
          throw new Error("checked rows out of file order");
        previousRow = rowIndex;
        yield {
          recordId: recordId!(row),
          date: date!(row),
          market: market!(row),
          dataSource: dataSource!(row),
          channel: channel!(row),
          campaignId: campaignId!(row),
          campaignName: campaignName!(row),
          impressions: row[numbersAt] as number,
          clicks: row[numbersAt + 1] as number,
          spendE4: row[numbersAt + 2] as bigint,
          conversionsE4: row[numbersAt + 3] as bigint,
          revenueE4: row[numbersAt + 4] as bigint,
          currency: currency!(row) as StoredRecord["currency"],
        };
        textIndex += 1;
      }
    }
  } finally {
    textConnection.closeSync();
  }
}
