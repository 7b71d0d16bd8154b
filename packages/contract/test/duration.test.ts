import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseDuration } from "../src/index.js";

describe("parseDuration", () => {
  it("reads every unit, in milliseconds", () => {
    assert.equal(parseDuration("500ms"), 500);
    assert.equal(parseDuration("90s"), 90_000);
    assert.equal(parseDuration("15m"), 900_000);
    assert.equal(parseDuration("2h"), 7_200_000);
    assert.equal(parseDuration("7d"), 604_800_000);
  });

  it("reads a bare number as seconds", () => {
    assert.equal(parseDuration("90"), 90_000);
    assert.equal(parseDuration("0"), 0);
    assert.equal(parseDuration("2592000"), 2_592_000_000);
  });

  it("reads fractions, rounded to a whole millisecond", () => {
    assert.equal(parseDuration("1.5m"), 90_000);
    assert.equal(parseDuration("0.5"), 500);
    assert.equal(parseDuration("0.0004s"), 0);
    assert.equal(parseDuration("1.0005s"), 1001);
  });

  it("ignores surrounding blanks", () => {
    assert.equal(parseDuration(" 5m\n"), 300_000);
  });

  it("refuses anything else", () => {
    for (const text of [
      "",
      "s",
      "-5s",
      "5 s",
      "5S",
      "5sec",
      "1e3",
      ".5s",
      "5.s",
      "5w",
      "1h30m",
      "0x10",
      "Infinity",
    ]) {
      assert.equal(parseDuration(text), undefined, JSON.stringify(text));
    }
  });

  it("refuses a length too large to count exactly", () => {
    assert.equal(parseDuration("99999999999999999999d"), undefined);
  });
});
