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
 * write (Arrow) are read through the snapshot's readers, one a connection, in windows of pages
 * (export-walk.ts).
 */
import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { DuckDBConnection, DuckDBInstance, DuckDBValue } from "@duckdb/node-api";
import { joinedParquet, WINDOW_READ_BYTES } from "../../parquet/parquet-join.js";
import { makeWorkDir } from "../../work-dirs.js";
import type { PlannedSql } from "../model/engine.js";
import {
  LINE_QUOTE,
  type LineFormat,
  PARQUET_ROW_GROUP_ROWS,
  planExportText,
} from "../reads/export/export-sql.js";
import type { ExportSnapshot, WindowRead } from "../reads/export/record-export.js";
import { DUCKDB_DIALECT } from "../sql/sql-dialect.js";
import { SNAPSHOT_START, snapshotReader } from "./duckdb-snapshot.js";

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
 * The connections an export's windows are written on, all in one snapshot: the first always; the
 * others only while `writeAhead()` says so (the export is the only one open).
 */
interface WindowWriters {
  connections: readonly DuckDBConnection[];
  writeAhead(): boolean;
}

/**
 * `statements` written by DuckDB with `options`, each into a file of its own in a private work
 * directory: the path of each once written, in order, removed when the consumer asks for the next.
 * A window is written when the consumer asks for it, so an export that waits for its turn
 * (export/export-turns.ts) starts no statement meanwhile; while `writers.writeAhead()` holds, the
 * windows after it are written at once on the other connections, each on one core, as DuckDB's own
 * COPY of the range runs on every core (at most one window a connection on disk). When the
 * consumer stops (a generator is only stopped where it yields), the windows still being written
 * are interrupted and awaited, so none is left running.
 */
async function* windowFiles(
  writers: WindowWriters,
  statements: readonly PlannedSql[],
  options: string,
): AsyncIterable<string> {
  const directory = await makeWorkDir("export");
  const idle = [...writers.connections];
  const written: Promise<string>[] = [];
  const running = new Set<DuckDBConnection>();
  const write = (index: number) => {
    const connection = idle.shift()!;
    const statement = statements[index]!;
    const path = join(directory, `window-${index}`);
    running.add(connection);
    const copied = connection
      .run(`COPY (${statement.sql}) TO '${path}' (${options})`, statement.params as DuckDBValue[])
      .then(() => path)
      .finally(() => {
        running.delete(connection);
        idle.unshift(connection);
      });
    // Awaited in its turn; a window written ahead that fails must not surface unhandled meanwhile.
    copied.catch(() => undefined);
    written.push(copied);
  };
  try {
    for (let index = 0; index < statements.length; index += 1) {
      if (written.length === index) write(index);
      while (written.length < statements.length && idle.length > 0 && writers.writeAhead())
        write(written.length);
      const path = await written[index]!;
      yield path;
      await rm(path);
    }
  } finally {
    for (const connection of running) connection.interrupt();
    await Promise.allSettled(written);
    await rm(directory, { recursive: true, force: true });
  }
}

/** `statements` written by DuckDB with `options` (`windowFiles`), their bytes one after another. */
async function* filed(
  writers: WindowWriters,
  statements: readonly PlannedSql[],
  options: string,
): AsyncIterable<Uint8Array> {
  for await (const path of windowFiles(writers, statements, options))
    yield* createReadStream(path, { highWaterMark: WINDOW_READ_BYTES });
}

/**
 * The body of a text format for `windows`, each written by COPY (`filed`): NDJSON as
 * `planExportLines`'s lines, CSV as `planExportCsvCells`'s cells, which DuckDB's CSV writer
 * quotes and joins into the same lines. An export's first window is not among them: it is read
 * as a records page (record-export.ts), as COPY holds its output back until its end.
 */
function textBody(
  writers: WindowWriters,
  format: LineFormat,
  windows: readonly WindowRead[],
): AsyncIterable<Uint8Array> {
  const planned = windows.map((window) =>
    planExportText(format, window.plan, DUCKDB_DIALECT, window.oversized),
  );
  return filed(writers, planned, format === "ndjson" ? LINES : CSV_CELLS);
}

/** How an export's snapshot is opened (duckdb-store.ts `exportSnapshot`). */
export interface ExportConnections {
  /** Connections to write windows on; the first is the snapshot's reader too. */
  connections: number;
  /**
   * Whether no write has been under way since before the first connection's snapshot began: then
   * every connection's snapshot, begun after it, reads the same data as the first.
   */
  sameData(): boolean;
  /** Whether this is the only export open: only then are windows written ahead. */
  alone(): boolean;
}

/** A new connection of `instance` in a read transaction whose snapshot has begun. */
async function snapshotConnection(instance: DuckDBInstance): Promise<DuckDBConnection> {
  const connection = await instance.connect();
  try {
    await connection.run("BEGIN TRANSACTION");
    await connection.run(SNAPSHOT_START);
    return connection;
  } catch (error) {
    connection.closeSync();
    throw error;
  }
}

/** Ends a read transaction and closes its connection. */
async function endSnapshot(connection: DuckDBConnection): Promise<void> {
  // A read-only transaction: nothing to keep, and closing the connection ends it either way.
  await connection.run("ROLLBACK").catch(() => undefined);
  connection.closeSync();
}

/**
 * Opens a DuckDB export snapshot on new connections of `instance`: one, and up to
 * `options.connections` in all when their snapshots read the same data (`sameData`); if a write
 * raced their start, the export reads on the first alone.
 */
export async function duckDbExportSnapshot(
  instance: DuckDBInstance,
  options: ExportConnections,
): Promise<ExportSnapshot> {
  const connections = [await snapshotConnection(instance)];
  try {
    while (connections.length < options.connections) connections.push(await snapshotConnection(instance));
  } catch (error) {
    await Promise.all(connections.map(endSnapshot));
    throw error;
  }
  if (!options.sameData()) await Promise.all(connections.splice(1).map(endSnapshot));
  const writers: WindowWriters = { connections, writeAhead: options.alone };
  let ended = false;
  // An export reuses nothing across snapshots, so it never needs the generation.
  const readers = connections.map((each) => snapshotReader(each, async () => null));
  return {
    readers,
    copyText: (format, windows) => textBody(writers, format, windows),
    copyParquet: ({ windows }) =>
      joinedParquet(
        windowFiles(
          writers,
          windows,
          `FORMAT parquet, ROW_GROUP_SIZE ${PARQUET_ROW_GROUP_ROWS}, USE_TMP_FILE false`,
        ),
      ),
    readAhead: options.alone,
    async end() {
      if (ended) return;
      ended = true;
      await Promise.all(connections.map(endSnapshot));
    },
  };
}
