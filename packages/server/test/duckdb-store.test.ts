/**
 * What only the embedded DuckDB store does: loading records straight from a Parquet file in
 * stored columns. The file's path reaches SQL as a bound parameter, so any path loads, quotes
 * included, and none is read as SQL.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { type DuckDbStore, openDuckDbStore } from "../src/store/duckdb/duckdb-store.js";
import { loadsParquet } from "../src/store/store.js";

/** Writes a Parquet file of stored records (one on 2021-03-01) with DuckDB's own COPY. */
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
