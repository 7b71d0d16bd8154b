/**
 * Parquet from CSV windows through a scratch DuckDB (store/postgres/parquet-from-csv.ts, PostgreSQL's
 * Parquet exports): the rows and types come through, window after window in order, a window's
 * source that fails fails the body before the file could be whole, and a reader that stops early
 * ends the window written ahead and leaves no file or scratch behind. Real DuckDB; the CSV is what
 * PostgreSQL's `COPY ... (FORMAT csv)` writes.
 */
import assert from "node:assert/strict";
import { readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { RECORD_FIELDS } from "@mdq/contract";
import { parquetFromCsv } from "../src/store/postgres/parquet-from-csv.js";
import { PARQUET_ROW_GROUP_ROWS } from "../src/store/reads/export/export-sql.js";

/** A CSV line of the export's columns, as PostgreSQL quotes it. */
function csvLine(values: readonly (string | number)[]): string {
  const cell = (value: string | number) =>
    typeof value === "number" || !/[",\r\n]/.test(value) ? String(value) : `"${value.replaceAll('"', '""')}"`;
  return `${values.map(cell).join(",")}\n`;
}

function row(index: number): (string | number)[] {
  return [
    `rec-${index}`,
    "2026-03-01",
    "GB",
    "google_ads",
    "search",
    `c-${index}`,
    `Campaign ${index}`,
    index,
    index % 7,
    `${index}.25`,
    index / 8,
    `${index * 3}.10`,
    "GBP",
  ];
}

async function* chunks(lines: Iterable<string>, linesPerChunk = 500): AsyncGenerator<Uint8Array> {
  let batch = "";
  let count = 0;
  for (const line of lines) {
    batch += line;
    count += 1;
    if (count === linesPerChunk) {
      yield Buffer.from(batch);
      batch = "";
      count = 0;
    }
  }
  if (batch) yield Buffer.from(batch);
}

async function collect(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const part of body) parts.push(part);
  return Buffer.concat(parts);
}

/** The rows of a Parquet file's bytes, and its columns' types, read by DuckDB. */
async function readParquet(bytes: Buffer, name: string) {
  const path = join(tmpdir(), `mdq-parquet-from-csv-${process.pid}-${name}.parquet`);
  await writeFile(path, bytes);
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    const types = (await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${path}')`))
      .getRowObjectsJS()
      .map((column) => [column["column_name"], column["column_type"]]);
    const rows = (
      await connection.runAndReadAll(`SELECT recordId, strftime(date, '%Y-%m-%d') AS date, campaignName,
        CAST(spend AS VARCHAR) AS spend, conversions, CAST(revenue AS VARCHAR) AS revenue, impressions
        FROM read_parquet('${path}')`)
    ).getRowObjectsJS();
    return { types: Object.fromEntries(types), rows };
  } finally {
    connection.closeSync();
    instance.closeSync();
    await rm(path, { force: true });
  }
}

/** This process's export and scratch work directories (work-dirs.ts). */
async function workDirs(): Promise<string[]> {
  const mine = new RegExp(`^mdq-(?:export|scratch)-${process.pid}-`);
  return (await readdir(tmpdir())).filter((name) => mine.test(name));
}

describe("Parquet from CSV (PostgreSQL's Parquet exports)", () => {
  it("writes the CSV's rows in the export's columns, quoted text and the currency's minor unit kept", async () => {
    const awkward = 'Spring, "launch"\nsecond line — ünïcode';
    const lines = [
      csvLine([
        "rec-1",
        "2026-03-01",
        "GB",
        "google_ads",
        "search",
        "c-1",
        awkward,
        1000,
        12,
        "1234.56",
        0.1,
        "99.99",
        "GBP",
      ]),
      csvLine([
        "rec-2",
        "2026-03-02",
        "US",
        "meta_ads",
        "social",
        "c-2",
        "Plain",
        2147483647,
        0,
        "0.00",
        1e-4,
        "12345678901.01",
        "USD",
      ]),
    ];
    const bytes = await collect(parquetFromCsv([chunks(lines, 1)], "GBP"));
    const { types, rows } = await readParquet(bytes, "types");
    assert.deepEqual(
      RECORD_FIELDS.map((field) => types[field]),
      [
        "VARCHAR",
        "DATE",
        "VARCHAR",
        "VARCHAR",
        "VARCHAR",
        "VARCHAR",
        "VARCHAR",
        "BIGINT",
        "BIGINT",
        "DECIMAL(18,2)",
        "DOUBLE",
        "DECIMAL(18,2)",
        "VARCHAR",
      ],
    );
    assert.deepEqual(rows, [
      {
        recordId: "rec-1",
        date: "2026-03-01",
        campaignName: awkward,
        spend: "1234.56",
        conversions: 0.1,
        revenue: "99.99",
        impressions: 1000n,
      },
      {
        recordId: "rec-2",
        date: "2026-03-02",
        campaignName: "Plain",
        spend: "0.00",
        conversions: 1e-4,
        revenue: "12345678901.01",
        impressions: 2147483647n,
      },
    ]);
    const yen = await readParquet(
      await collect(parquetFromCsv([chunks([csvLine(row(7)).replace("7.25", "7")])], "JPY")),
      "yen",
    );
    assert.equal(yen.types["spend"], "DECIMAL(18,0)");
  });

  it("writes many windows and row groups in order", async () => {
    const count = PARQUET_ROW_GROUP_ROWS * 3 + 17;
    const lines = Array.from({ length: count }, (_, index) => csvLine(row(index)));
    const windows = [lines.slice(0, 4096), lines.slice(4096, 4097), lines.slice(4097)].map((window) =>
      chunks(window),
    );
    const { rows } = await readParquet(await collect(parquetFromCsv(windows, "GBP")), "many");
    assert.equal(rows.length, count);
    assert.deepEqual(
      rows.map((found) => found["recordId"]),
      lines.map((_, index) => `rec-${index}`),
    );
  });

  it("fails the body, never ending the file, when a window's source fails after rows were sent", async () => {
    let sourceEnded = false;
    let firstReceived = () => {};
    const received: Uint8Array[] = [];
    const sent = new Promise<void>((resolve) => {
      firstReceived = resolve;
    });
    async function* failing(): AsyncGenerator<Uint8Array> {
      try {
        yield* chunks([csvLine(row(0))]);
        // The database fails once the body has begun (or after 10 s, and the test fails below).
        await Promise.race([sent, new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
        throw new Error("the database went away");
      } finally {
        sourceEnded = true;
      }
    }
    await assert.rejects(async () => {
      const first = chunks(
        Array.from({ length: PARQUET_ROW_GROUP_ROWS * 3 }, (_, index) => csvLine(row(index))),
      );
      for await (const part of parquetFromCsv([first, failing()], "GBP")) {
        received.push(part);
        firstReceived();
      }
    }, /the database went away/);
    const bytes = Buffer.concat(received);
    assert.ok(bytes.length > 0, "row groups were sent before the failure");
    assert.equal(bytes.subarray(0, 4).toString("latin1"), "PAR1");
    assert.notEqual(
      bytes.subarray(-4).toString("latin1"),
      "PAR1",
      "no footer: no reader takes it for a file",
    );
    await assert.rejects(readParquet(bytes, "cut"));
    assert.equal(sourceEnded, true);
    assert.deepEqual(await workDirs(), []);
  });

  it("ends the window written ahead, asks no other and leaves no file or scratch behind when the reader stops early", async () => {
    let aheadEnded = false;
    let lastAsked = false;
    async function* endless(): AsyncGenerator<Uint8Array> {
      try {
        for (let index = 0; ; index += 500) {
          yield Buffer.from(
            Array.from({ length: 500 }, (_, offset) => csvLine(row(index + offset))).join(""),
          );
        }
      } finally {
        aheadEnded = true;
      }
    }
    async function* last(): AsyncGenerator<Uint8Array> {
      lastAsked = true;
      yield* chunks([csvLine(row(1))]);
    }
    for await (const part of parquetFromCsv([chunks([csvLine(row(0))]), endless(), last()], "GBP")) {
      assert.ok(part.length > 0);
      break;
    }
    assert.equal(aheadEnded, true);
    assert.equal(lastAsked, false);
    assert.deepEqual(await workDirs(), []);
  });
});
