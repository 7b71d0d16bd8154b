/**
 * Reading a load file into a private in-memory DuckDB so that it can be checked with SQL before
 * anything reaches the store. DuckDB parses CSV (RFC 4180 quoting), NDJSON and Parquet; this
 * module adds what an operator needs on top: the file's own line numbers for every problem.
 */
import { createReadStream, rmSync } from "node:fs";
import { open, stat } from "node:fs/promises";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { DEFAULT_LOAD_MEMORY_MB, LOAD_ALLOCATOR_FLUSH_THRESHOLD } from "../config.js";
import { makeWorkDir } from "../work-dirs.js";
import type { LoadProblem } from "./load-errors.js";

/** A throw-away DuckDB for one file; `close()` frees its memory. */
export interface Scratch {
  connection: DuckDBConnection;
  /** Another connection to the same database (one connection streams one result at a time). */
  connect(): Promise<DuckDBConnection>;
  close(): void;
}

/**
 * Opens an in-memory DuckDB for one load file, capped at `memoryMb` (`MDQ_LOAD_MEMORY_MB`) and
 * spilling to a private temporary directory, which `close()` removes: the memory of a load does
 * not depend on the file's size (issue 19); its allocator gives freed memory back as the DuckDB
 * store's does while it loads (`LOAD_ALLOCATOR_FLUSH_THRESHOLD`). It runs on every core unless
 * `threads` says otherwise (an export's Parquet writer, store/postgres/parquet-from-csv.ts, takes one).
 */
export async function openScratch(
  memoryMb = DEFAULT_LOAD_MEMORY_MB,
  { threads }: { threads?: number } = {},
): Promise<Scratch> {
  const spill = await makeWorkDir("scratch");
  let instance: DuckDBInstance;
  let connection: DuckDBConnection;
  try {
    instance = await DuckDBInstance.create(":memory:", {
      memory_limit: `${memoryMb}MB`,
      allocator_flush_threshold: LOAD_ALLOCATOR_FLUSH_THRESHOLD,
      temp_directory: spill,
      ...(threads === undefined ? {} : { threads: String(threads) }),
    });
    connection = await instance.connect();
  } catch (error) {
    rmSync(spill, { recursive: true, force: true });
    throw error;
  }
  let closed = false;
  return {
    connection,
    connect: () => instance.connect(),
    close() {
      if (closed) return;
      closed = true;
      connection.closeSync();
      instance.closeSync();
      rmSync(spill, { recursive: true, force: true });
    },
  };
}

/** The problem that makes `path` unusable before it is parsed (missing, not a file, empty), if any. */
export async function checkLoadFile(path: string): Promise<LoadProblem | undefined> {
  try {
    const info = await stat(path);
    if (!info.isFile()) return { line: 0, message: `${path} is not a file` };
    if (info.size === 0) return { line: 0, message: "the file is empty" };
    const handle = await open(path, "r");
    await handle.close();
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { line: 0, message: `no such file: ${path}` };
    if (code === "EACCES" || code === "EPERM")
      return { line: 0, message: `cannot read ${path}: permission denied` };
    return { line: 0, message: `cannot read ${path}: ${(error as Error).message}` };
  }
}

/** An SQL identifier, double-quoted (for names that come from a file). */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** An SQL string literal, for the few places DuckDB takes no parameter (a COPY target, a JSON key path). */
export function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** Column names and types of a relation (a table, or `SELECT …` via DESCRIBE). */
export async function describeColumns(
  connection: DuckDBConnection,
  relation: string,
  params: string[] = [],
): Promise<{ name: string; type: string }[]> {
  const reader = await connection.runAndReadAll(`DESCRIBE ${relation}`, params);
  return reader
    .getRowObjectsJS()
    .map((row) => ({ name: String(row["column_name"]), type: String(row["column_type"]) }));
}

const HEADER_READ_BYTES = 1 << 20;
const UTF8_BOM = [0xef, 0xbb, 0xbf];

/**
 * The field names of a CSV file's first line. The header is read here rather than by DuckDB's
 * sniffer, which guesses (and gives up on files with broken rows); the rows are then read with a
 * fixed dialect: comma, double quote, quotes doubled inside quoted fields (RFC 4180 §2).
 */
