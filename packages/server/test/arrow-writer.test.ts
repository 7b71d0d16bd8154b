/**
 * The Arrow writer (export/arrow-writer.ts) against apache-arrow's own reader: Int64 values written
 * as two 32-bit halves (no BigInt) read back as the same integers across the 32-bit edge and up to
 * 2⁵³ − 1, negative ones too, and longer values (text, through BigInt) exactly; days read from the
 * engine's bytes (a `Utf8Column`) or from strings, each run of equal days once.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RECORD_FIELDS, type RecordField } from "@mdq/contract";
import { tableFromIPC } from "apache-arrow";
import { arrowWriter } from "../src/export/arrow-writer.js";
import type { RecordColumn, Utf8Column } from "../src/store/model/store.js";
import type { ExportBatch } from "../src/store/reads/export/record-export.js";

const WHOLE = [
  0,
  1,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32 - 1,
  2 ** 32,
  2 ** 32 + 5,
  2 ** 53 - 1,
  -1,
  -(2 ** 32) - 3,
];
const DAYS = ["2026-01-01", "2026-01-01", "2026-01-02", "2026-02-28", "2026-02-28", "2026-03-01"];

/** `values` as the engine's bytes: each value followed by a one-byte separator. */
function utf8Column(values: readonly string[]): Utf8Column {
  const utf8 = Buffer.from(values.map((value) => `${value}\u001f`).join(""));
  const starts = new Int32Array(values.length + 1);
  for (let row = 0, at = 0; row < values.length; row += 1) {
    starts[row] = at;
    at += Buffer.byteLength(values[row]!) + 1;
    starts[row + 1] = at;
  }
  return { utf8, starts, stride: 1, offset: 0, plain: true };
}

/** A batch of `rowCount` rows: `columns` given, every other field a run of simple values. */
function batchOf(rowCount: number, columns: Partial<Record<RecordField, RecordColumn>>): ExportBatch {
  return {
    fields: RECORD_FIELDS,
    rowCount,
    columns: RECORD_FIELDS.map(
      (field): RecordColumn =>
        columns[field] ??
        (field === "date"
          ? { values: Array.from({ length: rowCount }, () => "2026-01-01"), places: 0 }
          : ["impressions", "clicks", "spend", "conversions", "revenue"].includes(field)
            ? { values: Array.from({ length: rowCount }, (_, row) => row), places: 0 }
            : { values: Array.from({ length: rowCount }, (_, row) => `${field}-${row}`), places: 0 }),
    ),
    totalCount: rowCount,
    dataVersion: "1",
  };
}

/** The stream `writer` writes for `batches`, whole. */
function streamOf(batches: readonly ExportBatch[]): Buffer {
  const writer = arrowWriter();
  const chunks = [writer.start(), ...batches.map((batch) => writer.write(batch)), writer.end()];
  return Buffer.concat(chunks.map((chunk) => (typeof chunk === "string" ? Buffer.from(chunk) : chunk)));
}

describe("Arrow writer", () => {
  it("writes whole numbers as Int64 exactly, past 32 bits, negative, and as text beyond 2⁵³", () => {
    const long = "9007199254740993";
    const values = [...WHOLE, long];
    const table = tableFromIPC(
      streamOf([
        batchOf(values.length, { impressions: { values, places: 0 }, clicks: { values, places: 0 } }),
      ]),
    );
    const expected = values.map((value) => BigInt(value));
    assert.deepEqual([...table.getChild("impressions")!], expected);
    assert.deepEqual([...table.getChild("clicks")!], expected);
  });

  it("writes each day of the engine's bytes or of strings as its Date32, batch after batch", () => {
    const expected = DAYS.map((day) => Date.parse(`${day}T00:00:00Z`));
    for (const date of [utf8Column(DAYS), { values: DAYS, places: 0 }]) {
      // The same column twice: a batch starts its runs of equal days afresh.
      const table = tableFromIPC(streamOf([batchOf(DAYS.length, { date }), batchOf(DAYS.length, { date })]));
      assert.deepEqual([...table.getChild("date")!], [...expected, ...expected]);
    }
  });
});
