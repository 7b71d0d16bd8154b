/**
 * A records page's JSON written from its columns (graphql/records-json.ts) against the object
 * path's: `JSON.stringify` of the page's row objects, to the byte. Text kept as a packed read's
 * bytes is written both ways: copied as it is from a plain page, escaped byte by byte from a page
 * holding a character JSON escapes.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { recordObjects, recordsJson } from "../src/graphql/records-json.js";
import type { RecordField } from "../src/store/model/query-request.js";
import type { RecordColumn, RecordsPage, RecordValue, Utf8Column } from "../src/store/model/store.js";
import { PackedKind, packedPages } from "../src/store/reads/records/packed-page.js";
import { PACKED_VALUE_SEPARATOR } from "../src/store/sql/packed-format.js";

/** A row of the pages below: its text as a read keeps it (packed bytes), its numbers as values. */
interface Row {
  recordId: string;
  campaignName: string;
  date: string;
  impressions: RecordValue;
  clicks: RecordValue;
  spend: RecordValue;
  conversions: RecordValue;
}

const TEXT_FIELDS = ["recordId", "campaignName", "date"] as const;

/**
 * A page of `rows` in `fields`' order: its text kept as packed bytes read by store/packed-page.ts
 * (a plain page when nothing in it is escaped), `spend` in minor units of `places`,
 * `conversions` in ten-thousandths, `currency` the same on every row.
 */
function pageOf(rows: readonly Row[], fields: readonly RecordField[], places = 2): RecordsPage {
  const bytes = Buffer.from(
    rows
      .map((row) => TEXT_FIELDS.map((field) => row[field]).join(PACKED_VALUE_SEPARATOR))
      .join(PACKED_VALUE_SEPARATOR),
  );
  const [texts] = packedPages(bytes, rows.length, {
    kinds: TEXT_FIELDS.map(() => PackedKind.Utf8),
    pageSize: Math.max(rows.length, 1),
    escaped: false,
  }) ?? [[]];
  const column = (field: RecordField): RecordColumn => {
    const textAt = (TEXT_FIELDS as readonly string[]).indexOf(field);
    if (textAt >= 0) return (texts?.[textAt] as Utf8Column | undefined) ?? { values: [], places: 0 };
    if (field === "currency") return { values: rows.map(() => "USD"), places: 0 };
    const values = rows.map((row) => row[field as keyof Row]);
    return { values, places: field === "spend" ? places : field === "conversions" ? 4 : 0 };
  };
  return {
    fields,
    rowCount: rows.length,
    columns: fields.map(column),
    totalCount: rows.length,
    dataVersion: "uk.1",
  };
}

/** The object path's bytes: what GraphQL execution and `JSON.stringify` write for the page. */
function objectJson(page: RecordsPage): string {
  return JSON.stringify(recordObjects(page));
}

function assertWritten(page: RecordsPage): void {
  const written = recordsJson(page);
  assert.ok(written, "the page is written as JSON");
  assert.equal(written.toString("utf8"), objectJson(page));
  assert.ok(written.equals(Buffer.from(objectJson(page))), "the same bytes");
}

const FIELDS: readonly RecordField[] = [
  "recordId",
  "campaignName",
  "impressions",
  "date",
  "spend",
  "clicks",
  "conversions",
  "currency",
];

function row(overrides: Partial<Row> = {}): Row {
  return {
    recordId: "acme-20250101-1",
    campaignName: "Acme GB Search – Holiday",
    date: "2025-01-01",
    impressions: 942,
    clicks: 20,
    spend: 123_100,
    conversions: 9900,
    ...overrides,
  };
}

