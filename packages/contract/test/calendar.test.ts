import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as contract from "../src/index.js";

const { addDays, fromEpochDay, inclusiveDayCount, isCalendarDate, isTimeZone, toEpochDay, todayIn } =
  contract;

describe("calendar days", () => {
  it("accepts real days written YYYY-MM-DD", () => {
    for (const day of ["2026-01-01", "2026-12-31", "2028-02-29", "2000-02-29", "0001-01-01", "9999-12-31"]) {
      assert.equal(isCalendarDate(day), true, day);
    }
  });

  it("refuses days that do not exist", () => {
    for (const day of ["2026-02-29", "1900-02-29", "2026-02-30", "2026-04-31", "2026-13-01", "2026-00-10"]) {
      assert.equal(isCalendarDate(day), false, day);
    }
    assert.equal(isCalendarDate("0000-01-01"), false);
    assert.equal(isCalendarDate("2026-01-00"), false);
  });

  it("refuses other spellings of a day", () => {
    for (const text of [
      "2026-1-01",
      "26-01-01",
      "2026/01/01",
      " 2026-01-01",
      "2026-01-01\n",
      "2026-01-01T00:00Z",
      "",
    ]) {
      assert.equal(isCalendarDate(text), false, JSON.stringify(text));
    }
  });

  it("counts days since 1970-01-01, moves across month, leap-day and year ends, counts both ends", () => {
    const cases: [actual: string | number, expected: string | number][] = [
      [toEpochDay("1970-01-01"), 0],
      [toEpochDay("1969-12-31"), -1],
      [toEpochDay("2026-11-22"), 20_779],
      [fromEpochDay(20_779), "2026-11-22"],
      [addDays("2028-02-28", 1), "2028-02-29"],
      [addDays("2026-02-28", 1), "2026-03-01"],
      [addDays("2026-12-31", 1), "2027-01-01"],
      [addDays("2026-03-01", -1), "2026-02-28"],
      [inclusiveDayCount("2026-01-01", "2026-01-01"), 1],
      [inclusiveDayCount("2026-01-01", "2026-03-31"), 90],
      [inclusiveDayCount("2028-02-01", "2028-03-01"), 30],
    ];
    for (const [index, [actual, expected]] of cases.entries())
      assert.equal(actual, expected, `case ${index}`);
  });

  it("tells today's day in a time zone", () => {
    const now = new Date("2026-11-22T23:30:00Z");
    assert.equal(todayIn("Europe/London", now), "2026-11-22");
    assert.equal(todayIn("Asia/Tokyo", now), "2026-11-23");
    assert.equal(todayIn("America/Los_Angeles", now), "2026-11-22");
    assert.equal(isTimeZone("Europe/London"), true);
    assert.equal(isTimeZone("Mars/Olympus"), false);
  });
});
