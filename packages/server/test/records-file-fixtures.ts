/**
 * Fixtures for the records-file tests: a good row and CSV lines varying it, files written to a
 * temporary directory per test file, Parquet and NDJSON written with DuckDB, and readers that
 * return a file's records or its rejection. Each reader also runs a load's fast path on the file
 * (load/record-staging.ts) and checks that it agrees: the same rows for a good file, "not clean"
 * (or the same whole-file problems) for a bad one.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { openScratch } from "../src/load/file-staging.js";
import type { LoadProblem } from "../src/load/load-errors.js";
import { RecordsNotClean, stageRecords } from "../src/load/record-staging.js";
import {
  checkRecordsRequest,
  type ReadRecordsOptions,
  type RecordsFile,
  RecordsFileError,
  readRecordsFile,
} from "../src/load/records-file.js";
import type { StoredRecord } from "../src/store/model/store.js";

export const HEADER =
  "record_id,date,market,data_source,channel,campaign_id,campaign_name,impressions,clicks,spend,conversions,revenue,currency";

export type Row = Record<string, string>;

export const GOOD: Row = {
  record_id: "r-1",
  date: "2026-03-01",
  market: "GB",
  data_source: "google_ads",
  channel: "search",
  campaign_id: "c-1",
  campaign_name: "Spring sale",
  impressions: "1000",
  clicks: "50",
  spend: "12.34",
  conversions: "2.5",
  revenue: "99.9999",
  currency: "GBP",
};

/** A CSV line of `GOOD` with some fields replaced (quoted when needed). */
export function csvLine(overrides: Row = {}, columns = HEADER.split(",")): string {
  return columns
    .map((column) => {
      const value = overrides[column] ?? GOOD[column] ?? "";
      return /[",\n\r]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
    })
    .join(",");
}

/** The temporary directory of the current test file, set by `useFixtureDir`. */
export let dir: string;
let fileNumber = 0;

/** Creates the fixture directory before the enclosing `describe` and removes it after. */
export function useFixtureDir(): void {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "mdq-records-file-"));
  });
  after(() => rm(dir, { recursive: true, force: true }));
}

/** Writes `content` to a new file with `extension` in the fixture directory. */
export async function write(extension: string, content: string | Buffer): Promise<string> {
  fileNumber += 1;
  const path = join(dir, `file-${fileNumber}.${extension}`);
  await writeFile(path, content);
  return path;
}

/** Every record of an accepted file, and the file. */
export async function readAll(
  path: string,
  options?: ReadRecordsOptions,
): Promise<{ file: RecordsFile; records: StoredRecord[] }> {
  const file = await readRecordsFile(path, options);
  const records: StoredRecord[] = [];
  try {
    for await (const record of file.records()) records.push(record);
  } finally {
    file.close();
  }
  const inStoredOrder = [...records].sort(
    (a, b) =>
      a.date.localeCompare(b.date) || (a.recordId < b.recordId ? -1 : a.recordId > b.recordId ? 1 : 0),
  );
  assert.deepEqual(await fastPath(path, options), inStoredOrder, "the fast path stages other rows");
  return { file, records };
}

/**
 * What a load's fast path makes of a file: the staged rows in stored order when it finds the file
 * clean, "not clean" otherwise, or the `RecordsFileError` of a problem of the whole file.
 */
export async function fastPath(
  path: string,
  options?: ReadRecordsOptions,
): Promise<StoredRecord[] | "not clean" | RecordsFileError> {
  const scratch = await openScratch();
  try {
    await stageRecords(scratch.connection, "staged_records", await checkRecordsRequest(path, options));
    const reader = await scratch.connection.runAndReadAll(
      `SELECT record_id, strftime(date, '%Y-%m-%d') AS date, market, data_source, channel, campaign_id,
        campaign_name, impressions, clicks, spend_e4, conversions_e4, revenue_e4, currency
      FROM staged_records ORDER BY date, record_id`,
    );
    return reader.getRowObjectsJS().map((row) => ({
      recordId: String(row["record_id"]),
      date: String(row["date"]),
      market: String(row["market"]),
      dataSource: String(row["data_source"]),
      channel: String(row["channel"]),
      campaignId: String(row["campaign_id"]),
      campaignName: String(row["campaign_name"]),
      impressions: Number(row["impressions"]),
      clicks: Number(row["clicks"]),
      spendE4: row["spend_e4"] as bigint,
      conversionsE4: row["conversions_e4"] as bigint,
      revenueE4: row["revenue_e4"] as bigint,
      currency: String(row["currency"]) as StoredRecord["currency"],
    }));
  } catch (error) {
    if (error instanceof RecordsNotClean) return "not clean";
    if (error instanceof RecordsFileError) return error;
    throw error;
  } finally {
    scratch.close();
  }
}

/** The error a rejected file gives; fails the test if the file is accepted. */
export async function rejection(path: string, options?: ReadRecordsOptions): Promise<RecordsFileError> {
  try {
    const file = await readRecordsFile(path, options);
    file.close();
  } catch (error) {
    assert.ok(error instanceof RecordsFileError, `expected a RecordsFileError, got ${String(error)}`);
    const fast = await fastPath(path, options);
    if (fast !== "not clean") {
      assert.ok(fast instanceof RecordsFileError, `the fast path accepted ${path}`);
      assert.deepEqual(fast.errors, error.errors);
    }
    return error;
  }
  assert.fail(`${path} was accepted`);
}

/** The problems a rejected file reports. */
export async function problemsOf(path: string, options?: ReadRecordsOptions): Promise<LoadProblem[]> {
  return (await rejection(path, options)).errors;
}

/** Runs SQL against a throw-away DuckDB (to write Parquet and NDJSON fixtures). */
export async function duckdb(sql: string): Promise<void> {
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    await connection.run(sql);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

export const EXPECTED_GOOD: StoredRecord = {
  recordId: "r-1",
  date: "2026-03-01",
  market: "GB",
  dataSource: "google_ads",
  channel: "search",
  campaignId: "c-1",
  campaignName: "Spring sale",
  impressions: 1000,
  clicks: 50,
  spendE4: 123400n,
  conversionsE4: 25000n,
  revenueE4: 999999n,
  currency: "GBP",
};
