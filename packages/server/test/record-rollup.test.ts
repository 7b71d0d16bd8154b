/**
 * The record rollup of data stored before it existed (store/record-rollup.ts): the DuckDB store
 * rolls the stored records up when it opens, PostgreSQL's migration 3 does; either way the
 * aggregates answered from the rollup afterwards are those answered from the records.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { createTestDatabase } from "@mdq/test-support";
import pg from "pg";
import { openDuckDbStore } from "../src/store/duckdb/duckdb-store.js";
import { migrateDatabase } from "../src/store/open-store.js";
import { openPostgresStore } from "../src/store/postgres/postgres-store.js";
import type { AggregateQuery } from "../src/store/query-request.js";
import type { Store, StoredRecord } from "../src/store/store.js";

const BRAND = "rollup-brand";
const CAMPAIGNS = ["cmp-1", "cmp-2", "cmp-3"];

function records(): StoredRecord[] {
  return Array.from({ length: 60 }, (_, index) => ({
    recordId: `r${index}`,
    date: `2021-03-0${1 + (index % 6)}`,
    market: ["DE", "GB", "FR"][index % 3]!,
    dataSource: ["google_ads", "meta_ads"][index % 2]!,
    channel: ["search", "social", "video", "display"][index % 4]!,
    campaignId: CAMPAIGNS[index % 3]!,
    campaignName: "Campaign",
    impressions: 100 + index,
    clicks: index,
    spendE4: BigInt(10_001 + 3_333 * index),
    conversionsE4: BigInt(5_000 * (index % 3)),
    revenueE4: BigInt(77_777 * index),
    currency: (["EUR", "GBP"] as const)[index % 2]!,
  }));
}

function query(groupBy: AggregateQuery["groupBy"], campaignIds: string[] | null): AggregateQuery {
  return {
    scope: {
      brandId: BRAND,
      from: "2021-03-01",
      to: "2021-03-06",
      markets: ["DE", "FR", "GB"],
      dataSources: ["google_ads", "meta_ads"],
      channels: null,
      campaignIds,
    },
    currency: "GBP",
    metrics: ["IMPRESSIONS", "CLICKS", "SPEND", "CONVERSIONS", "REVENUE"],
    groupBy,
    sort: [],
    page: { page: 1, pageSize: 100 },
  };
}

const GROUPINGS: AggregateQuery["groupBy"][] = [[], ["MARKET"], ["DATE_DAY", "CHANNEL"], ["DATA_SOURCE"]];

async function seed(store: Store): Promise<void> {
  await store.upsertFxRates([{ currency: "GBP", date: "2021-02-01", rateE6: 850_123n }]);
  await store.replaceRecords(BRAND, records());
}

/** Each grouping's answer from the rollup equals the records' (a campaign filter naming all). */
async function assertRollupAnswers(store: Store): Promise<void> {
  for (const groupBy of GROUPINGS) {
    const [rollup, fromRecords] = await Promise.all([
      store.queryAggregate(query(groupBy, null)),
      store.queryAggregate(query(groupBy, CAMPAIGNS)),
    ]);
    assert.ok(rollup.rows.length > 0);
    assert.deepEqual(rollup.rows, fromRecords.rows, groupBy.join(","));
    assert.equal(rollup.totalCount, fromRecords.totalCount);
  }
}

describe("the record rollup of data stored before it", () => {
  it("is rolled up when a DuckDB store opens", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "mdq-rollup-"));
    try {
      const store = await openDuckDbStore(dataDir);
      await seed(store);
      await store.close();
      const instance = await DuckDBInstance.create(join(dataDir, "mdq.duckdb"));
      const connection = await instance.connect();
      await connection.run("DELETE FROM record_rollup");
      connection.closeSync();
      instance.closeSync();
      const reopened = await openDuckDbStore(dataDir);
      try {
        await assertRollupAnswers(reopened);
      } finally {
        await reopened.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("is rolled up by PostgreSQL's migration 3", async () => {
    const database = await createTestDatabase();
    try {
      await migrateDatabase(database.url);
      const store = await openPostgresStore({ url: database.url, poolSize: 2 });
      await seed(store);
      await store.close();
      // Back to the schema before the rollup, the records kept.
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        await client.query("DROP TABLE record_rollup");
        await client.query("DELETE FROM schema_migrations WHERE version = 3");
      } finally {
        await client.end();
      }
      assert.deepEqual((await migrateDatabase(database.url)).applied, ["3_record_rollup"]);
      const migrated = await openPostgresStore({ url: database.url, poolSize: 2 });
      try {
        await assertRollupAnswers(migrated);
      } finally {
        await migrated.close();
      }
    } finally {
      await database.drop();
    }
  });
});
