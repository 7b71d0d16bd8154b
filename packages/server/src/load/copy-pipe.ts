/**
 * A DuckDB `COPY ... TO` read back by Node while DuckDB writes it, through a named pipe (FIFO) in
 * a private work directory: a PostgreSQL load's checked rows are written by its scratch DuckDB
 * while PostgreSQL's `COPY FROM STDIN` reads them, where before the file was written first and
 * copied after (issue 19: the writing, 1.0–1.7 s of a 1 M-row load, then overlaps the copy).
 *
 * The read end is opened first (non-blocking, as a socket: no thread of libuv's pool waits on
 * it), then a write end this module holds itself, so the reader sees the end of the data only
 * once DuckDB's statement has succeeded and that end is closed. A statement that fails fails the
 * reader instead, so a reader never takes rows cut short for all of them. `mkfifo` is the
 * coreutils command (Node has no call for it).
 */
import { execFile } from "node:child_process";
import { closeSync, constants, openSync } from "node:fs";
import { rm } from "node:fs/promises";
import { Socket } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import type { DuckDBConnection } from "@duckdb/node-api";
import { makeWorkDir } from "../work-dirs.js";
import { sqlString } from "./file-staging.js";

const run = promisify(execFile);

/**
 * The bytes of `COPY (query) TO <pipe> (options)` on `connection`, as DuckDB writes them. The
 * statement starts when the bytes are first asked for; a reader that stops early (its consumer
 * failed) interrupts it and drains what it still writes, so DuckDB never waits on a full pipe nor
 * fails on a broken one, and the statement has ended when the iteration returns.
 */
export async function* copiedThroughPipe(
  connection: DuckDBConnection,
  query: string,
  options: string,
): AsyncGenerator<Uint8Array> {
  const directory = await makeWorkDir("load");
  const path = join(directory, "rows");
  let reader: Socket | undefined;
  let writer: number | null = null;
  const closeWriter = () => {
    if (writer === null) return;
    closeSync(writer);
    writer = null;
  };
  try {
    await run("mkfifo", ["-m", "600", path]);
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    reader = new Socket({ fd, readable: true, writable: false });
    writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  } catch (error) {
    reader?.destroy();
    closeWriter();
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  const pipeReader = reader;
  // USE_TMP_FILE false: DuckDB writes the pipe itself, never a file beside it renamed over it.
  const writing = connection.run(`COPY (${query}) TO ${sqlString(path)} (${options}, USE_TMP_FILE false)`);
  writing.then(closeWriter, (error: unknown) =>
    pipeReader.destroy(error instanceof Error ? error : new Error(String(error))),
  );
  let finished = false;
  try {
    yield* pipeReader.iterator({ destroyOnReturn: false });
    finished = true;
  } finally {
    if (!finished) {
      connection.interrupt();
      pipeReader.on("error", () => undefined);
      pipeReader.on("data", () => undefined);
      pipeReader.resume();
    }
    await writing.catch(() => undefined);
    pipeReader.destroy();
    closeWriter();
    await rm(directory, { recursive: true, force: true });
  }
}
