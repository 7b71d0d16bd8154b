/**
 * The record rollup of data stored before it existed (store/sql/rollup-table.ts): the DuckDB store
 * rolls the stored records up when it opens, PostgreSQL's migration 3 does; either way the
 * aggregates answered from the rollup afterwards are those answered from the records. And the
 * rollup's own answer (rollup-aggregate.ts: converted, totalled, sorted and paged in JavaScript)
 * equals the records' (the planner's SQL) under every grouping, sort, page and currency, its sums
 * exact past 64 bits. A DuckDB rollup in an older layout is made anew when the store opens.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { createTestDatabase } from "@mdq/test-support";
import pg from "pg";
import type { CurrencyCode } from "../src/currencies.js";
import { openDuckDbStore } from "../src/store/duckdb/duckdb-store.js";
import { type AggregateQuery, DIMENSIONS, METRICS } from "../src/store/model/query-request.js";
import type { Store, StoredRecord } from "../src/store/model/store.js";
import { MissingFxRateError } from "../src/store/model/store-errors.js";
import { migrateDatabase } from "../src/store/open-store.js";
import { onDuckDb, onPostgres, onPostgresAt } from "./fresh-stores.js";

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
  const sameAnswers = async (store: Store) => {
    await seed(store);
    assert.ok((await assertSameAnswers(store)) > 300);
  };

  it("equal the records' under every grouping, sort, page and currency on DuckDB", () =>
    onDuckDb(sameAnswers));

  it("equal the records' under every grouping, sort, page and currency on PostgreSQL", () =>
    onPostgres(sameAnswers));

  it("convert each day of a range across a new year with its year's rates, as the records do", () =>
    onDuckDb(async (store) => {
      // (currency, date, rate): USD's only rate is from the year before, which the new year's days carry.
      const rates = [
        ["USD", "2020-06-01", 1_190_007n],
        ["JPY", "2020-06-01", 129_877_001n],
        ["JPY", "2021-01-02", 131_002_599n],
        ["GBP", "2020-12-01", 850_123n],
        ["GBP", "2021-01-01", 901_777n],
      ] as const;
      await store.upsertFxRates(rates.map(([currency, date, rateE6]) => ({ currency, date, rateE6 })));
      const days = ["2020-12-30", "2020-12-31", "2021-01-01", "2021-01-02"];
      await store.replaceRecords(
        BRAND,
        records().map((record, index) => ({ ...record, date: days[index % days.length]! })),
      );
      for (const currency of ["GBP", "USD", "EUR"] as CurrencyCode[]) {
        const ask = (campaignIds: string[] | null): AggregateQuery => ({
          ...query(["DATE_DAY", "MARKET"], campaignIds),
          scope: { ...query([], campaignIds).scope, from: "2020-12-30", to: "2021-01-02" },
          currency,
        });
        const [rollup, fromRecords] = await Promise.all([
          store.queryAggregate(ask(null)),
          store.queryAggregate(ask(CAMPAIGNS)),
        ]);
        assert.equal(rollup.rows.length, 12);
        assert.deepEqual(rollup.rows, fromRecords.rows, currency);
      }
    }));
});

/**
 * Seeds a DuckDB store in a new directory, closes it, changes its file with `edit` (a plain DuckDB
 * connection), then checks the reopened store's rollup answers.
 */
async function assertReopenedAfter(edit: (connection: DuckDBConnection) => Promise<void>): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "mdq-rollup-"));
  try {
    const store = await openDuckDbStore(dataDir);
    await seed(store);
    await store.close();
    const instance = await DuckDBInstance.create(join(dataDir, "mdq.duckdb"));
    const connection = await instance.connect();
    await edit(connection);
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
}

