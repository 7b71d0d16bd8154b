/**
 * CRLF record ends for PostgreSQL's CSV (store/reads/export/export-sql.ts `crlfRecords`): PostgreSQL's
 * writer ends each record with LF alone, and the export's CSV ends them with CRLF, as csv-writer.ts
 * (csv-stringify) does, while a line break inside a quoted cell stays as it is. The body comes in
 * chunks cut anywhere, so every cut of the text is tried.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { stringify } from "csv-stringify/sync";
import { crlfRecords } from "../src/store/reads/export/export-sql.js";

/** Cells as a spreadsheet would meet them: quotes, commas, line breaks of every kind, empties. */
const ROWS: string[][] = [
  ["rec-1", "plain", "", "12.5"],
  ["rec-2", 'say "hi"', "comma, inside", "-3"],
  ["rec-3", "line\nbreak", "crlf\r\nend", "0"],
  ["rec-4", '"quoted"\n"twice"', "\rCarriage", "7"],
  ["rec-5", "", '""', "naïve – ✓ 😀"],
];

/** The rows as PostgreSQL's `COPY ... (FORMAT csv)` writes them: quoted as RFC 4180, LF after each. */
function postgresCsv(rows: readonly string[][]): string {
  const cell = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
  return rows.map((row) => `${row.map(cell).join(",")}\n`).join("");
}

/** The rows as the export's CSV holds them (csv-writer.ts's options). */
const EXPECTED = stringify(ROWS, { record_delimiter: "\r\n", quoted_match: /[\r\n]/ });

async function* chunksOf(bytes: Buffer, cuts: readonly number[]): AsyncIterable<Uint8Array> {
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    yield bytes.subarray(from, cut);
    from = cut;
  }
}

async function joined(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts).toString("utf8");
}

describe("crlfRecords", () => {
  const source = Buffer.from(postgresCsv(ROWS));

  it("ends every record with CRLF and leaves line breaks inside quoted cells alone", async () => {
    assert.equal(await joined(crlfRecords(chunksOf(source, []))), EXPECTED);
  });

  it("gives the same bytes however the body is cut into chunks", async () => {
    for (let cut = 0; cut <= source.length; cut += 1) {
      const cuts = [cut];
      assert.equal(await joined(crlfRecords(chunksOf(source, cuts))), EXPECTED, `cut at byte ${cut}`);
    }
    const everyByte = Array.from({ length: source.length - 1 }, (_, index) => index + 1);
    assert.equal(await joined(crlfRecords(chunksOf(source, everyByte))), EXPECTED);
  });
});
