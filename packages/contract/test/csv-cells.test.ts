import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { neutraliseCsvCell } from "../src/index.js";

describe("neutraliseCsvCell", () => {
  it("prefixes text that begins with = + - @ tab or CR with a quote", () => {
    for (const text of [
      '=HYPERLINK("http://x","y")',
      "+cmd|' /C calc'!A0",
      "-2+3",
      "@SUM(1,2)",
      "\tx",
      "\rx",
    ]) {
      assert.equal(neutraliseCsvCell(text), `'${text}`, JSON.stringify(text));
    }
  });

  it("keeps other text, empty text, and the trigger characters inside a cell", () => {
    for (const text of ["Spring sale", "", "a=b", "x-y", "mail@example.com", " =1"]) {
      assert.equal(neutraliseCsvCell(text), text, JSON.stringify(text));
    }
  });

  it("never prefixes numbers, negative ones included, and writes null as the empty cell", () => {
    assert.equal(neutraliseCsvCell(-3.5), "-3.5");
    assert.equal(neutraliseCsvCell(0), "0");
    assert.equal(neutraliseCsvCell(null), "");
    assert.equal(neutraliseCsvCell(undefined), "");
  });
});
