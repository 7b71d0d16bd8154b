/**
 * A packed records page read into columns (store/packed-page.ts): each value found between its
 * separators whatever its length and where it falls in the bytes' four-byte words, text kept as
 * the page's bytes marked plain exactly when no byte of it is one JSON escapes, text read as
 * strings the same whether made anew or taken again from the same bytes.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { textValue, type Utf8Column } from "../src/store/model/store.js";
import { PackedKind, packedPages } from "../src/store/reads/records/packed-page.js";
import { PACKED_VALUE_SEPARATOR } from "../src/store/sql/packed-format.js";

/** The bytes of `rows` packed as the planner packs them: every value parted by the separator. */
function packed(rows: readonly (readonly string[])[]): Buffer {
  return Buffer.from(rows.map((row) => row.join(PACKED_VALUE_SEPARATOR)).join(PACKED_VALUE_SEPARATOR));
}

/** Characters JSON escapes, multi-byte UTF-8 and plain ASCII, any of them anywhere in a value. */
const character = fc.oneof(
  fc.constantFrom('"', "\\", "\n", "\t", "\u0000", "\u0002", "\u001f", "\u007f", "é", "€", "😀", "\u2028"),
  fc.string({ unit: "binary", minLength: 1, maxLength: 1 }).filter((text) => text !== PACKED_VALUE_SEPARATOR),
  fc.constantFrom("a", "0", "-", " "),
);
const text = fc.string({ unit: character, maxLength: 11 });
/** Text read as strings (a source currency, a day): a few values, short and long, coming back. */
const repeated = fc.constantFrom("EUR", "GBP", "", "é", "😀ab", "abcdef", "abcdefg", "2025-01-01", "\u0000x");

/** Whether JSON.stringify escapes `character`: a quote, a backslash, a control character. */
function escapedInJson(character: string): boolean {
  return character < " " || character === '"' || character === "\\";
}

describe("packed records pages", () => {
  it("finds every value whatever its length and place, and marks a page plain when nothing in it is escaped", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(text, text, fc.integer({ min: -99_999, max: 99_999 }), fc.oneof(text, repeated)), {
          minLength: 1,
          maxLength: 30,
        }),
        fc.integer({ min: 1, max: 7 }),
        (rows, pageSize) => {
          const values = rows.map(([first, second, number, read]) => [first, second, String(number), read]);
          const pages = packedPages(packed(values), rows.length, {
            kinds: [PackedKind.Utf8, PackedKind.Utf8, PackedKind.Number, PackedKind.Text],
            pageSize,
            escaped: false,
          });
          assert.ok(pages);
          assert.equal(pages.length, Math.ceil(rows.length / pageSize));
          pages.forEach((page, index) => {
            const pageRows = values.slice(index * pageSize, (index + 1) * pageSize);
            const [first, second, numbers, strings] = page as [Utf8Column, Utf8Column, number[], string[]];
            pageRows.forEach((row, at) => {
              assert.equal(textValue(first, at), row[0]);
              assert.equal(textValue(second, at), row[1]);
              assert.equal(numbers[at], Number(row[2]));
              assert.equal(strings[at], row[3]);
            });
            const escapes = pageRows.some((row) => [...row.join("")].some(escapedInJson));
            assert.equal(first.plain, !escapes);
            assert.equal(second.plain, !escapes);
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it("answers null when the values are not rows × width (a text value holds the separator)", () => {
    const rows = [
      ["a", "b"],
      ["c", `d${PACKED_VALUE_SEPARATOR}e`],
    ];
    const layout = { kinds: [PackedKind.Utf8, PackedKind.Utf8], pageSize: 5, escaped: false };
    assert.equal(packedPages(packed(rows), 2, layout), null);
    assert.equal(packedPages(packed(rows.slice(0, 1)), 2, layout), null);
  });
});
