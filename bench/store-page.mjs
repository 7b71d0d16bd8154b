#!/usr/bin/env node
// Times the store's planned SQL for a records page and a 90-day aggregate on the demo data at a
// chosen scale, beside a baseline measured in the same run: the plainest SQL returning the same
// rows (no FX conversion, no formatting). Prints best-of-N milliseconds and ratios.
//   npm run build && node bench/store-page.mjs [--scale 50] [--runs 7]
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { addDays, openDuckDbStore, seedDemoRegion, todayIn } from "../packages/server/dist/src/index.js";
import { RECORD_FIELDS } from "../packages/server/dist/src/store/model/query-request.js";
import { planAggregatePage } from "../packages/server/dist/src/store/reads/aggregate/aggregate-plan.js";
import {
  planRecordsDayCurrencies,
  planRecordsPage,
} from "../packages/server/dist/src/store/reads/records/records-plan.js";
import { DUCKDB_DIALECT } from "../packages/server/dist/src/store/sql/sql-dialect.js";
import { benchArgs } from "./harness/bench-args.mjs";
import { acmeScope } from "./harness/queries.mjs";

const USAGE = `node bench/store-page.mjs [--scale 50] [--runs 7]   (after npm run build)
  --scale N   demo scale seeded into a DuckDB store (default 50)
  --runs N    runs of each statement; the best is reported (default 7)
`;
const values = benchArgs(
  "bench/store-page.mjs",
  USAGE,
  { scale: { type: "string", default: "50" }, runs: { type: "string", default: "7" } },
  ["scale", "runs"],
);
const scale = Number(values.scale);
const runs = Number(values.runs);
const dataDir = await mkdtemp(join(tmpdir(), "mdq-bench-"));
const today = todayIn("Europe/London");
const seeding = performance.now();
const store = await openDuckDbStore(dataDir);
await seedDemoRegion(store, { region: "uk", authUrl: "http://a", baseUrl: "http://b", today, scale });
await store.close();
console.log(`seeded scale ${scale} in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);

const instance = await DuckDBInstance.create(join(dataDir, "mdq.duckdb"));
const connection = await instance.connect();
const scope = acmeScope(addDays(today, -90), addDays(today, -1));
const allFields = RECORD_FIELDS;
const sort = [{ field: "DATE_DAY", direction: "DESC" }];
const bare = (offset) => ({
  sql: `SELECT record_id, date, market, data_source, channel, campaign_id, campaign_name, impressions, clicks,
    spend_e4, conversions_e4, revenue_e4, currency FROM records WHERE brand_id = ? AND date BETWEEN CAST(? AS DATE) AND CAST(? AS DATE)
    AND market IN ('DE','FR','GB','SE','US') AND data_source IN ('google_ads','meta_ads','tiktok_ads')
    ORDER BY date DESC, record_id LIMIT 1000 OFFSET ${offset}`,
  params: [scope.brandId, scope.from, scope.to],
});
const bareAggregate = {
  sql: `SELECT date, market, data_source, sum(impressions), sum(clicks), sum(spend_e4), sum(revenue_e4) FROM records
    WHERE brand_id = ? AND date BETWEEN CAST(? AS DATE) AND CAST(? AS DATE)
    AND market IN ('DE','FR','GB','SE','US') AND data_source IN ('google_ads','meta_ads','tiktok_ads')
    GROUP BY date, market, data_source ORDER BY date DESC, market, data_source LIMIT 5000`,
  params: [scope.brandId, scope.from, scope.to],
};

async function best(plan) {
  let fastest = Number.POSITIVE_INFINITY;
  for (let run = 0; run < runs; run += 1) {
    const started = performance.now();
    (await connection.runAndReadAll(plan.sql, plan.params)).getColumnsJS();
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}

const page = (number, currency) => ({
  scope,
  currency,
  fields: allFields,
  sort,
  page: { page: number, pageSize: 1000 },
});
const rows = [
  [
    "records page 1 (GBP), planned",
    await best(planRecordsPage(page(1, "GBP"), DUCKDB_DIALECT, { after: null })),
    await best(bare(0)),
  ],
  [
    "records page 50 (GBP), planned",
    await best(planRecordsPage(page(50, "GBP"), DUCKDB_DIALECT, { after: null })),
    await best(bare(49_000)),
  ],
  [
    "records count per day and currency",
    await best(planRecordsDayCurrencies(page(1, "GBP"), DUCKDB_DIALECT)),
    await best(bare(0)),
  ],
  [
    "aggregate day×market×source (GBP)",
    await best(
      planAggregatePage(
        {
          scope,
          currency: "GBP",
          metrics: ["IMPRESSIONS", "CLICKS", "SPEND", "REVENUE"],
          groupBy: ["DATE_DAY", "MARKET", "DATA_SOURCE"],
          sort: [{ field: "DATE_DAY", direction: "DESC" }],
          page: { page: 1, pageSize: 5000 },
        },
        DUCKDB_DIALECT,
      ),
    ),
    await best(bareAggregate),
  ],
];
console.log(
  `\n| scenario (scale ${scale}, 90 days of brand-acme) | MDQ ms | bare SQL ms | bare/MDQ |\n|---|---|---|---|`,
);
for (const [name, ours, baseline] of rows) {
  console.log(`| ${name} | ${ours.toFixed(1)} | ${baseline.toFixed(1)} | ${(baseline / ours).toFixed(2)} |`);
}
connection.closeSync();
instance.closeSync();
await rm(dataDir, { recursive: true, force: true });
