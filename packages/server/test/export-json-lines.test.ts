/**
 * An export's NDJSON lines (export-sql.ts `planExportLines`, the lines both stores' COPY writes)
 * must each be exactly what `JSON.stringify` writes for the `MarketingRecord`: numbers in
 * JavaScript's notation (a whole double without DuckDB's `.0`, no exponent below 10²¹), text
 * escaped as JavaScript escapes it, whether the line quotes a value itself or asks the engine's
 * `to_json`. Checked through a real DuckDB (its CSV writer, as duckdb-export.ts `LINES` writes) and
 * a real PostgreSQL (the lines' values) over edge values and random doubles and strings.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { type MarketingRecord, RECORD_FIELDS, type RecordField } from "@mdq/contract";
import { connectTo, createTestDatabase, type TestDatabase } from "@mdq/test-support";
import fc from "fast-check";
import type pg from "pg";
import { LINES } from "../src/store/duckdb/duckdb-export.js";
import { NUMBER_FIELDS, planExportLines } from "../src/store/reads/export/export-sql.js";
import { DUCKDB_DIALECT, POSTGRES_DIALECT } from "../src/store/sql/sql-dialect.js";

/** A row as the export's read yields it (store/reads/export/export-plan.ts `planRecordsExport`'s columns). */
type Row = MarketingRecord;

/** The kind of `field` in the export's read: counts integers, the other numbers doubles. */
function columnKind(field: RecordField): "integer" | "double" | "text" {
  if (field === "impressions" || field === "clicks") return "integer";
  return NUMBER_FIELDS.has(field) ? "double" : "text";
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

/** The export's read over a table `e_rows` of the rows, in their order. */
const READ = {
  sql: `SELECT ${RECORD_FIELDS.map((f) => `"${f}"`).join(", ")} FROM e_rows ORDER BY n`,
  params: [],
};

/** An engine's column type of each kind. */
type ColumnTypes = Record<ReturnType<typeof columnKind>, string>;

/** A new table `e_rows` (in place of any before it): the row's place `n`, then each field's column. */
function rowsTable(types: ColumnTypes): string[] {
  const columns = RECORD_FIELDS.map((field) => `"${field}" ${types[columnKind(field)]}`);
  return ["DROP TABLE IF EXISTS e_rows", `CREATE TABLE e_rows (n ${types.integer}, ${columns.join(", ")})`];
}

/** An engine that writes the lines of `rows` (as a table `e_rows`), one after another. */
interface LinesEngine {
  name: string;
  written(rows: readonly Row[]): Promise<string>;
}

/** DuckDB: the rows appended (doubles exactly), the lines written by COPY as an export writes them. */
function duckdbLines(): LinesEngine {
  let directory: string;
  let connection: DuckDBConnection;
  before(async () => {
    directory = await mkdtemp(join(tmpdir(), "mdq-json-lines-"));
    connection = await (await DuckDBInstance.create(":memory:")).connect();
  });
  after(async () => {
    connection.closeSync();
    await rm(directory, { recursive: true, force: true });
  });
  const types = { integer: "BIGINT", double: "DOUBLE", text: "VARCHAR" };
  return {
    name: "DuckDB",
    async written(rows) {
      for (const statement of rowsTable(types)) await connection.run(statement);
      const appender = await connection.createAppender("e_rows");
      for (const [index, values] of rows.entries()) {
        appender.appendBigInt(BigInt(index));
        for (const field of RECORD_FIELDS) {
          const value = values[field];
          const kind = columnKind(field);
          if (kind === "text") appender.appendVarchar(value as string);
          else if (kind === "integer") appender.appendBigInt(BigInt(value as number));
          else appender.appendDouble(value as number);
        }
        appender.endRow();
      }
      appender.closeSync();
      const file = join(directory, "lines.ndjson");
      const lines = planExportLines(READ, DUCKDB_DIALECT);
      await connection.run(`COPY (${lines.sql}) TO '${file}' (${LINES})`);
      return readFile(file, "utf8");
    },
  };
}

/**
 * PostgreSQL: the rows inserted from arrays (a double's text is its shortest round trip, which
 * float8 reads back exactly), the lines read as the values of their SELECT.
 */
function postgresLines(): LinesEngine {
  let database: TestDatabase;
  let client: pg.Client;
  before(async () => {
    database = await createTestDatabase("json_lines");
    client = await connectTo(database.name);
  });
  after(async () => {
    await client.end();
    await database.drop();
  });
  const types = { integer: "bigint", double: "float8", text: "text" };
  return {
    name: "PostgreSQL",
    async written(rows) {
      for (const statement of rowsTable(types)) await client.query(statement);
      const arrays = RECORD_FIELDS.map((field) => rows.map((values) => values[field]));
      await client.query(
        `INSERT INTO e_rows SELECT * FROM unnest($1::bigint[], ${RECORD_FIELDS.map(
          (field, index) => `$${index + 2}::${types[columnKind(field)]}[]`,
        ).join(", ")})`,
        [rows.map((_, index) => index), ...arrays],
      );
      const lines = planExportLines(READ, POSTGRES_DIALECT);
      const result = await client.query<{ line: string }>(lines.sql);
      return result.rows.map(({ line }) => `${line}\n`).join("");
    },
  };
}

/** `rows` as JSON.stringify writes them, a line each. */
function expected(rows: readonly Row[]): string {
  return rows.map((values) => `${JSON.stringify(values)}\n`).join("");
}

for (const engine of [duckdbLines, postgresLines]) {
  const lines = engine();
  describe(`NDJSON lines written by ${lines.name}`, () => {
    async function assertWritten(rows: readonly Row[]): Promise<void> {
      assert.equal(await lines.written(rows), expected(rows));
    }

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
}