export async function readCsvHeader(path: string): Promise<string[] | LoadProblem> {
  const handle = await open(path, "r");
  let bytes: Buffer;
  try {
    const buffer = Buffer.alloc(HEADER_READ_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEADER_READ_BYTES, 0);
    bytes = buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  const start = UTF8_BOM.every((byte, index) => bytes[index] === byte) ? UTF8_BOM.length : 0;
  const end = bytes.indexOf(0x0a, start);
  if (end === -1 && bytes.length === HEADER_READ_BYTES) {
    return { line: 1, message: "the header line is longer than 1 MiB" };
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(
      bytes.subarray(start, end === -1 ? undefined : end),
    );
  } catch {
    return { line: 1, message: "the header is not valid UTF-8 (save the file as UTF-8)" };
  }
  if (text.endsWith("\r")) text = text.slice(0, -1);
  if (text.trim() === "") return { line: 1, message: "line 1 must be the header (column names)" };
  const names = splitCsvLine(text);
  if (names === undefined) return { line: 1, message: "the header has an unterminated quoted field" };
  return names;
}

function splitCsvLine(text: string): string[] | undefined {
  const fields: string[] = [];
  let field = "";
  let quoted = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (quoted) {
      if (char !== '"') field += char;
      else if (text[index + 1] === '"') {
        field += '"';
        index += 1;
      } else quoted = false;
    } else if (char === '"') quoted = true;
    else if (char === ",") {
      fields.push(field);
      field = "";
    } else field += char;
  }
  if (quoted) return undefined;
  fields.push(field);
  return fields;
}

/** Column names DuckDB uses for the CSV fields: `c0`, `c1`, … (never a name taken from the file). */
export function csvFieldColumn(index: number): string {
  return `c${index}`;
}

/**
 * Reads the data rows of a CSV file (after its header) into `table`, every field VARCHAR, in file
 * order (`rowid` is the record's index). Rows DuckDB cannot parse (wrong number of fields, invalid
 * UTF-8, stray quotes) are returned as problems with their line numbers; they are not in the table.
 */
export async function readCsvRows(
  connection: DuckDBConnection,
  path: string,
  table: string,
  fieldCount: number,
): Promise<LoadProblem[]> {
  const columns = Array.from({ length: fieldCount }, (_, index) => `'${csvFieldColumn(index)}': 'VARCHAR'`);
  await connection.run(
    `CREATE TABLE ${table} AS SELECT * FROM read_csv($1, auto_detect = false, header = true,
      columns = {${columns.join(", ")}}, delim = ',', quote = '"', escape = '"', comment = '',
      store_rejects = true, rejects_table = 'csv_rejects', rejects_scan = 'csv_reject_scans')`,
    [path],
  );
  return rejectedRows(connection, path);
}

/**
 * Reads every line of a text file into `table` as one VARCHAR column `line` (NULL for an empty
 * line), so that `rowid + 1` is the line number. Used for NDJSON, whose lines DuckDB's JSON
 * reader would renumber by skipping blank ones.
 */
export async function readTextLines(
  connection: DuckDBConnection,
  path: string,
  table: string,
): Promise<LoadProblem[]> {
  // U+0001 cannot appear raw in valid JSON, so no line is ever split in two.
  await connection.run(
    `CREATE TABLE ${table} AS SELECT * FROM read_csv($1, auto_detect = false, header = false,
      columns = {'line': 'VARCHAR'}, delim = '\u0001', quote = '', escape = '', comment = '',
      store_rejects = true, rejects_table = 'csv_rejects', rejects_scan = 'csv_reject_scans')`,
    [path],
  );
  return rejectedRows(connection, path);
}

const REJECT_MESSAGES: Record<string, string> = {
  "INVALID ENCODING": "not valid UTF-8 (save the file as UTF-8)",
  "INVALID UNICODE": "not valid UTF-8 (save the file as UTF-8)",
  "UNQUOTED VALUE": 'a quoted field is not closed properly (a double quote inside a field is written "")',
  "LINE SIZE OVER MAXIMUM": "the line is too long",
};

/** Reject types whose `line_byte_position` DuckDB may report inside the previous line. */
const POSITIONED_BY_BYTE = new Set(["UNQUOTED VALUE"]);

