/**
 * Parquet from an engine that does not write it (PostgreSQL): each window of the export's rows
 * comes as CSV (the engine's `COPY ... TO STDOUT (FORMAT csv)`, in `planExportParquet`'s columns)
 * into a file, a scratch DuckDB writes it as a Parquet file (`COPY (SELECT * FROM read_csv(...))
 * TO ... (FORMAT parquet)`), and the windows' files are joined into one Parquet file as they come
 * (parquet-join.ts), so that no value becomes a JavaScript value on the way and the first bytes
 * come after the first window. At most two windows' files exist at a time (`windowFiles`).
 *
 * Before, the whole range went through two named pipes (the CSV into the scratch DuckDB, its
 * Parquet out) as one file: the first bytes came after the first row group, 16,384 rows into the
 * export's second window (0.4–0.55 s).
 *
 * A failure of a window's source fails the body before the joined file's footer: a Parquet file
 * is readable once its footer is written, so a source cut short must never end as a smaller whole
 * file.
 */
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { type CurrencyCode, RECORD_FIELDS } from "@mdq/contract";
import { openScratch, type Scratch } from "../../load/file-staging.js";
import { joinedParquet } from "../../parquet/parquet-join.js";
import { makeWorkDir } from "../../work-dirs.js";
import { PARQUET_ROW_GROUP_ROWS, parquetColumnTypes } from "../reads/export/export-sql.js";

/**
 * The scratch DuckDB's memory limit in MB: it holds a window's CSV parse and a row group at a
 * time (`PARQUET_ROW_GROUP_ROWS`), a few MB; the export's own memory stays within issue 18's 64 MB.
 */
const SCRATCH_MEMORY_MB = 64;

/** The CSV's columns as `read_csv` takes them: the Parquet file's types (export-sql.ts). */
function csvColumns(currency: CurrencyCode): string {
  const types = parquetColumnTypes(currency);
  return `{${RECORD_FIELDS.map((field) => `'${field}': '${types[field]}'`).join(", ")}}`;
}

/**
 * The paths of the Parquet files of `windows` (each the CSV rows of one window: no header, RFC
 * 4180 quoting), written one at a time as they are asked for; a path's files are removed when the
 * next is asked for, and all of them however the iteration ends. The next window's CSV is written
 * while DuckDB writes this one's Parquet (one window ahead, its file on disk): written one after
 * the other, PostgreSQL and DuckDB took turns on one core each (scales 30 and 150: 71–85 k rows/s,
 * against 79–111 k through the pipes and 83–123 k one window ahead, bench/README.md "18k").
 */
async function* windowFiles(
  windows: readonly AsyncIterable<Uint8Array>[],
  currency: CurrencyCode,
): AsyncIterable<string> {
  const directory = await makeWorkDir("export");
  const stopped = new AbortController();
  const csvPath = (index: number) => join(directory, `window-${index}.csv`);
  /** Writes window `index`'s CSV into its file; its failure is awaited where the file is needed. */
  const writeCsv = (index: number): Promise<void> => {
    const writing = pipeline(
      Readable.from(windows[index]!, { objectMode: false }),
      createWriteStream(csvPath(index)),
      { signal: stopped.signal },
    );
    writing.catch(() => undefined);
    return writing;
  };
  // The first window's CSV is written while the scratch DuckDB opens.
  let writing: Promise<void> | null = windows.length > 0 ? writeCsv(0) : null;
  let scratch: Scratch | null = null;
  try {
    scratch = await openScratch(SCRATCH_MEMORY_MB, { threads: 1 });
    for (let index = 0; index < windows.length; index += 1) {
      await writing;
      writing = index + 1 < windows.length ? writeCsv(index + 1) : null;
      const parquetPath = join(directory, `window-${index}.parquet`);
      await scratch.connection.run(
        `COPY (SELECT * FROM read_csv('${csvPath(index)}', header = false, auto_detect = false,
          delim = ',', quote = '"', escape = '"', columns = ${csvColumns(currency)}))
        TO '${parquetPath}' (FORMAT parquet, ROW_GROUP_SIZE ${PARQUET_ROW_GROUP_ROWS}, USE_TMP_FILE false)`,
      );
      await rm(csvPath(index));
      yield parquetPath;
      await rm(parquetPath);
    }
  } finally {
    // A window still being written ends its source (the engine's COPY) before the files go.
    stopped.abort();
    await writing?.catch(() => undefined);
    scratch?.close();
    await rm(directory, { recursive: true, force: true });
  }
}

/** The Parquet file of the CSV rows of `windows` (in order), window after window as they are written. */
export function parquetFromCsv(
  windows: readonly AsyncIterable<Uint8Array>[],
  currency: CurrencyCode,
): AsyncIterable<Uint8Array> {
  return joinedParquet(windowFiles(windows, currency));
}
