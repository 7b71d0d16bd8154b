/**
 * What only the embedded DuckDB store does: loading records straight from a Parquet file in
 * stored columns (the file's path reaches SQL as a bound parameter, so any path loads, quotes
 * included, and none is read as SQL), and running on the threads its configuration sets.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { DEFAULT_DUCKDB_THREADS, DEFAULT_LOAD_MEMORY_MB, loadConfig } from "../src/config.js";
import { APPEND_MEMORY_MB, type DuckDbStore, openDuckDbStore } from "../src/store/duckdb/duckdb-store.js";
import { loadsParquet, type StoredRecord } from "../src/store/model/store.js";
import { openStore } from "../src/store/open-store.js";
import { ownCampaignRecord } from "./stored-records.js";

/** Writes a Parquet file of stored records (one on 2021-03-01) with DuckDB's own COPY. */
/** A stored record of `date` with id `recordId`, the other fields alike unless `fields` says. */
function storedRecord(recordId: string, date: string, fields: Partial<StoredRecord> = {}): StoredRecord {
  return ownCampaignRecord(recordId, date, "Order", { impressions: 1, clicks: 1, ...fields });
}

async function writeRecordsParquet(target: string): Promise<void> {
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    await connection.run(
      `COPY (SELECT 'r-1' AS record_id, DATE '2021-03-01' AS date, 'DE' AS market, 'google_ads' AS data_source,
        'search' AS channel, 'cmp-a' AS campaign_id, 'Campaign A' AS campaign_name, CAST(100 AS BIGINT) AS impressions,
        CAST(10 AS BIGINT) AS clicks, CAST(12345 AS BIGINT) AS spend_e4, CAST(0 AS BIGINT) AS conversions_e4,
        CAST(0 AS BIGINT) AS revenue_e4, 'EUR' AS currency)
        TO '${target.replaceAll("'", "''")}' (FORMAT parquet)`,
    );
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

describe("the DuckDB store's Parquet loads", () => {
  let work: string;
  let store: DuckDbStore;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "mdq-duckdb-parquet-"));
    store = await openDuckDbStore(":memory:");
  });
  after(async () => {
    await store.close();
    await rm(work, { recursive: true, force: true });
  });

  it("is a capability the DuckDB store has", () => {
    assert.equal(loadsParquet(store), true);
  });

  it("loads a file whose path holds quotes and SQL, binding the path", async () => {
    const path = join(work, "it's'); DROP TABLE records; --.parquet");
    await writeRecordsParquet(path);
    const summary = await store.replaceRecordsFromParquet("brand-q", path, {
      processingDate: "2021-03-02",
      source: path,
    });
    assert.deepEqual(
      { rows: summary.rows, days: summary.days, from: summary.from, to: summary.to },
      { rows: 1, days: 1, from: "2021-03-01", to: "2021-03-01" },
    );
    assert.deepEqual(await store.brandDataStatus("brand-q"), {
      rows: 1,
      firstDay: "2021-03-01",
      lastDay: "2021-03-01",
      lastPublishedAt: null,
      lastPublishedDate: null,
    });
  });

  it("refuses a missing file without changing anything", async () => {
    await assert.rejects(
      store.replaceRecordsFromParquet("brand-q", join(work, "absent.parquet"), {
        processingDate: "2021-03-03",
        source: "absent",
      }),
    );
    assert.equal((await store.brandDataStatus("brand-q")).rows, 1);
  });
});

