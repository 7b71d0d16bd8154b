/**
 * Streams records into a (staging) table with `COPY ... FROM STDIN` in PostgreSQL's text format:
 * rows are encoded as they arrive and written in chunks, with the socket's backpressure, so a load
 * of any size holds only a chunk in memory. A source that fails mid-way aborts the COPY. A checked
 * load's files and bytes (`StoredRecordsFile`) are copied as CSV the same way.
 */
import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { PoolClient } from "pg";
import { from as copyFrom } from "pg-copy-streams";
import type { StoredRecord, StoredRows } from "../model/store.js";
import { STAGING_COLUMNS } from "../writes/record-replace.js";
import { UNBOUNDED_QUERY } from "./postgres-pool.js";

/** Rows per chunk written to the socket (~20 KB of text). */
const CHUNK_ROWS = 200;

const SPECIAL = /[\\\n\r\t]/;
const ESCAPES: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** A text value in COPY text format: backslash, newline, carriage return and tab escaped. */
function copyText(value: string): string {
  return SPECIAL.test(value) ? value.replace(/[\\\n\r\t]/g, (character) => ESCAPES[character]!) : value;
}

/** One record as a line of COPY text format, in the order of `STAGING_COLUMNS`. */
function encodeRecord(record: StoredRecord): string {
  return `${copyText(record.recordId)}\t${record.date}\t${copyText(record.market)}\t${copyText(
    record.dataSource,
  )}\t${copyText(record.channel)}\t${copyText(record.campaignId)}\t${copyText(record.campaignName)}\t${
    record.impressions
  }\t${record.clicks}\t${record.spendE4}\t${record.conversionsE4}\t${record.revenueE4}\t${copyText(
    record.currency,
  )}\n`;
}

/** Copies `records` into `table` on `client` (inside the caller's transaction); returns the count. */
export async function copyRecords(
  client: PoolClient,
  table: string,
  records: AsyncIterable<StoredRecord> | Iterable<StoredRecord>,
): Promise<number> {
  let count = 0;
  async function* chunks(): AsyncGenerator<string> {
    let chunk = "";
    let rows = 0;
    for await (const record of records) {
      chunk += encodeRecord(record);
      count += 1;
      rows += 1;
      if (rows === CHUNK_ROWS) {
        yield chunk;
        chunk = "";
        rows = 0;
      }
    }
    if (chunk !== "") yield chunk;
  }
  await pipeline(Readable.from(chunks()), client.query(copyStatement(table, STAGING_COLUMNS, "")));
  return count;
}

/**
 * Copies headerless CSV (as DuckDB writes it: a file's path, or bytes as they are written) into
 * `columns` of `table`, streamed with the socket's backpressure; returns the count. Bytes that
 * fail abort the COPY; a COPY that fails stops the bytes, and has once this rejects. `table` and
 * `columns` are ours, never input.
 */
export async function copyCsv(
  client: PoolClient,
  table: string,
  columns: readonly string[],
  csv: StoredRows,
): Promise<number> {
  const copy = copyStatement(table, columns, " (FORMAT csv)");
  if ("path" in csv) {
    await pipeline(createReadStream(csv.path), client.query(copy));
    return copy.rowCount;
  }
  const bytes = csv.bytes();
  try {
    await pipeline(Readable.from(bytes), client.query(copy));
  } finally {
    // The stream's destruction asks the bytes to stop without awaiting it.
    await bytes.return(undefined);
  }
  return copy.rowCount;
}

function copyStatement(table: string, columns: readonly string[], options: string) {
  const copy = copyFrom(`COPY ${table} (${columns.join(", ")}) FROM STDIN${options}`);
  // node-postgres reads a per-query client timeout from the query object: a COPY may be long.
  return Object.assign(copy, UNBOUNDED_QUERY);
}
