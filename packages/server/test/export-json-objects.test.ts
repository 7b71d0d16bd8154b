/**
 * A DuckDB export writes NDJSON with DuckDB's own JSON writer (`COPY ... (FORMAT json)` of
 * export-sql.ts `planExportJsonObjects`), which must write each line exactly as
 * `JSON.stringify` writes the `MarketingRecord`, and as `planExportLines` built it before:
 * numbers in JavaScript's notation (a whole double without DuckDB's `.0`, no exponent below
 * 10²¹), text escaped as JavaScript escapes it. Checked through a real DuckDB over edge values and
 * random doubles and strings.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { type MarketingRecord, RECORD_FIELDS, type RecordField } from "@mdq/contract";
import fc from "fast-check";
import {
  LINE_QUOTE,
  NUMBER_FIELDS,
  planExportJsonObjects,
  planExportLines,
} from "../src/store/export/export-sql.js";
import { DUCKDB_DIALECT } from "../src/store/sql-dialect.js";

/** A row as the export's read yields it (query-planner.ts `planRecordsExport`'s columns). */
type Row = MarketingRecord;

/** The column type of `field` in the export's read: counts BIGINT, the other numbers DOUBLE. */
function columnType(field: RecordField): string {
  if (field === "impressions" || field === "clicks") return "BIGINT";
  return NUMBER_FIELDS.has(field) ? "DOUBLE" : "VARCHAR";
}

function row(values: Partial<Row>): Row {
  return {
    recordId: "r-1",
    date: "2026-01-02",
    market: "GB",
    dataSource: "google_ads",
    channel: "search",
    campaignId: "cmp-1",
    campaignName: "Campaign",
    impressions: 10,
    clicks: 1,
    spend: 1.5,
    conversions: 0,
    revenue: 12,
    currency: "EUR",
    ...values,
  };
}

let directory: string;
let connection: DuckDBConnection;

before(async () => {
  directory = await mkdtemp(join(tmpdir(), "mdq-json-objects-"));
  connection = await (await DuckDBInstance.create(":memory:")).connect();
});
after(async () => {
  connection.closeSync();
  await rm(directory, { recursive: true, force: true });
});

/** `rows` in a table `e_rows`, each value bound as a parameter (doubles exactly). */
async function load(rows: readonly Row[]): Promise<void> {
  await connection.run("DROP TABLE IF EXISTS e_rows");
  await connection.run(
    `CREATE TABLE e_rows (n INTEGER, ${RECORD_FIELDS.map((field) => `"${field}" ${columnType(field)}`).join(", ")})`,
  );
  const appender = await connection.createAppender("e_rows");
  for (const [index, values] of rows.entries()) {
    appender.appendInteger(index);
    for (const field of RECORD_FIELDS) {
      const value = values[field];
      if (columnType(field) === "VARCHAR") appender.appendVarchar(value as string);
      else if (columnType(field) === "BIGINT") appender.appendBigInt(BigInt(value as number));
      else appender.appendDouble(value as number);
    }
    appender.endRow();
  }
  appender.closeSync();
}

/** The export's read over `e_rows`, in its order. */
const READ = {
  sql: `SELECT ${RECORD_FIELDS.map((f) => `"${f}"`).join(", ")} FROM e_rows ORDER BY n`,
  params: [],
};

/** What `rows` are written as: by the JSON writer, and by the lines `planExportLines` builds. */
async function written(rows: readonly Row[]): Promise<{ objects: string; lines: string }> {
  await load(rows);
  const objectsFile = join(directory, "objects.ndjson");
  const linesFile = join(directory, "lines.ndjson");
  const objects = planExportJsonObjects(READ);
  await connection.run(`COPY (${objects.sql}) TO '${objectsFile}' (FORMAT json)`);
  const quote = String.fromCharCode(LINE_QUOTE);
  const lines = planExportLines(READ, DUCKDB_DIALECT);
  await connection.run(
    `COPY (${lines.sql}) TO '${linesFile}' (FORMAT csv, HEADER false, QUOTE '${quote}', ESCAPE '${quote}', DELIMITER '\u0002')`,
  );
  return { objects: await readFile(objectsFile, "utf8"), lines: await readFile(linesFile, "utf8") };
}

/** `rows` as JSON.stringify writes them, a line each. */
function expected(rows: readonly Row[]): string {
  return rows.map((values) => `${JSON.stringify(values)}\n`).join("");
}

async function assertWritten(rows: readonly Row[]): Promise<void> {
  const { objects, lines } = await written(rows);
  const want = expected(rows);
  assert.equal(objects, want);
  assert.equal(lines, want);
}

describe("NDJSON written by DuckDB's JSON writer (DuckDB exports)", () => {
  it("writes numbers as JavaScript does, whole, fractional, past 2^53 and up to 10^21", async () => {
    const numbers = [
      0,
      1,
      -1,
      38,
      100,
      12.5,
      -3.25,
      24.9,
      0.0001,
      0.0005,
      1.73,
      0.1 + 0.2,
      1234.5678,
      999_999_999_999_999,
      999_999_999_999_999.9,
      1e15,
      -1e15,
      1e15 + 2,
      1_000_000_000_000_000.1,
      2 ** 53,
      2 ** 53 + 2,
      -(2 ** 53),
      -2.5e16,
      123_456_789_012_345_680_000,
      9.99e20,
      4_611_686_018_427_388_000,
      2 ** 63,
      1.7e18,
    ];
    await assertWritten(
      numbers.map((spend, index) =>
        row({ recordId: `n-${index}`, spend, revenue: -spend, conversions: Math.abs(spend) }),
      ),
    );
  });

  it("writes random doubles of every magnitude a record holds as JavaScript does", async () => {
    const amount = fc.oneof(
      fc.double({ min: 1e-4, max: 1e21, noDefaultInfinity: true, noNaN: true, maxExcluded: true }),
      fc.integer({ min: -2_000_000_000, max: 2_000_000_000 }).map((n) => n / 100),
      fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }).map((n) => Number(n)),
    );
    const rows = fc
      .sample(fc.tuple(amount, amount, amount), 3000)
      .map(([spend, conversions, revenue], index) =>
        row({ recordId: `r-${index}`, spend, conversions, revenue }),
      );
    await assertWritten(rows);
  });

  it("escapes text as JSON.stringify does: quotes, backslashes, line breaks, tabs, non-ASCII", async () => {
    const names = [
      "",
      'say "hi"',
      "back\\slash",
      "a/b",
      "line\nbreak",
      "carriage\rreturn",
      "tab\there",
      "Acme – Holiday Gifting",
      "emoji 😀 and é",
      "\u2028\u2029",
      "=SUM(A1)",
      '{"json":[1,2]}',
    ];
    await assertWritten(
      names.map((campaignName, index) =>
        row({ recordId: `t-${index}`, campaignName, campaignId: campaignName }),
      ),
    );
    const text = fc.string({
      unit: fc.constantFrom("a", "é", "😀", '"', "\\", "/", "\n", "\r", "\t", ",", "'"),
      maxLength: 30,
    });
    await assertWritten(
      fc
        .sample(fc.tuple(text, text), 500)
        .map(([recordId, campaignName], index) => row({ recordId: `${recordId}-${index}`, campaignName })),
    );
  });
});
