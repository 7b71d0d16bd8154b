/**
 * The record rollup of data stored before it existed (store/record-rollup.ts): the DuckDB store
 * rolls the stored records up when it opens, PostgreSQL's migration 3 does; either way the
 * aggregates answered from the rollup afterwards are those answered from the records. And the
 * rollup's own answer (rollup-aggregate.ts: converted, totalled, sorted and paged in JavaScript)
 * equals the records' (the planner's SQL) under every grouping, sort, page and currency.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { createTestDatabase } from "@mdq/test-support";
import pg from "pg";
import type { CurrencyCode } from "../src/currencies.js";
import { openDuckDbStore } from "../src/store/duckdb/duckdb-store.js";
import { migrateDatabase } from "../src/store/open-store.js";
import { openPostgresStore } from "../src/store/postgres/postgres-store.js";
import { type AggregateQuery, DIMENSIONS, METRICS } from "../src/store/query-request.js";
import { MissingFxRateError, type Store, type StoredRecord } from "../src/store/store.js";

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
    // Every seventh a refund: negative money rounds half-even by magnitude.
    spendE4: BigInt((index % 7 === 0 ? -1 : 1) * (10_001 + 3_333 * index)),
    conversionsE4: BigInt(5_000 * (index % 3)),
    revenueE4: BigInt(77_777 * index),
    currency: (["EUR", "GBP", "USD", "JPY"] as const)[index % 4]!,
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
  await store.upsertFxRates([
    { currency: "GBP", date: "2021-02-01", rateE6: 850_123n },
    { currency: "USD", date: "2021-02-01", rateE6: 1_190_007n },
    { currency: "USD", date: "2021-03-04", rateE6: 1_201_333n },
    { currency: "JPY", date: "2021-02-01", rateE6: 129_877_001n },
    // SEK's first rate comes after the records' first days: converting to it lacks a rate.
    { currency: "SEK", date: "2021-03-03", rateE6: 10_131_000n },
  ]);
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

/** Each (grouping, sort, page, currency) answered from the rollup and from the records. */
async function assertSameAnswers(store: Store): Promise<number> {
  const groupings = [...DIMENSIONS.filter((dimension) => dimension !== "CAMPAIGN_ID")].flatMap(
    (first, index, all) => [[first], ...all.slice(index + 1).map((second) => [first, second])],
  ) as AggregateQuery["groupBy"][];
  let compared = 0;
  for (const [index, groupBy] of [[], ...groupings].entries()) {
    const fields = [...groupBy, ...METRICS.map((metric) => `TOTAL_${metric}` as const)];
    for (const currency of ["GBP", "JPY", "USD", "EUR", "SEK"] as CurrencyCode[]) {
      const field = fields[(index + compared) % fields.length]!;
      const direction = compared % 2 === 0 ? "DESC" : "ASC";
      for (const page of [1, 2, 5]) {
        const ask = (campaignIds: string[] | null): AggregateQuery => ({
          ...query(groupBy, campaignIds),
          currency,
          sort: [{ field, direction }],
          page: { page, pageSize: 4 },
        });
        const answer = (campaignIds: string[] | null) =>
          store.queryAggregate(ask(campaignIds)).then(
            (result) => ({ rows: result.rows, totalCount: result.totalCount }),
            (error: unknown) => {
              if (!(error instanceof MissingFxRateError)) throw error;
              return { missing: `${error.currency} ${error.date}` };
            },
          );
        const [rollup, fromRecords] = await Promise.all([answer(null), answer(CAMPAIGNS)]);
        assert.deepEqual(
          rollup,
          fromRecords,
          `${groupBy.join(",")} ${currency} ${field} ${direction} page ${page}`,
        );
        compared += 1;
      }
    }
  }
  return compared;
}

describe("the record rollup's answers", () => {
  it("equal the records' under every grouping, sort, page and currency on DuckDB", async () => {
    const store = await openDuckDbStore(":memory:");
    try {
      await seed(store);
      assert.ok((await assertSameAnswers(store)) > 300);
    } finally {
      await store.close();
    }
  });

  it("equal the records' under every grouping, sort, page and currency on PostgreSQL", async () => {
    const database = await createTestDatabase();
    try {
      await migrateDatabase(database.url);
      const store = await openPostgresStore({ url: database.url, poolSize: 2 });
      try {
        await seed(store);
        assert.ok((await assertSameAnswers(store)) > 300);
      } finally {
        await store.close();
      }
    } finally {
      await database.drop();
    }
  });
});

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
