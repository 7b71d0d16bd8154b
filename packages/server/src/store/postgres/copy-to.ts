/**
 * Statements read with `COPY (...) TO STDOUT` through pg-copy-streams: what PostgreSQL writes
 * reaches the caller as the bytes it sent, never decoded. An export streams them (text formats);
 * a packed records page reads its one row in the binary format (`readBinaryCopy`), its text as
 * UTF-8 bytes: as a query result, node-postgres would decode a 5000-row page's text into a string
 * and packed-page.ts encode it back (a sixth of the server's main thread in a PostgreSQL cold
 * walk, bench/README.md issue 17 twelfth pass).
 */
import type { PoolClient } from "pg";
import { to as copyTo } from "pg-copy-streams";
import type { PlannedSql } from "../model/engine.js";
import { endReadTimeout, type UNBOUNDED_QUERY } from "./postgres-pool.js";

/**
 * A planned statement with its parameters written in as literals: `COPY` takes no parameters.
 * Each value is quoted by node-postgres's `escapeLiteral` (strings) or is a number the planner bound.
 */
export function withLiterals(client: PoolClient, statement: PlannedSql): string {
  return statement.sql.replace(/\$(\d+)/g, (_, position: string) => {
    const value = statement.params[Number(position) - 1]!;
    return typeof value === "string" ? client.escapeLiteral(value) : String(value);
  });
}

/**
 * `COPY (statement) TO STDOUT (options)` on `client` as a stream of its bytes, under the client's
 * own read timeout (the statement timeout plus its slack, as any statement), or exempt from it
 * with `UNBOUNDED_QUERY` (an export's COPYs; the session's statement timeout still bounds them).
 * Call `endReadTimeout` with the stream however it ended: node-postgres clears its timer only then.
 */
export function copyStream(
  client: PoolClient,
  statement: PlannedSql,
  options: string,
  timeout: typeof UNBOUNDED_QUERY | Record<string, never> = {},
) {
  return client.query(
    Object.assign(copyTo(`COPY (${withLiterals(client, statement)}) TO STDOUT (${options})`), timeout),
  );
}

/** The binary COPY format's signature, flags and header extension length (PostgreSQL docs, COPY). */
const BINARY_SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1");
const HEADER_BYTES = BINARY_SIGNATURE.length + 8;

/** A row of a binary COPY: each field's bytes (in the type's binary form), or null. */
export type BinaryRow = (Buffer | null)[];

/**
 * The rows of `statement` read with `COPY ... TO STDOUT (FORMAT binary)`, whole: for results of a
 * few rows (a packed page: one), not for streaming. A text field's bytes are its UTF-8 text.
 * @example const [[count, text]] = await readBinaryCopy(client, plan);
 */
export async function readBinaryCopy(client: PoolClient, statement: PlannedSql): Promise<BinaryRow[]> {
  const copy = copyStream(client, statement, "FORMAT binary");
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of copy) chunks.push(chunk as Buffer);
  } finally {
    endReadTimeout(copy);
  }
  return binaryRows(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
}

/** The rows of a whole binary COPY output; throws on bytes that are not one. */
function binaryRows(bytes: Buffer): BinaryRow[] {
  if (bytes.length < HEADER_BYTES || !bytes.subarray(0, BINARY_SIGNATURE.length).equals(BINARY_SIGNATURE))
    throw new Error("COPY did not write its binary format");
  let at = HEADER_BYTES + bytes.readInt32BE(HEADER_BYTES - 4);
  const rows: BinaryRow[] = [];
  for (;;) {
    const fields = bytes.readInt16BE(at);
    at += 2;
    if (fields === -1) return rows;
    const row: BinaryRow = [];
    for (let field = 0; field < fields; field += 1) {
      const length = bytes.readInt32BE(at);
      at += 4;
      if (length === -1) {
        row.push(null);
        continue;
      }
      if (at + length > bytes.length) throw new Error("COPY's binary output ends inside a field");
      row.push(bytes.subarray(at, at + length));
      at += length;
    }
    rows.push(row);
  }
}
