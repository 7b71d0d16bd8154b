/**
 * Streams records into a (staging) table with `COPY ... FROM STDIN` in PostgreSQL's text format:
 * rows are encoded as they arrive and written in chunks, with the socket's backpressure, so a load
 * of any size holds only a chunk in memory. A source that fails mid-way aborts the COPY.
 */
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { RECORD_COLUMNS } from "@mdq/contract";
import type { PoolClient } from "pg";
import { from as copyFrom } from "pg-copy-streams";
import type { StoredRecord } from "../store.js";
import { UNBOUNDED_QUERY } from "./postgres-pool.js";

const STORED_E4_COLUMNS: ReadonlySet<string> = new Set(["spend", "conversions", "revenue"]);

/** Columns of a staged record, in the order `encodeRecord` writes them: amounts in 1e-4 units (`_e4`). */
export const STAGED_RECORD_COLUMNS = RECORD_COLUMNS.map((column) =>
  STORED_E4_COLUMNS.has(column) ? `${column}_e4` : column,
);

/** Rows per chunk written to the socket (~20 KB of text). */
const CHUNK_ROWS = 200;

const SPECIAL = /[\\\n\r\t]/;
const ESCAPES: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** A text value in COPY text format: backslash, newline, carriage return and tab escaped. */
function copyText(value: string): string {
  return SPECIAL.test(value) ? value.replace(/[\\\n\r\t]/g, (character) => ESCAPES[character]!) : value;
}

/** One record as a line of COPY text format. */
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
  const copy = copyFrom(`COPY ${table} (${STAGED_RECORD_COLUMNS.join(", ")}) FROM STDIN`);
  // node-postgres reads a per-query client timeout from the query object: a COPY may be long.
  Object.assign(copy, UNBOUNDED_QUERY);
  const done = pipeline(Readable.from(chunks()), client.query(copy));
  await done;
  return count;
}