async function rejectedRows(connection: DuckDBConnection, path: string): Promise<LoadProblem[]> {
  const reader = await connection.runAndReadAll(
    `SELECT line, line_byte_position, byte_position, error_type, error_message FROM csv_rejects
      ORDER BY line, column_idx`,
  );
  const rows = reader.getRowObjectsJS();
  if (rows.length === 0) return [];
  // One problem per record DuckDB rejects: an unclosed quote also makes it report the record it
  // swallowed, under the same `line`.
  const firstOfRecord = rows.filter((row, index) => index === 0 || rows[index - 1]!["line"] !== row["line"]);
  const offsetOf = (row: Record<string, unknown>) =>
    Number(
      POSITIONED_BY_BYTE.has(String(row["error_type"])) ? row["byte_position"] : row["line_byte_position"],
    );
  const ordered = [...firstOfRecord].sort((a, b) => offsetOf(a) - offsetOf(b));
  const lines = await linesAtBytes(path, ordered.map(offsetOf));
  const problems: LoadProblem[] = [];
  ordered.forEach((row, index) => {
    const line = lines[index]!;
    if (problems.at(-1)?.line === line) return;
    const type = String(row["error_type"]);
    const detail = String(row["error_message"]);
    const counts = /Expected Number of Columns: (\d+) Found: (\d+)/.exec(detail);
    const message = counts
      ? `expected ${counts[1]} fields, found ${counts[2]}`
      : (REJECT_MESSAGES[type] ?? detail.split("\n")[0]!);
    problems.push({ line, message });
  });
  return problems;
}

/** 1-based line numbers of byte offsets of a file (offsets ascending), read chunk by chunk. */
async function linesAtBytes(path: string, offsets: number[]): Promise<number[]> {
  const lines: number[] = [];
  let line = 1;
  let chunkStart = 0;
  let next = 0;
  const settle = (end: number, bytes: Buffer) => {
    for (; next < offsets.length && offsets[next]! <= end; next += 1) {
      const stop = offsets[next]! - chunkStart;
      let counted = line;
      for (let position = 0; position < stop; position += 1) if (bytes[position] === 0x0a) counted += 1;
      lines.push(counted);
    }
  };
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    if (next === offsets.length) break;
    settle(chunkStart + chunk.length - 1, chunk);
    for (const byte of chunk) if (byte === 0x0a) line += 1;
    chunkStart += chunk.length;
  }
  while (next < offsets.length) {
    lines.push(line);
    next += 1;
  }
  return lines;
}

/**
 * Calls `found(index, line)` with the line on which each CSV record after the header starts, in
 * the order DuckDB reads them (quoted fields may span lines, and empty lines are skipped), reading
 * the file chunk by chunk; stops early when `found` returns false.
 */
async function scanCsvRecordLines(
  path: string,
  found: (index: number, line: number) => boolean,
): Promise<void> {
  let line = 1;
  let recordLine = 1;
  let empty = true;
  let quoted = false;
  // The header is record -1.
  let index = -1;
  const record = (): boolean => {
    const wanted = index < 0 || found(index, recordLine);
    index += 1;
    return wanted;
  };
  for await (const bytes of createReadStream(path) as AsyncIterable<Buffer>) {
    for (let position = 0; position < bytes.length; position += 1) {
      const byte = bytes[position];
      if (byte === 0x22) {
        quoted = !quoted;
        empty = false;
      } else if (byte === 0x0a) {
        if (!quoted) {
          if (!empty && !record()) return;
          recordLine = line + 1;
          empty = true;
        }
        line += 1;
      } else if (byte !== 0x0d) empty = false;
    }
  }
  if (!empty) record();
}

/** The line on which each CSV record after the header starts (for small files: FX rates). */
export async function csvRecordLines(path: string): Promise<number[]> {
  const starts: number[] = [];
  await scanCsvRecordLines(path, (_, line) => starts.push(line) > 0);
  return starts;
}

/**
 * The lines on which the CSV records of the given 0-based indexes start (`undefined` past the
 * last record). Reads the file only up to the last one wanted, and holds only the answers: the
 * lookup of a rejected file's problems, at any size.
 */
export async function csvLinesOfRecords(path: string, indexes: number[]): Promise<(number | undefined)[]> {
  const wanted = new Map<number, number | undefined>(indexes.map((index) => [index, undefined]));
  const last = Math.max(-1, ...indexes);
  await scanCsvRecordLines(path, (index, line) => {
    if (wanted.has(index)) wanted.set(index, line);
    return index < last;
  });
  return indexes.map((index) => wanted.get(index));
}
