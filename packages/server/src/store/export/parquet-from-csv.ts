/**
 * Parquet from an engine that does not write it (PostgreSQL): the export's rows come as CSV (the
 * engine's `COPY ... TO STDOUT (FORMAT csv)`, in `planExportParquet`'s columns), are fed through a
 * named pipe to a scratch DuckDB, and DuckDB writes the Parquet file into another pipe
 * (`COPY (SELECT * FROM read_csv(...)) TO ... (FORMAT parquet)`), so that no value becomes a
 * JavaScript value on the way. Both pipes carry the client's pace back to the engine.
 *
 * Measured (issue 18, `bench/export.mjs`, brand-acme's 90 days at scale 150 from PostgreSQL, 2-core
 * AMD EPYC): 120–124 k rows/s through HTTP, against 62 k when the rows were read through a cursor
 * and written by hyparquet-writer. The first bytes come later, though (0.5 s against 36 ms): the
 * first row group waits for 16,384 rows, so for the export's second window (and the scratch's
 * start, about 0.15 s); row groups of 4096 rows made the file 40 % larger and came no sooner, as
 * DuckDB's CSV reader fills its buffer before it parses.
 *
 * A failure of the CSV's source fails the body before DuckDB can see the end of its input: a
 * Parquet file is readable once its footer is written, so a source cut short must never end as a
 * smaller whole file.
 */
import { type CurrencyCode, RECORD_FIELDS } from "@mdq/contract";
import { openScratch } from "../../load/file-staging.js";
import { copied } from "./duckdb-export.js";
import { openInputPipe } from "./export-pipe.js";
import { PARQUET_ROW_GROUP_ROWS, parquetColumnTypes } from "./export-sql.js";

/**
 * The scratch DuckDB's memory limit in MB: it holds a row group at a time
 * (`PARQUET_ROW_GROUP_ROWS`), a few MB; the export's own memory stays within issue 18's 64 MB.
 */
const SCRATCH_MEMORY_MB = 64;

/**
 * Bytes DuckDB's CSV reader takes from the pipe at a time: by default it fills 16 MB before it
 * parses a row, so the first row group came after 16 MB of rows (about 1 s). A row is at most a
 * few KB (record-rules.ts: its longest text 256 characters).
 */
const READ_BUFFER_BYTES = 1 << 20;

/** The CSV's columns as `read_csv` takes them: the Parquet file's types (export-sql.ts). */
function csvColumns(currency: CurrencyCode): string {
  const types = parquetColumnTypes(currency);
  return `{${RECORD_FIELDS.map((field) => `'${field}': '${types[field]}'`).join(", ")}}`;
}

/** The Parquet file of the CSV rows of `csv` (no header, RFC 4180 quoting), as it is written. */
export async function* parquetFromCsv(
  csv: AsyncIterable<Uint8Array>,
  currency: CurrencyCode,
): AsyncIterable<Uint8Array> {
  const scratch = await openScratch(SCRATCH_MEMORY_MB, { threads: 1 });
  const input = await openInputPipe().catch((error: unknown) => {
    scratch.close();
    throw error;
  });
  const read = `SELECT * FROM read_csv('${input.path}', header = false, auto_detect = false,
    delim = ',', quote = '"', escape = '"', columns = ${csvColumns(currency)},
    buffer_size = ${READ_BUFFER_BYTES}, max_line_size = ${READ_BUFFER_BYTES})`;
  const parquet = copied(
    scratch.connection,
    [{ sql: read, params: [] }],
    `FORMAT parquet, ROW_GROUP_SIZE ${PARQUET_ROW_GROUP_ROWS}, USE_TMP_FILE false`,
  )[Symbol.asyncIterator]();
  const feeding = input.feed(csv);
  feeding.catch(() => undefined);
  // Settles only when the feeding fails: the source's error, raced against every chunk.
  const fed = feeding.then(() => new Promise<never>(() => undefined));
  try {
    for (;;) {
      const next = await Promise.race([parquet.next(), fed]);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    // DuckDB interrupted and its input closed first, the chunk being read (if any) settles, and
    // then the writer's own cleanup (interrupt, drain, close) can run.
    scratch.connection.interrupt();
    await input.close();
    await parquet.return?.();
    // The source's own cleanup (the engine's COPY ended or its connection marked) comes first.
    await feeding.catch(() => undefined);
    scratch.close();
  }
}