describe("the DuckDB store's threads (MDQ_DUCKDB_THREADS)", () => {
  /** DuckDB's own `threads` setting on a store opened from configuration `env`. */
  async function threadsOf(env: Record<string, string>): Promise<number> {
    const work = await mkdtemp(join(tmpdir(), "mdq-duckdb-threads-"));
    const store = await openStore(loadConfig({ ...env, MDQ_DATA_DIR: work, MDQ_DATABASE_URL: "" }));
    try {
      const reads = store as unknown as { rows(sql: string): Promise<Record<string, unknown>[]> };
      const [row] = await reads.rows("SELECT current_setting('threads') AS threads");
      return Number(row!["threads"]);
    } finally {
      await store.close();
      await rm(work, { recursive: true, force: true });
    }
  }

  it("runs each statement on one thread by default, on as many as set, and on one per core with 0", async () => {
    assert.equal(await threadsOf({}), DEFAULT_DUCKDB_THREADS);
    assert.equal(await threadsOf({ MDQ_DUCKDB_THREADS: "3" }), 3);
    assert.equal(await threadsOf({ MDQ_DUCKDB_THREADS: "0" }), availableParallelism());
  });

  it("refuses a value that is not a whole number, naming the variable", () => {
    assert.throws(() => loadConfig({ MDQ_DUCKDB_THREADS: "many" }), /MDQ_DUCKDB_THREADS/);
    assert.throws(() => loadConfig({ MDQ_DUCKDB_THREADS: "-1" }), /MDQ_DUCKDB_THREADS/);
  });

  it("writes an export alone on two connections by default (one on one core), as many as set within 1..16", () => {
    assert.equal(loadConfig({}).duckdbExportConnections, Math.min(2, availableParallelism()));
    assert.equal(loadConfig({ MDQ_DUCKDB_EXPORT_CONNECTIONS: "1" }).duckdbExportConnections, 1);
    assert.equal(loadConfig({ MDQ_DUCKDB_EXPORT_CONNECTIONS: "4" }).duckdbExportConnections, 4);
    for (const [value, message] of [
      ["0", "0 is outside 1..16"],
      ["17", "17 is outside 1..16"],
      ["two", '"two" is not a whole number'],
    ])
      assert.throws(
        () => loadConfig({ MDQ_DUCKDB_EXPORT_CONNECTIONS: value }),
        (error: Error) =>
          error.message.includes("MDQ_DUCKDB_EXPORT_CONNECTIONS") && error.message.includes(message!),
      );
  });
});

describe("the DuckDB store's settings during a load (issue 19)", () => {
  let work: string;
  let store: DuckDbStore;
  const SETTINGS = `SELECT current_setting('threads')::VARCHAR AS threads,
    CAST(round(CAST(regexp_extract(current_setting('memory_limit'), '[0-9.]+') AS DOUBLE)) AS INTEGER)::VARCHAR AS mib`;
  /** MB as DuckDB shows a memory limit: whole MiB. */
  const mib = (mb: number) => String(Math.round((mb * 1e6) / 2 ** 20));
  /** DuckDB's global settings as reads see them. */
  const settings = async () => {
    const reads = store as unknown as { rows(sql: string): Promise<Record<string, unknown>[]> };
    return (await reads.rows(SETTINGS))[0];
  };

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "mdq-duckdb-settings-"));
    store = await openDuckDbStore(join(work, "data"), { threads: 1, memoryMb: 192 });
  });
  after(async () => {
    await store.close();
    await rm(work, { recursive: true, force: true });
  });

  it("gives the served threads and memory limit back after a load, and after a failed one", async () => {
    const served = await settings();
    assert.deepEqual(served, { threads: "1", mib: mib(192) });
    const path = join(work, "records.parquet");
    await writeRecordsParquet(path);
    await store.replaceRecordsFromParquet("brand-s", path, { processingDate: "2021-03-02", source: "s" });
    assert.deepEqual(await settings(), served);
    await assert.rejects(
      store.replaceRecordsFromParquet("brand-s", join(work, "absent.parquet"), {
        processingDate: "2021-03-03",
        source: "absent",
      }),
    );
    assert.deepEqual(await settings(), served);
  });

  /** DuckDB's settings as a staged load of `target` sees them inside its transaction. */
  async function loadSettings(target: DuckDbStore, processingDate: string): Promise<unknown> {
    const seen: unknown[] = [];
    await target.replaceRecordsStaged(
      "brand-s",
      async (connection, staging) => {
        seen.push((await connection.runAndReadAll(SETTINGS)).getRowObjectsJS()[0]);
        await connection.run(
          `CREATE TEMP TABLE ${staging} AS SELECT * EXCLUDE (brand_id) FROM records WHERE brand_id = 'brand-s'`,
        );
        return { rows: 1, rolledUp: false };
      },
      { processingDate, source: "s" },
    );
    return seen[0];
  }

  it("runs a load's statements on every core under DEFAULT_LOAD_MEMORY_MB, above the served limit", async () => {
    assert.ok(DEFAULT_LOAD_MEMORY_MB > 192);
    assert.deepEqual(await loadSettings(store, "2021-03-04"), {
      threads: String(availableParallelism()),
      mib: mib(DEFAULT_LOAD_MEMORY_MB),
    });
  });

  it("runs a load under the store's loadMemoryMb (MDQ_LOAD_MEMORY_MB), then gives the served limit back", async () => {
    const config = loadConfig({}, { dataDir: join(work, "tuned"), duckdbMemoryMb: 128, loadMemoryMb: 96 });
    const tuned = (await openStore(config)) as DuckDbStore;
    try {
      const reads = tuned as unknown as { rows(sql: string): Promise<Record<string, unknown>[]> };
      assert.deepEqual(await loadSettings(tuned, "2021-03-05"), {
        threads: String(availableParallelism()),
        mib: mib(96),
      });
      assert.deepEqual((await reads.rows(SETTINGS))[0], { threads: "1", mib: mib(128) });
    } finally {
      await tuned.close();
    }
  });

  it("refuses an MDQ_LOAD_MEMORY_MB that is not a whole number from 64 MB, naming it", () => {
    for (const [value, why] of [
      ["32", "32 is outside 64..1048576"],
      ["1.5", '"1.5" is not a whole number'],
    ]) {
      assert.throws(
        () => loadConfig({ MDQ_LOAD_MEMORY_MB: value }),
        (error: Error) => error.message === `invalid configuration MDQ_LOAD_MEMORY_MB: ${why}`,
      );
    }
  });

  it("loads rows appended from JavaScript on the served threads under APPEND_MEMORY_MB when the store's limit is lower, then gives the served limit back", async () => {
    const lean = await openDuckDbStore(join(work, "lean"), { threads: 1, memoryMb: 128 });
    try {
      const reads = lean as unknown as { rows(sql: string): Promise<Record<string, unknown>[]> };
      const served = (await reads.rows(SETTINGS))[0];
      assert.deepEqual(served, { threads: "1", mib: mib(128) });
      const seen: unknown[] = [];
      async function* rows(): AsyncIterable<StoredRecord> {
        seen.push((await reads.rows(SETTINGS))[0]);
        yield storedRecord("r-append-1", "2021-03-05", { campaignId: "c-1", campaignName: "Append" });
      }
      await lean.replaceRecords("brand-a", rows(), { processingDate: "2021-03-05", source: "a" });
      assert.deepEqual(seen, [{ threads: "1", mib: mib(APPEND_MEMORY_MB) }]);
      assert.deepEqual((await reads.rows(SETTINGS))[0], served);
    } finally {
      await lean.close();
    }
  });
});

