import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseDuration } from "../src/index.js";

/** Accepted inputs and their length in milliseconds: every unit, bare seconds, fractions, blanks. */
const ACCEPTED: readonly [string, number][] = [
  ["500ms", 500],
  ["90s", 90_000],
  ["15m", 900_000],
  ["2h", 7_200_000],
  ["7d", 604_800_000],
  ["90", 90_000],
  ["0", 0],
  ["2592000", 2_592_000_000],
  ["1.5m", 90_000],
  ["0.5", 500],
  ["0.0004s", 0],
  ["1.0005s", 1001],
  [" 5m\n", 300_000],
];

/** Inputs outside the grammar: signs, spaces inside, other units or cases, exponents, compounds. */
const REFUSED = ["", "s", "-5s", "5 s", "5S", "5sec", "1e3", ".5s", "5.s", "5w", "1h30m", "0x10", "Infinity"];

describe("parseDuration", () => {
  it("reads a number with an optional unit (seconds by default) as milliseconds", () => {
    for (const [text, milliseconds] of ACCEPTED)
      assert.equal(parseDuration(text), milliseconds, JSON.stringify(text));
  });

  it("refuses anything else", () => {
    for (const text of REFUSED) assert.equal(parseDuration(text), undefined, JSON.stringify(text));
  });

  it("refuses a length too large to count exactly", () => {
    assert.equal(parseDuration("99999999999999999999d"), undefined);
  });
});
