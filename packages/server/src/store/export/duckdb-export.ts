/**
 * The export's snapshot on DuckDB: a connection of its own (not one of the page readers, so a
 * slow client never starves GraphQL) and one read transaction.
 *
 * The engine writes the body's bytes itself, so no value becomes a JavaScript value: the text
 * formats window by window, each window by `COPY (...) TO '<file>'` into a file of its own that
 * Node then reads (`filed`); the first window is not among them, but read by `marketingRecords`'
 * read path (record-export.ts), so that the first bytes come early. Parquet the same way, window
 * by window into files, joined into one file as they come (parquet-join.ts). Reading is the
 * backpressure: when the client reads slowly, no next window is written. Formats DuckDB does not
 * write (Arrow) are read through the snapshot's `reader` too, page by page.
 */
import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { DuckDBConnection, DuckDBInstance, DuckDBValue } from "@duckdb/node-api";
import { makeWorkDir } from "../../work-dirs.js";
import { snapshotReader } from "../duckdb/duckdb-store.js";
import type { PlannedSql } from "../query-planner.js";
import { DUCKDB_DIALECT } from "../sql-dialect.js";
import { LINE_QUOTE, type LineFormat, PARQUET_ROW_GROUP_ROWS, planExportText } from "./export-sql.js";
import { joinedParquet, WINDOW_READ_BYTES } from "./parquet-join.js";
import type { ExportSnapshot, WindowRead } from "./record-export.js";

const QUOTE = String.fromCharCode(LINE_QUOTE);

/**
 * COPY options writing NDJSON's one text column (`planExportLines`) as lines, LF after each: a
 * quote (`LINE_QUOTE`) and a delimiter that no line holds (JSON escapes control characters), so
 * no line is ever quoted (a line holding a CR or LF would be, and JSON escapes those too).
 */
export const LINES = `FORMAT csv, HEADER false, QUOTE '${QUOTE}', ESCAPE '${QUOTE}', DELIMITER '\u0002', USE_TMP_FILE false`;

/**
 * COPY options writing `planExportCsvCells`'s cells as CSV lines, as csv-writer.ts writes them:
 * DuckDB quotes a field holding the delimiter, the quote, CR or LF, and a field equal to its NULL
 * text, so that text is a control character no cell holds (loads refuse them), or it would quote
 * every empty cell.
 */
const CSV_CELLS = `FORMAT csv, HEADER false, NEW_LINE '\r\n', NULLSTR '\u0003', USE_TMP_FILE false`;

/**
 * `statements` written by DuckDB with `options`, each into a file of its own in a private work
 * directory: the path of each once written, removed when the consumer asks for the next. One
 * window on disk at a time. The next window is written only when the consumer asks for it, so an
 * export that waits for its turn (export/export-turns.ts) runs no statement meanwhile: written
 * ahead while this one was read, a window's statement ran on outside the export's turn. The
 * consumer cannot stop while a statement runs (a generator is only stopped where it yields), so
 * none is ever left running.
 */
async function* windowFiles(
  connection: DuckDBConnection,
  statements: readonly PlannedSql[],
  options: string,
): AsyncIterable<string> {
  const directory = await makeWorkDir("export");
  try {
    for (const [index, statement] of statements.entries()) {
      const path = join(directory, `window-${index}`);
      await connection.run(
        `COPY (${statement.sql}) TO '${path}' (${options})`,
        statement.params as DuckDBValue[],
      );
      yield path;
      await rm(path);
    }
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** `statements` written by DuckDB with `options` (`windowFiles`), their bytes one after another. */
async function* filed(
  connection: DuckDBConnection,
  statements: readonly PlannedSql[],
  options: string,
): AsyncIterable<Uint8Array> {
  for await (const path of windowFiles(connection, statements, options))
    yield* createReadStream(path, { highWaterMark: WINDOW_READ_BYTES });
}

/**
 * The body of a text format for `windows`, each written by COPY (`filed`): NDJSON as
 * `planExportLines`'s lines, CSV as `planExportCsvCells`'s cells, which DuckDB's CSV writer
 * quotes and joins into the same lines. An export's first window is not among them: it is read
 * as a records page (record-export.ts), as COPY holds its output back until its end.
 */
function textBody(
  connection: DuckDBConnection,
  format: LineFormat,
  windows: readonly WindowRead[],
): AsyncIterable<Uint8Array> {
  const planned = windows.map((window) =>
    planExportText(format, window.plan, DUCKDB_DIALECT, window.oversized),
  );
  return filed(connection, planned, format === "ndjson" ? LINES : CSV_CELLS);
}

/** Opens a DuckDB export snapshot on a new connection of `instance`. */
export async function duckDbExportSnapshot(instance: DuckDBInstance): Promise<ExportSnapshot> {
  const connection = await instance.connect();
  let ended = false;
  try {
    await connection.run("BEGIN TRANSACTION");
  } catch (error) {
    connection.closeSync();
    throw error;
  }
  return {
    // An export reuses nothing across snapshots, so it never needs the generation.
    reader: snapshotReader(connection, async () => null),
    copyText: (format, windows) => textBody(connection, format, windows),
    copyParquet: ({ windows }) =>
      joinedParquet(
        windowFiles(
          connection,
          windows,
          `FORMAT parquet, ROW_GROUP_SIZE ${PARQUET_ROW_GROUP_ROWS}, USE_TMP_FILE false`,
        ),
      ),
    async end() {
      if (ended) return;
      ended = true;
      // A read-only transaction: nothing to keep, and closing the connection ends it either way.
      await connection.run("ROLLBACK").catch(() => undefined);
      connection.closeSync();
    },
  };
}