describe("the DuckDB store's reads after the data grew", () => {
  it("lists brands added after a first, empty list, their ids and names whole", async () => {
    // DuckDB plans a sort by a text column with the column's statistics when it prepares: a
    // statement prepared on the empty table and kept cut the ids to one character, or crashed.
    const store = await openDuckDbStore(":memory:");
    try {
      assert.deepEqual(await store.listBrands(), []);
      const ids = ["brand-acme", "brand-globex-with-a-much-longer-id", "brand-initech"];
      for (const brandId of ids)
        await store.createBrand({ brandId, name: `${brandId} name`, createdAt: new Date() });
      const listed = await store.listBrands();
      assert.deepEqual(
        listed.map((brand) => [brand.brandId, brand.name]),
        [...ids].sort().map((brandId) => [brandId, `${brandId} name`]),
      );
    } finally {
      await store.close();
    }
  });
});

describe("the DuckDB store's stored order", () => {
  const days = ["2021-03-01", "2021-03-02", "2021-03-03"];
  /** Per day, ids that sort against the order they are given in. */
  const ids = (day: string) => ["z", "m", "a"].map((letter) => `${letter}-${day}`);

  it("keeps a load whose days come together and in order as it comes, and sorts one whose days are mixed", async () => {
    const store = await openDuckDbStore(":memory:");
    try {
      const reads = store as unknown as { rows(sql: string): Promise<Record<string, unknown>[]> };
      const stored = async (brandId: string) =>
        (await reads.rows(`SELECT record_id FROM records WHERE brand_id = '${brandId}' ORDER BY rowid`)).map(
          (row) => String(row["record_id"]),
        );
      // Days ascending, each day's rows together: inserted as given (no sort by record id).
      const grouped = days.flatMap((day) => ids(day).map((id) => storedRecord(id, day)));
      await store.replaceRecords("brand-grouped", grouped, { processingDate: "2021-03-04", source: "s" });
      assert.deepEqual(
        await stored("brand-grouped"),
        grouped.map((row) => row.recordId),
      );
      // Days descending too.
      const descending = [...days].reverse().flatMap((day) => ids(day).map((id) => storedRecord(id, day)));
      await store.replaceRecords("brand-descending", descending, {
        processingDate: "2021-03-04",
        source: "s",
      });
      assert.deepEqual(
        await stored("brand-descending"),
        descending.map((row) => row.recordId),
      );
      // Days mixed: sorted as STORED_ORDER keeps them (day descending, then record id).
      const mixed = ids("x").flatMap((_, index) => days.map((day) => storedRecord(ids(day)[index]!, day)));
      await store.replaceRecords("brand-mixed", mixed, { processingDate: "2021-03-04", source: "s" });
      assert.deepEqual(
        await stored("brand-mixed"),
        [...days].reverse().flatMap((day) => [...ids(day)].sort()),
      );
    } finally {
      await store.close();
    }
  });
});
