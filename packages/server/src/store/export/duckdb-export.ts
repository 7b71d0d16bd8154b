/**
 * The export's snapshot on DuckDB: a connection of its own (not one of the page readers, so a
 * slow client never starves GraphQL) and one read transaction.
 *
 * The engine writes the body's bytes itself: `COPY (...) TO '<fifo>'` into a named pipe that Node
 * reads (export-pipe.ts), so no value becomes a JavaScript value; only the text lines of the first
 * window are read as a result, so that the first bytes come early (`lines`). The pipe is the
 * backpressure: when the client reads slowly, the pipe fills and DuckDB's writer waits. Formats
 * DuckDB does not write are streamed chunk by chunk (`connection.stream` + `fetchChunk`: DuckDB
 * produces the next chunk only when it is asked for, one chunk ahead of the writer).
 */
import type { DuckDBConnection, DuckDBDataChunk, DuckDBInstance, DuckDBValue } from "@duckdb/node-api";
import { snapshotReader } from "../duckdb/duckdb-store.js";
import type { PlannedSql } from "../query-planner.js";
import { openExportPipe } from "./export-pipe.js";
import { LINE_QUOTE, PARQUET_ROW_GROUP_ROWS } from "./export-sql.js";
import type { ExportSnapshot, ResultColumns } from "./record-export.js";

const QUOTE = String.fromCharCode(LINE_QUOTE);

/**
 * COPY options writing one text column as lines: a quote (`LINE_QUOTE`) and a delimiter that no
 * line holds (loads refuse control characters, and JSON escapes them); only a line holding a CR
 * or LF is quoted, and record-export.ts takes those quotes off. The escape is the quote too
 * (DuckDB's own is `"`, which would double every quote of a CSV line it quotes).
 */
const LINES = `FORMAT csv, HEADER false, QUOTE '${QUOTE}', ESCAPE '${QUOTE}', DELIMITER '\u0002', USE_TMP_FILE false`;

/**
 * `statements` written by DuckDB into a pipe, one COPY after another with `options`, read back as
 * they come (also a scratch DuckDB's, parquet-from-csv.ts).
 */
export async function* copied(
  connection: DuckDBConnection,
  statements: Iterable<PlannedSql>,
  options: string,
): AsyncIterable<Uint8Array> {
  const pipe = await openExportPipe();
  let stopped = false;
  const writing = (async () => {
    for (const statement of statements)
      if (!stopped)
        await connection.run(
          `COPY (${statement.sql}) TO '${pipe.path}' (${options})`,
          statement.params as DuckDBValue[],
        );
  })();
  // The writer's outcome ends the pipe: its end of data, or its failure.
  writing.then(
    () => pipe.endWriting(),
    (error: unknown) => pipe.fail(error),
  );
  try {
    yield* pipe.chunks();
  } finally {
    // A reader that stops early: DuckDB's statement is interrupted, what it still writes drained.
    stopped = true;
    connection.interrupt();
    pipe.drain();
    await writing.catch(() => undefined);
    await pipe.close();
  }
}

/**
 * The results of `statements`, one after another, chunk by chunk with the consumer's pace. One
 * chunk ahead: DuckDB produces the next chunk (on a pool thread) while this one is turned into
 * values and written, instead of each waiting on the other.
 */
async function* streamed(
  connection: DuckDBConnection,
  statements: Iterable<PlannedSql>,
): AsyncIterable<ResultColumns> {
  for (const statement of statements) {
    const result = await connection.stream(statement.sql, statement.params as DuckDBValue[]);
    let next: Promise<DuckDBDataChunk | null> | null = result.fetchChunk();
    try {
      for (;;) {
        const chunk: DuckDBDataChunk | null = await next;
        next = null;
        if (chunk === null || chunk.rowCount === 0) break;
        next = result.fetchChunk();
        yield { rowCount: chunk.rowCount, columns: chunk.getColumns() };
      }
    } finally {
      // Stopped early: the fetch under way ends before the snapshot's connection is closed.
      await next?.catch(() => null);
    }
  }
}

/**
 * The lines of `statements` (one text column each) as the body's bytes: the first statement's
 * read as a result (`streamed`), which DuckDB hands over a chunk at a time as soon as its rows are
 * sorted, the others written by COPY into a pipe (`copied`). A COPY holds its output back until
 * near its end: the first window of a scale-150 export (one day, 3,150 rows) reached the pipe
 * after 118–148 ms of a 133–170 ms statement, so the body's first bytes waited for the whole window.
 */
async function* lines(
  connection: DuckDBConnection,
  statements: readonly PlannedSql[],
  options: string,
): AsyncIterable<Uint8Array> {
  const [first, ...rest] = statements;
  if (first === undefined) return;
  for await (const chunk of streamed(connection, [first]))
    yield Buffer.from(`${chunk.columns[0]!.join("\n")}\n`);
  if (rest.length > 0) yield* copied(connection, rest, options);
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
    stream: (statements) => streamed(connection, statements),
    copyLines: (statements) => lines(connection, [...statements], LINES),
    copyParquet: ({ whole }) =>
      copied(
        connection,
        [whole],
        `FORMAT parquet, ROW_GROUP_SIZE ${PARQUET_ROW_GROUP_ROWS}, USE_TMP_FILE false`,
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
