/**
 * Which days a walk's keyset page reads (store/walk-memory.ts `pageDays`): enough days to hold a
 * page without counting the rows of the boundary's day that came before the boundary, or the rest
 * of the range when it holds less than a page.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pageDays } from "../src/store/reads/walk-memory.js";

const DAYS = [
  { day: "2021-03-01", rows: 4 },
  { day: "2021-03-02", rows: 3 },
  { day: "2021-03-03", rows: 5 },
  { day: "2021-03-04", rows: 2 },
];

describe("the days a keyset page spans", () => {
  it("takes days from the newest (DESC) or oldest (ASC) until they hold a page", () => {
    assert.deepEqual(pageDays(DAYS, "DESC", null, 6), { from: "2021-03-03", to: "2021-03-04" });
    assert.deepEqual(pageDays(DAYS, "ASC", null, 7), { from: "2021-03-01", to: "2021-03-02" });
  });

  it("starts at the boundary's day and counts only the days after it", () => {
    const after = { keys: ["2021-03-03"], recordId: "x" };
    assert.deepEqual(pageDays(DAYS, "DESC", after, 4), { from: "2021-03-01", to: "2021-03-03" });
    assert.deepEqual(pageDays(DAYS, "DESC", after, 3), { from: "2021-03-02", to: "2021-03-03" });
    assert.deepEqual(pageDays(DAYS, "DESC", after, 2), { from: "2021-03-02", to: "2021-03-03" });
    assert.deepEqual(pageDays(DAYS, "ASC", after, 2), { from: "2021-03-03", to: "2021-03-04" });
  });

  it("narrows to the rest of the range, through its last day with rows, when that holds less than a page", () => {
    assert.deepEqual(pageDays(DAYS, "DESC", { keys: ["2021-03-02"], recordId: "x" }, 5), {
      from: "2021-03-01",
      to: "2021-03-02",
    });
    assert.deepEqual(pageDays(DAYS, "ASC", null, 100), { from: "2021-03-01", to: "2021-03-04" });
    assert.deepEqual(pageDays(DAYS, "ASC", { keys: ["2021-03-04"], recordId: "x" }, 5), {
      from: "2021-03-04",
      to: "2021-03-04",
    });
  });

  it("leaves the range whole when no day with rows is left", () => {
    assert.equal(pageDays(DAYS, "DESC", { keys: ["2021-02-28"], recordId: "x" }, 5), null);
    assert.equal(pageDays([], "ASC", null, 5), null);
  });
});