describe("the record rollup of data stored before it", () => {
  it("is rolled up when a DuckDB store opens", () =>
    assertReopenedAfter(async (connection) => {
      await connection.run("DELETE FROM record_rollup");
    }));

  it("is made anew when a DuckDB store opens with a rollup in the older layout (HUGEINT sums)", () =>
    assertReopenedAfter(async (connection) => {
      await connection.run("DROP TABLE record_rollup");
      await connection.run(`CREATE TABLE record_rollup (brand_id VARCHAR NOT NULL, date DATE NOT NULL,
        market VARCHAR NOT NULL, data_source VARCHAR NOT NULL, channel VARCHAR NOT NULL,
        currency VARCHAR NOT NULL, rows BIGINT NOT NULL, impressions HUGEINT NOT NULL,
        clicks HUGEINT NOT NULL, spend_e4 HUGEINT NOT NULL, conversions_e4 HUGEINT NOT NULL,
        revenue_e4 HUGEINT NOT NULL, PRIMARY KEY (brand_id, date, market, data_source, channel, currency))`);
      await connection.run(`INSERT INTO record_rollup SELECT brand_id, date, market, data_source, channel,
        currency, count(*), sum(impressions), sum(clicks), sum(spend_e4), sum(conversions_e4), sum(revenue_e4)
        FROM records GROUP BY ALL`);
    }));

  it("is made anew when a DuckDB store opens with a rollup keyed by a primary key (the layout before issue 19's)", () =>
    assertReopenedAfter(async (connection) => {
      const sums = ["impressions", "clicks", "spend_e4", "conversions_e4", "revenue_e4"];
      await connection.run("DROP TABLE record_rollup");
      await connection.run(`CREATE TABLE record_rollup (brand_id VARCHAR NOT NULL, date DATE NOT NULL,
        market VARCHAR NOT NULL, data_source VARCHAR NOT NULL, channel VARCHAR NOT NULL,
        currency VARCHAR NOT NULL, rows BIGINT NOT NULL,
        ${sums.map((sum) => `${sum}_high BIGINT NOT NULL, ${sum}_low BIGINT NOT NULL`).join(", ")},
        PRIMARY KEY (brand_id, date, market, data_source, channel, currency))`);
      // Sums of every row doubled: a store that kept this table would answer wrongly.
      await connection.run(`INSERT INTO record_rollup SELECT brand_id, date, market, data_source, channel,
        currency, count(*), ${sums.map((sum) => `0, 2 * sum(${sum})`).join(", ")}
        FROM records GROUP BY ALL`);
    }));

  it("is rolled up by PostgreSQL's migration 3", async () => {
    const database = await createTestDatabase();
    try {
      await migrateDatabase(database.url);
      await onPostgresAt(database.url, seed);
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
      await onPostgresAt(database.url, assertRollupAnswers);
    } finally {
      await database.drop();
    }
  });
});

/**
 * Twelve records of the largest amount a load accepts (10¹⁴, 10¹⁸ ten-thousandths) and twelve of
 * its refund on one day, market, source and currency: each channel's sums pass 2⁶³.
 */
function hugeRecords(): StoredRecord[] {
  return Array.from({ length: 24 }, (_, index) => ({
    recordId: `huge-${index}`,
    date: "2021-03-01",
    market: "DE",
    dataSource: "google_ads",
    channel: index < 12 ? "search" : "social",
    campaignId: CAMPAIGNS[index % 3]!,
    campaignName: "Campaign",
    impressions: 2_147_483_647,
    clicks: 2_147_483_647,
    spendE4: (index < 12 ? 1n : -1n) * 10n ** 18n,
    conversionsE4: 10n ** 18n,
    revenueE4: 10n ** 18n - 1n,
    currency: "EUR",
  }));
}

/** The rollup's answer over `hugeRecords` equals the records' and the exact totals. */
async function assertHugeSums(store: Store): Promise<void> {
  await store.replaceRecords(BRAND, hugeRecords());
  const ask = (campaignIds: string[] | null): AggregateQuery => ({
    ...query(["CHANNEL"], campaignIds),
    currency: "EUR",
  });
  const [rollup, fromRecords] = await Promise.all([
    store.queryAggregate(ask(null)),
    store.queryAggregate(ask(CAMPAIGNS)),
  ]);
  assert.deepEqual(rollup.rows, fromRecords.rows);
  assert.deepEqual(
    rollup.rows.map((row) => [row["CHANNEL"], row["TOTAL_SPEND"], row["TOTAL_CONVERSIONS"]]),
    [
      ["search", 12e14, 12e14],
      ["social", -12e14, 12e14],
    ],
  );
  assert.equal(rollup.rows[0]!["TOTAL_IMPRESSIONS"], 12 * 2_147_483_647);
  assert.equal(rollup.rows[0]!["TOTAL_REVENUE"], 12e14);
}

describe("the record rollup's sums", () => {
  it("stay exact past 64 bits on DuckDB", () => onDuckDb(assertHugeSums));

  it("stay exact past 64 bits on PostgreSQL", () => onPostgres(assertHugeSums));
});
