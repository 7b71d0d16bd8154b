#!/usr/bin/env node
// The herd's region: B brands whose sizes follow a Zipf law, each with one app that sees all of
// it, beside a noisy tenant as large as the largest brand. `planHerdRegion` is the plan (pure);
// run as a script (`node herd-region.mjs '<json spec>'`, as `seedHerdRegion` does), this file
// seeds the plan into a store with the demo's record generator, in a process of its own so that
// the bench's own memory stays small, and writes the credentials.
//
// Sizes are in campaigns a day (one record per campaign and day). The largest brand holds as
// many rows as brand-acme stores at demo scale `largestScale` (46 campaigns a day per scale:
// 6,900 a day, 2.76 M rows over 400 days, at scale 150). Brand k (1-based rank) is sized
// largest / k^a with a = ln(100) / ln(median rank), so that the largest is 100× the median; no
// brand is smaller than one campaign a day. A size is made of markets × data sources × rounds
// of the demo's campaign plan (`campaignsOf`), the closest such product to the target.
import { spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";

/** Campaigns a day of brand-acme's stored markets and data sources at demo scale 1. */
export const ACME_CAMPAIGNS_PER_SCALE = 46;
/** The markets a herd brand stores, in the order a brand grows into them (FR first: one campaign). */
const MARKETS = ["FR", "GB", "DE", "US", "JP", "SE", "NL", "ES", "IT", "PL"];
const DATA_SOURCES = ["microsoft_ads", "google_ads", "meta_ads", "tiktok_ads", "amazon_ads", "snapchat_ads"];
/** Each market's source currency, as the demo's (euro-area markets report in EUR). */
const MARKET_CURRENCY = { GB: "GBP", US: "USD", JP: "JPY", SE: "SEK", PL: "PLN" };
/** The demo's plan (demo-data.ts): two campaigns per round where a big market meets a big source. */
const BIG_MARKETS = new Set(["US", "GB", "DE", "JP"]);
const BIG_SOURCES = new Set(["google_ads", "meta_ads"]);

function campaignsPerRound(markets, sources) {
  let total = 0;
  for (const market of markets)
    for (const source of sources) total += BIG_MARKETS.has(market) && BIG_SOURCES.has(source) ? 2 : 1;
  return total;
}

/**
 * The markets, data sources and rounds (demo scale) whose campaigns a day come closest to
 * `target`: among those within 2 % of it, the one with the most markets and sources (a large
 * brand runs in many markets, not a thousand campaigns in one).
 */
export function campaignsOf(target) {
  const shapes = [];
  for (let m = 1; m <= MARKETS.length; m += 1) {
    for (let s = 1; s <= DATA_SOURCES.length; s += 1) {
      const markets = MARKETS.slice(0, m);
      const dataSources = DATA_SOURCES.slice(0, s);
      const perRound = campaignsPerRound(markets, dataSources);
      const scale = Math.max(1, Math.round(target / perRound));
      shapes.push({ markets, dataSources, scale, perDay: scale * perRound, perRound });
    }
  }
  const error = (shape) => Math.abs(shape.perDay - target);
  const closest = Math.min(...shapes.map(error));
  const near = shapes.filter((shape) => error(shape) <= Math.max(closest, 0.02 * target));
  const { perRound: _, ...best } = near.reduce((a, b) => (b.perRound > a.perRound ? b : a));
  return best;
}

/**
 * The region of `brands` brands (largest first) and the noisy tenant: ids, sizes, which brands
 * also ask the dashboard aggregates (every tenth: ranks 10, 20, …), and rows over `days` days.
 */
export function planHerdRegion({ brands, largestScale, days }) {
  const largest = ACME_CAMPAIGNS_PER_SCALE * largestScale;
  const medianRank = (brands + 1) / 2;
  const exponent = medianRank > 1 ? Math.log(100) / Math.log(medianRank) : 1;
  const plan = [];
  for (let rank = 1; rank <= brands; rank += 1) {
    const id = String(rank).padStart(3, "0");
    const size = campaignsOf(Math.max(1, largest / rank ** exponent));
    plan.push({
      rank,
      brandId: `brand-h${id}`,
      shortName: `h${id}`,
      name: `Herd Brand ${id}`,
      appClientId: `app-h${id}`,
      ...size,
      rows: size.perDay * days,
      aggregates: rank % 10 === 0,
    });
  }
  const noisySize = campaignsOf(largest);
  return {
    exponent,
    brands: plan,
    noisy: {
      rank: 0,
      brandId: "brand-noisy",
      shortName: "noisy",
      name: "Noisy Tenant",
      appClientId: "app-noisy",
      ...noisySize,
      rows: noisySize.perDay * days,
      aggregates: false,
    },
  };
}

/**
 * Seeds `plan` into the store `env` names (MDQ_DATABASE_URL, or DuckDB in `dataDir`) in a child
 * process; resolves to the credentials (every app, the noisy tenant's last).
 */
export async function seedHerdRegion({ plan, days, today, dataDir, env, credentialsFile }) {
  const result = spawnSync(
    process.execPath,
    [new URL(import.meta.url).pathname, JSON.stringify({ days, today, dataDir, credentialsFile })],
    {
      encoding: "utf8",
      input: JSON.stringify(plan),
      env: { ...process.env, MDQ_LOG_LEVEL: "warn", ...env },
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  if (result.status !== 0) throw new Error(`seeding the herd region failed: ${result.stderr.slice(-2000)}`);
  return JSON.parse(await readFile(credentialsFile, "utf8"));
}

/** The seeding child: brands, grants, apps with fresh secrets, FX rates, records, publish. */
async function seed({ days, today, dataDir, credentialsFile }, plan) {
  const server = await import("../../packages/server/dist/src/index.js");
  const { demoRecords, planDemo } = await import("../../packages/server/dist/src/demo/demo-data.js");
  const config = server.loadConfig(process.env, { dataDir });
  if (config.databaseUrl !== null) await server.migrateDatabase(config.databaseUrl);
  const store = await server.openStore(config);
  const now = new Date();
  const demo = planDemo({ today, days });
  const credentials = { apps: [] };
  try {
    await store.upsertFxRates(demo.fxRates);
    for (const brand of [...plan.brands, plan.noisy]) {
      const grants = { markets: [...brand.markets], dataSources: [...brand.dataSources] };
      await store.createBrand({ brandId: brand.brandId, name: brand.name, createdAt: now });
      await store.addGrants(brand.brandId, grants);
      const secret = server.generateAppSecret();
      await store.createApp({
        appClientId: brand.appClientId,
        brandId: brand.brandId,
        name: `${brand.name} sync`,
        secretHash: server.hashAppSecret(secret),
        previousSecretHash: null,
        previousSecretExpiresAt: null,
        markets: null,
        dataSources: null,
        revokedAt: null,
        createdAt: now,
      });
      const brandPlan = {
        brandId: brand.brandId,
        name: brand.name,
        shortName: brand.shortName,
        grants,
        apps: [],
        storedMarkets: grants.markets,
        storedDataSources: grants.dataSources,
        currencyByMarket: Object.fromEntries(
          grants.markets.map((market) => [market, MARKET_CURRENCY[market] ?? "EUR"]),
        ),
      };
      const loaded = await store.replaceRecords(
        brand.brandId,
        demoRecords(demo, brandPlan, { today, days, scale: brand.scale }),
        { processingDate: today, source: "bench/herd.mjs" },
      );
      if (loaded.rows !== brand.rows)
        throw new Error(`${brand.brandId}: ${loaded.rows} rows loaded, ${brand.rows} planned`);
      await store.publish(brand.brandId, today, now);
      credentials.apps.push({
        rank: brand.rank,
        appClientId: brand.appClientId,
        appClientSecret: secret,
        brandClientId: brand.brandId,
        rows: brand.rows,
        perDay: brand.perDay,
        aggregates: brand.aggregates,
      });
    }
  } finally {
    await store.close();
  }
  await writeFile(credentialsFile, `${JSON.stringify(credentials)}\n`, { mode: 0o600 });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  await seed(JSON.parse(process.argv[2]), JSON.parse(Buffer.concat(chunks).toString("utf8")));
}
