/**
 * How a load's rows are inserted in sorted batches of whole days (store/record-replace.ts), so
 * that each sort fits in the load's memory whatever the file's size (issue 19).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { dayBatches } from "../src/store/record-replace.js";

const day = (date: string, rows: number) => ({ day: date, n: BigInt(rows) });

describe("a load's insert batches", () => {
  it("groups consecutive days up to the limit, never splitting a day", () => {
    assert.deepEqual(
      dayBatches(
        [day("2026-01-01", 100), day("2026-01-02", 150), day("2026-01-03", 60), day("2026-01-04", 40)],
        250,
      ),
      [
        ["2026-01-01", "2026-01-02"],
        ["2026-01-03", "2026-01-04"],
      ],
    );
  });

  it("gives a day with more rows than the limit a batch of its own", () => {
    assert.deepEqual(
      dayBatches([day("2026-01-01", 10), day("2026-01-02", 900), day("2026-01-03", 10)], 250),
      [
        ["2026-01-01", "2026-01-01"],
        ["2026-01-02", "2026-01-02"],
        ["2026-01-03", "2026-01-03"],
      ],
    );
  });

  it("has no batch for no days", () => {
    assert.deepEqual(dayBatches([], 250), []);
  });
});
