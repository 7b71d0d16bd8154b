/**
 * The JSON writer of records pages answered as text (store/page-text.ts): its numbers are the
 * ones `String` (and so `JSON.stringify`) writes, its strings the ones `JSON.stringify` writes,
 * for any value. The whole pages are compared with the object path's over HTTP in
 * store-differential.test.ts.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { JsonBytes } from "../src/store/page-text.js";

function written(write: (out: JsonBytes) => void): string {
  const out = new JsonBytes(16);
  write(out);
  return out.bytes.toString("utf8", 0, out.length);
}

describe("records pages written as JSON bytes", () => {
  it("writes whole / 10^places exactly as String does, below 10^15", () => {
    const cases: [number, number][] = [
      [0, 2],
      [5, 2],
      [10, 2],
      [100, 2],
      [123_456, 2],
      [1, 4],
      [10_000, 4],
      [999_999_999_999_999, 2],
      [7, 0],
      [-1_250, 2],
    ];
    for (const [whole, places] of cases)
      assert.equal(
        written((out) => out.decimal(whole, places)),
        String(whole / 10 ** places),
        `${whole} ${places}`,
      );
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 999_999_999_999_999 })),
        fc.integer({ min: 0, max: 4 }),
        (whole, places) => written((out) => out.decimal(whole, places)) === String(whole / 10 ** places),
      ),
      { numRuns: 20_000 },
    );
  });

  it("writes any UTF-8 text as JSON.stringify writes the string", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        const bytes = Buffer.from(text);
        // Lone surrogates have no UTF-8 form: such a string is never stored, so never written.
        fc.pre(bytes.toString() === text);
        return written((out) => out.string(bytes, 0, bytes.length)) === JSON.stringify(text);
      }),
      { numRuns: 20_000 },
    );
  });
});
