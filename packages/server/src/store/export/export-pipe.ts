/**
 * A named pipe (FIFO) an engine writes an export into by path, read by Node as a stream: the
 * engine's writer blocks while the pipe is full, so the client's pace is the writer's. And the
 * other way (`openInputPipe`): a pipe Node writes rows into for an engine to read by path.
 *
 * The read end is opened first (non-blocking, so opening needs no writer), then a write end Node
 * holds itself: the reader sees no end of data between the engine's statements (each opens and
 * closes the path), only once Node closes its own write end after the last one (`endWriting`).
 * `mkfifo` is the coreutils command (Node has no call for it), run once per export.
 */
import { execFile } from "node:child_process";
import { once } from "node:events";
import { closeSync, constants, openSync } from "node:fs";
import { rm } from "node:fs/promises";
import { Socket } from "node:net";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { promisify } from "node:util";
import { makeWorkDir } from "../../work-dirs.js";

const run = promisify(execFile);

/** An export's pipe: its path for the engine, its bytes for Node. */
export interface ExportPipe {
  readonly path: string;
  /** The bytes written into the pipe, until the writing ends or fails. */
  chunks(): AsyncIterable<Uint8Array>;
  /** The engine has written everything: the reader ends once it has read it. */
  endWriting(): void;
  /** The writing failed: the reader fails with `error`. */
  fail(error: unknown): void;
  /**
   * Reads and drops whatever is written from now on: a reader that stopped early keeps the pipe
   * open until the engine's statement has stopped, so the engine never waits on a full pipe, nor
   * on opening a pipe without a reader, nor fails on a broken one.
   */
  drain(): void;
  /** Closes both ends and removes the pipe (idempotent). */
  close(): Promise<void>;
}

/** A named pipe `name` in a new private export directory (removed again if `mkfifo` fails). */
async function makeFifo(name: string): Promise<{ directory: string; path: string }> {
  const directory = await makeWorkDir("export");
  const path = join(directory, name);
  try {
    await run("mkfifo", ["-m", "600", path]);
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  return { directory, path };
}

/** Makes a pipe in a new private directory and opens its ends. */
export async function openExportPipe(): Promise<ExportPipe> {
  const { directory, path } = await makeFifo("rows");
  let reader: Socket;
  let writer: number | null;
  try {
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    reader = new Socket({ fd, readable: true, writable: false });
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  const closeWriter = () => {
    if (writer === null) return;
    closeSync(writer);
    writer = null;
  };
  let closed = false;
  return {
    path,
    // Not destroyed when the consumer stops early: `drain` reads on.
    chunks: () => reader.iterator({ destroyOnReturn: false }),
    endWriting: closeWriter,
    fail(error) {
      reader.destroy(error instanceof Error ? error : new Error(String(error)));
    },
    drain() {
      // Nobody reads the pipe any more: a later failure of the writer is no one's to hear.
      reader.on("error", () => undefined);
      reader.on("data", () => undefined);
      reader.resume();
    },
    async close() {
      if (closed) return;
      closed = true;
      reader.destroy();
      closeWriter();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** A pipe Node writes into and an engine reads by path (`read_csv('<path>')`). */
export interface InputPipe {
  readonly path: string;
  /**
   * Writes `source` into the pipe, at the reader's pace, once the engine has opened it; then
   * closes the write end: the reader sees the end of the data. When `source` fails, the write end
   * stays open (the reader sees no end, so it cannot take what came for the whole) until `close`.
   */
  feed(source: AsyncIterable<Uint8Array>): Promise<void>;
  /** Stops feeding, closes the write end and removes the pipe (idempotent). */
  close(): Promise<void>;
}

/** How often `feed` looks whether the engine has opened the pipe yet. */
const READER_POLL_MS = 2;

/**
 * Makes a pipe for an engine to read in a new private directory. Its write end is opened once the
 * engine has opened the pipe to read: a reader that opens a pipe with no writer waits for one, so
 * a write end opened, written and closed before the engine came would leave it waiting for ever.
 */
export async function openInputPipe(): Promise<InputPipe> {
  const { directory, path } = await makeFifo("input");
  const stopped = new AbortController();
  let writer: Socket | null = null;
  /** The write end, opened as soon as a reader has the pipe open (ENXIO until then); null once closed. */
  const openWriter = async (): Promise<Socket | null> => {
    while (!stopped.signal.aborted) {
      try {
        const fd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
        writer = new Socket({ fd, readable: false, writable: true });
        writer.on("error", () => undefined);
        return writer;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENXIO") throw error;
        await delay(READER_POLL_MS);
      }
    }
    return null;
  };
  return {
    path,
    async feed(source) {
      const socket = await openWriter();
      if (socket === null) return;
      for await (const chunk of source) {
        if (stopped.signal.aborted) return;
        if (!socket.write(chunk)) await once(socket, "drain", { signal: stopped.signal });
      }
      if (!stopped.signal.aborted) await new Promise<void>((resolve) => socket.end(resolve));
      socket.destroy();
    },
    async close() {
      if (stopped.signal.aborted) return;
      stopped.abort();
      (writer as Socket | null)?.destroy();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
