#!/usr/bin/env node
// Times the GraphQL request checks (parse → validate → operation → variable coercion, in
// graphql/request-checks.ts) for a daily-sync records page, beside a baseline measured in the
// same run: the whole records page of 1000 rows answered through Fastify's inject (checks,
// Mercurius with graphql-jit, DuckDB). Prints mean microseconds per call and the ratios.
//   npm run build && node bench/request-checks.mjs [--pages 200] [--checks 20000]
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import mercurius from "mercurius";
import { requestChecks } from "../packages/server/dist/src/graphql/request-checks.js";
import { resolvers } from "../packages/server/dist/src/graphql/resolvers.js";
import {
  addDays,
  buildService,
  loadConfig,
  openDuckDbStore,
  seedDemoRegion,
  todayIn,
  typeDefs,
} from "../packages/server/dist/src/index.js";
import { benchArgs } from "./harness/bench-args.mjs";

const USAGE = `node bench/request-checks.mjs [--pages 200] [--checks 20000]   (after npm run build)
  --pages N    whole records pages answered through Fastify's inject (default 200)
  --checks N   request checks timed alone (default 20000)
`;
const options = benchArgs(
  "bench/request-checks.mjs",
  USAGE,
  { pages: { type: "string", default: "200" }, checks: { type: "string", default: "20000" } },
  ["pages", "checks"],
);

/** A demo region (scale 5: a 30-day range holds a full page) served in this process. */
async function startRegion() {
  const dataDir = await mkdtemp(join(tmpdir(), "mdq-bench-"));
  const config = loadConfig(
    {},
    {
      region: "uk",
      authUrl: "http://uk.auth.bench",
      baseUrl: "http://uk.api.bench",
      rateLimitMax: 1_000_000_000,
      logLevel: "silent",
      dataDir,
    },
  );
  const store = await openDuckDbStore(dataDir);
  const today = todayIn(config.timeZone);
  const { apps } = await seedDemoRegion(store, { ...config, today, days: 40, scale: 5 });
  const service = await buildService(config, { store });
  const basic = Buffer.from(`${apps[0].appClientId}:${apps[0].appClientSecret}`).toString("base64");
  const tokenResponse = await service.app.inject({
    method: "POST",
    url: "/oauth2/token",
    headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
    payload: "grant_type=client_credentials&scope=api_data%2Fread",
  });
  const close = async () => {
    await service.app.close();
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  };
  return {
    app: service.app,
    today,
    brandId: apps[0].brandClientId,
    token: tokenResponse.json().access_token,
    close,
  };
}

const region = await startRegion();
const { today, token } = region;
const request = {
  query: `query Sync($c: ID!, $r: DateRangeInput!, $page: Int!) {
    marketingRecords(clientId: $c, dateRange: $r, pagination: {page: $page, pageSize: 1000}) {
      recordId date market dataSource channel campaignId campaignName
      impressions clicks spend conversions revenue currency
    }
  }`,
  variables: { c: region.brandId, r: { from: addDays(today, -30), to: addDays(today, -1) }, page: 1 },
  operationName: "Sync",
};
const payload = JSON.stringify(request);
async function page() {
  const response = await region.app.inject({
    method: "POST",
    url: "/graphql",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    payload,
  });
  return response.json();
}
const first = await page();
if (first.data?.marketingRecords?.length !== 1000)
  throw new Error(`not a full page: ${JSON.stringify(first).slice(0, 300)}`);
for (let run = 0; run < 20; run += 1) await page(); // past graphql-jit's compilation, warm

function meanMicros(runs, fn) {
  const start = performance.now();
  for (let run = 0; run < runs; run += 1) fn();
  return ((performance.now() - start) * 1000) / runs;
}
const pageStart = performance.now();
for (let run = 0; run < Number(options.pages); run += 1) await page();
const pageMicros = ((performance.now() - pageStart) * 1000) / Number(options.pages);

// The endpoint's schema lives in its own plugin scope; Mercurius builds the same one here.
const schemaHost = Fastify();
await schemaHost.register(mercurius, { schema: typeDefs, resolvers });
const schema = schemaHost.graphql.schema;
const checks = requestChecks(schema, 1024);
if (checks.check(request).length > 0) throw new Error("the request does not pass the checks");
const cachedMicros = meanMicros(Number(options.checks), () => checks.check(request));
const firstRunMicros = meanMicros(Math.max(1, Number(options.checks) / 100), () =>
  requestChecks(schema, 1).check(request),
);

const row = (name, micros) =>
  console.log(`${name.padEnd(48)} ${micros.toFixed(1).padStart(9)} µs  ${(micros / pageMicros).toFixed(4)}×`);
console.log(`${"".padEnd(48)} ${"mean".padStart(12)}  vs page`);
row("records page, 1000 rows, end to end (baseline)", pageMicros);
row("checks, query string seen before (every request)", cachedMicros);
row("checks, new query string (parse + validate)", firstRunMicros);

await schemaHost.close();
await region.close();