describe("records page JSON", () => {
  it('writes "\\", quotes, control and non-ASCII characters as JSON.stringify does, on plain pages and on others', () => {
    const names = [
      'He said "hi"',
      "back\\slash \\u0041",
      "tab\there, line\nbreak, return\rhere, feed\fand\bbackspace",
      "nul \u0000, unit separator \u001f, escape \u0002b",
      "emoji 🚀, 中文, café, – dash",
      "line separator \u2028 and paragraph \u2029, DEL \u007f, /slashes/",
    ];
    const escaped = pageOf(
      names.map((campaignName, index) => row({ recordId: `id-${index}`, campaignName })),
      FIELDS,
    );
    assert.equal((escaped.columns[0] as Utf8Column).plain, false);
    assertWritten(escaped);
    // Non-ASCII text, DEL and the line separators are written as they are: the page stays plain.
    const plain = pageOf(
      names.slice(4).map((campaignName, index) => row({ recordId: `id-${index}`, campaignName })),
      FIELDS,
    );
    assert.equal((plain.columns[0] as Utf8Column).plain, true);
    assertWritten(plain);
  });

  it("writes any text, short or long, at any place in its page's bytes, plain or not", () => {
    const character = fc.oneof(
      fc.constantFrom('"', "\\", "\n", "\u0000", "\u001f", "\u007f", "é", "€", "😀", "\u2028"),
      fc
        .string({ unit: "binary", minLength: 1, maxLength: 1 })
        .filter((text) => text !== PACKED_VALUE_SEPARATOR),
      fc.constantFrom("a", "b", "0"),
    );
    const text = fc.string({ unit: character, maxLength: 20 });
    const plainText = fc.string({ unit: fc.constantFrom("a", "é", "😀", "-", "0"), maxLength: 20 });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.oneof(text, plainText), plainText, plainText), { maxLength: 12 }),
        (values) => {
          const rows = values.map(([recordId, campaignName, date]) => row({ recordId, campaignName, date }));
          assertWritten(pageOf(rows, FIELDS));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("writes numbers as String writes them, from 32-bit integers to 10^15 and past it", () => {
    const amounts = [
      0,
      -0,
      1,
      -1,
      9,
      10,
      99,
      100,
      105,
      9999,
      10_000,
      43_698,
      43_699,
      99_999_999,
      100_000_000,
      2_147_483_647,
      2_147_483_648,
      -2_147_483_648,
      123_456_789_012,
      999_999_999_999_999,
      1e15,
      -1e15 - 1,
      2 ** 53,
      12.5,
      -0.25,
      1e21,
      5e-324,
    ];
    for (const places of [0, 2, 3, 4]) {
      const rows = amounts.map((spend, index) =>
        row({ spend, conversions: amounts[amounts.length - 1 - index]! }),
      );
      assertWritten(pageOf(rows, FIELDS, places));
    }
    const ints = [0, 7, 10, 99, 100, 9999, 10_000, 99_999_999, 100_000_000, 2_147_483_647, -2_147_483_648];
    assertWritten(
      pageOf(
        ints.map((impressions, index) => row({ impressions, clicks: ints[ints.length - 1 - index]! })),
        FIELDS,
      ),
    );
  });

  it("leaves to the object path a value GraphQL would refuse", () => {
    for (const refused of [
      row({ impressions: 2_147_483_648 }),
      row({ clicks: 1.5 }),
      row({ spend: Number.POSITIVE_INFINITY }),
      row({ conversions: Number.NaN }),
      row({ spend: null }),
    ])
      assert.equal(recordsJson(pageOf([row(), refused], FIELDS)), null);
    const textAsNumber = pageOf([row()], ["recordId"]);
    assert.equal(recordsJson({ ...textAsNumber, fields: ["impressions"] }), null);
  });

  it("writes an empty page, a page of one field shared by every row, and pages in any field order", () => {
    assert.equal(recordsJson(pageOf([], FIELDS))?.toString(), "[]");
    assertWritten(pageOf([row(), row()], ["currency"]));
    assertWritten(pageOf([row(), row({ date: "2025-01-02" })], ["currency", "date", "spend", "recordId"]));
    assertWritten(pageOf([row()], ["spend"]));
  });

  it("writes text values that are strings, a lone surrogate as JSON.stringify escapes it", () => {
    const page = pageOf([row(), row()], ["recordId", "date", "currency"]);
    const dates: RecordValue[] = ['2025-01-01 "a\\b"\n', "half \ud83d pair, whole 😀"];
    assertWritten({ ...page, columns: [page.columns[0]!, { values: dates, places: 0 }, page.columns[2]!] });
  });

  it("grows its buffer within a page of long text to escape", () => {
    const campaignName = `"${"\\\u0002".repeat(200_000)}"`;
    assertWritten(
      pageOf(
        Array.from({ length: 4 }, (_, index) => row({ recordId: `${index}`, campaignName })),
        FIELDS,
      ),
    );
  });
});
