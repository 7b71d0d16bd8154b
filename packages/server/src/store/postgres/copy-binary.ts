/**
 * Statements read through `COPY (…) TO STDOUT`: the planner's parameters written in as literals
 * (`COPY` takes none), and a binary COPY's values handed over as their bytes. node-postgres decodes
 * every value of a result row into a string: a packed records page of 10,000 rows is 1.4 MB of
 * UTF-8 whose campaign names are not ASCII, and decoding it, then encoding it back into the bytes
 * packed-page.ts reads, cost the server 10 ms of its thread, against 4 ms to take the same page's
 * bytes from a COPY.
 */
import type { ClientBase } from "pg";
import pg from "pg";
import type { PlannedSql } from "../query-planner.js";

/**
 * A planned statement with its parameters written in as literals: `COPY` takes no parameters.
 * Each value is quoted by node-postgres's `escapeLiteral` (strings) or is a number the planner bound.
 */
export function withLiterals(client: ClientBase, statement: PlannedSql): string {
  return statement.sql.replace(/\$(\d+)/g, (_, position: string) => {
    const value = statement.params[Number(position) - 1]!;
    return typeof value === "string" ? client.escapeLiteral(value) : String(value);
  });
}

/** A row of a binary COPY: each value's bytes in PostgreSQL's binary format, null for NULL. */
export type BinaryRow = (Uint8Array | null)[];

/** A query whose result is a COPY's data, kept as it arrives (node-postgres ignores it). */
class CopyData extends pg.Query {
  readonly chunks: Buffer[] = [];

  /** A CopyData message: a view of the driver's read buffer, which it reuses, so copied. */
  handleCopyData(message: { chunk: Buffer }): void {
    this.chunks.push(Buffer.from(message.chunk));
  }
}

/**
 * The rows of `statement` read through `COPY (…) TO STDOUT (FORMAT binary)` on `client`: no value
 * is decoded, text stays UTF-8 bytes. Subject to the connection's timeouts like any query.
 */
export async function binaryCopyRows(client: ClientBase, statement: PlannedSql): Promise<BinaryRow[]> {
  const text = `COPY (${withLiterals(client, statement)}) TO STDOUT (FORMAT binary)`;
  const data = await new Promise<Buffer>((resolve, reject) => {
    const copy: CopyData = new CopyData({ text }, (error) =>
      error ? reject(error) : resolve(Buffer.concat(copy.chunks)),
    );
    client.query(copy);
  });
  return binaryRows(data);
}

/** PostgreSQL's binary COPY signature, then a flags word and the header extension's length. */
const SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1");
const HEADER_BYTES = SIGNATURE.length + 8;

/** The rows of a binary COPY's data: its header, tuples of length-prefixed values, a trailer. */
export function binaryRows(data: Buffer): BinaryRow[] {
  if (data.length < HEADER_BYTES || !data.subarray(0, SIGNATURE.length).equals(SIGNATURE))
    throw new Error("not the data of a binary COPY");
  let at = HEADER_BYTES + data.readUInt32BE(SIGNATURE.length + 4);
  const rows: BinaryRow[] = [];
  for (;;) {
    const width = data.readInt16BE(at);
    at += 2;
    if (width === -1) return rows;
    const row: BinaryRow = new Array(width);
    for (let column = 0; column < width; column += 1) {
      const length = data.readInt32BE(at);
      at += 4;
      if (length === -1) {
        row[column] = null;
        continue;
      }
      if (at + length > data.length) throw new Error("a binary COPY's value runs past its data");
      row[column] = data.subarray(at, at + length);
      at += length;
    }
    rows.push(row);
  }
}
