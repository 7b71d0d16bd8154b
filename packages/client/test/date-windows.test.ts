import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { addDays, MdqClientError, splitDateRange, toEpochDay } from "../src/index.js";

const length = (window: { from: string; to: string }) => toEpochDay(window.to) - toEpochDay(window.from) + 1;

function code(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof MdqClientError) return error.code;
    throw error;
  }
  return undefined;
}

describe("splitDateRange", () => {
  it("keeps a range of up to 90 days, both ends counted, in one window", () => {
    assert.deepEqual(splitDateRange("2026-05-04", "2026-05-04"), [{ from: "2026-05-04", to: "2026-05-04" }]);
    assert.deepEqual(splitDateRange("2026-08-01", "2026-10-29"), [{ from: "2026-08-01", to: "2026-10-29" }]);
  });

  it("splits 91 days into 90 and 1", () => {
    assert.deepEqual(splitDateRange("2026-08-01", "2026-10-30"), [
      { from: "2026-08-01", to: "2026-10-29" },
      { from: "2026-10-30", to: "2026-10-30" },
    ]);
  });

  it("counts 29 February in leap years and crosses year ends", () => {
    assert.deepEqual(splitDateRange("2023-12-01", "2024-03-01"), [
      { from: "2023-12-01", to: "2024-02-28" },
      { from: "2024-02-29", to: "2024-03-01" },
    ]);
    assert.deepEqual(splitDateRange("2025-12-01", "2026-03-01"), [
      { from: "2025-12-01", to: "2026-02-28" },
      { from: "2026-03-01", to: "2026-03-01" },
    ]);
  });

  it("splits a year into 90-day windows and a remainder", () => {
    const windows = splitDateRange("2026-01-01", "2026-12-31");
    assert.deepEqual(windows.map(length), [90, 90, 90, 90, 5]);
    assert.equal(windows[4]!.to, "2026-12-31");
  });

  it("honours a smaller maxDays", () => {
    assert.deepEqual(splitDateRange("2026-01-01", "2026-01-10", { maxDays: 4 }).map(length), [4, 4, 2]);
  });

  it("ends week-aligned windows on Sundays, so the next starts on a Monday", () => {
    const windows = splitDateRange("2026-01-01", "2026-12-31", { align: "week" });
    assert.equal(windows[0]!.to, "2026-03-29");
    for (const window of windows.slice(1)) assert.equal(new Date(`${window.from}T00:00:00Z`).getUTCDay(), 1);
    for (const window of windows.slice(0, -1))
      assert.equal(new Date(`${window.to}T00:00:00Z`).getUTCDay(), 0);
    assert.deepEqual(windows.slice(1, -1).map(length), [84, 84, 84]);
  });

  it("ends month-aligned windows on a month's last day", () => {
    assert.deepEqual(splitDateRange("2026-01-15", "2026-07-04", { align: "month" }), [
      { from: "2026-01-15", to: "2026-03-31" },
      { from: "2026-04-01", to: "2026-05-31" },
      { from: "2026-06-01", to: "2026-07-04" },
    ]);
  });

  it("refuses a range that ends before it starts, a day that does not exist, and a bad maxDays", () => {
    assert.equal(
      code(() => splitDateRange("2026-05-02", "2026-05-01")),
      "INVALID_DATE_RANGE",
    );
    assert.equal(
      code(() => splitDateRange("2026-02-29", "2026-03-01")),
      "INVALID_CONFIG",
    );
    assert.equal(
      code(() => splitDateRange("2026-1-01", "2026-03-01")),
      "INVALID_CONFIG",
    );
    assert.equal(
      code(() => splitDateRange("2026-01-01", "2026-03-01", { maxDays: 91 })),
      "INVALID_CONFIG",
    );
    assert.equal(
      code(() => splitDateRange("2026-01-01", "2026-03-01", { maxDays: 0 })),
      "INVALID_CONFIG",
    );
  });

  it("covers every day of any range exactly once, in order, with windows of at most maxDays", () => {
    const day = fc.integer({ min: toEpochDay("1999-01-01"), max: toEpochDay("2031-12-31") });
    fc.assert(
      fc.property(
        day,
        fc.integer({ min: 0, max: 800 }),
        fc.integer({ min: 1, max: 90 }),
        fc.constantFrom("day" as const, "week" as const, "month" as const),
        (start, span, maxDays, align) => {
          const from = addDays("1970-01-01", start);
          const to = addDays(from, span);
          const windows = splitDateRange(from, to, { maxDays, align });
          assert.equal(windows[0]!.from, from);
          assert.equal(windows.at(-1)!.to, to);
          for (const [index, window] of windows.entries()) {
            assert.ok(length(window) >= 1 && length(window) <= maxDays);
            if (index > 0) assert.equal(window.from, addDays(windows[index - 1]!.to, 1));
          }
          if (align === "day") assert.equal(windows.length, Math.ceil((span + 1) / maxDays));
        },
      ),
      { numRuns: 500 },
    );
  });
});
