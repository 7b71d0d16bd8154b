#!/usr/bin/env node
// Peak RSS of `mdq serve` on a seeded DuckDB data directory (issue 17's scale-600 memory target,
// taken apart): starts the served binary with the given environment, asks a CAMPAIGN_ID
// aggregate, a page 20 by SPEND, then 8 concurrent walks of brand-acme's latest 90 days in
// 5000-row pages (one currency each), printing the server's VmHWM after each step.
//   node bench/serve-memory.mjs --data DIR --credentials FILE [--pages N]
//   MDQ_DUCKDB_MEMORY_MB=128 MDQ_PAGE_CACHE_MB=32 node bench/serve-memory.mjs --data DIR --credentials FILE
// DIR is a data directory seeded by `mdq demo --seed-only --scale 600` (or any scale).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const USAGE = "node bench/serve-memory.mjs --data DIR --credentials FILE [--pages N] [--port P]\n";
let values;
try {
  ({ values } = parseArgs({
    options: {
      data: { type: "string" },
      credentials: { type: "string" },
      pages: { type: "string", default: "227" },
      port: { type: "string", default: "4290" },
    },
  }));
  if (!values.data || !values.credentials) throw new Error("--data and --credentials are required");
} catch (error) {
  process.stderr.write(`${error.message}\n${USAGE}`);
  process.exit(2);
}
const port = Number(values.port);
const base = `http://localhost:${port}`;
const mdq = new URL("../packages/cli/bin/mdq.cjs", import.meta.url).pathname;
const child = spawn(
  process.execPath,
  [mdq, "serve", "--port", String(port), "--data", values.data, "--auth-url", base, "--base-url", base],
  { env: { MDQ_RATE_LIMIT_MAX: "1000000", MDQ_LOG_LEVEL: "silent", ...process.env }, stdio: "ignore" },
);
const peakMb = () =>
  (Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))[1]) / 1024).toFixed(0);
try {
  for (let attempt = 0; ; attempt += 1) {
    try {
      await fetch(`${base}/livez`);
      break;
    } catch (error) {
      if (attempt > 150) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  const app = JSON.parse(readFileSync(values.credentials, "utf8")).apps[0];
  const token = (
    await (
      await fetch(`${base}/oauth2/token`, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${app.appClientId}:${app.appClientSecret}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: "grant_type=client_credentials&scope=api_data/read",
      })
    ).json()
  ).access_token;
  const ask = async (query, variables = {}) => {
    const response = await fetch(`${base}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ query, variables: { c: app.brandClientId, ...variables } }),
    });
    await response.arrayBuffer();
  };
  const day = (back) => new Date(Date.now() - back * 86_400_000).toISOString().slice(0, 10);
  const range = `dateRange: {from: "${day(90)}", to: "${day(1)}"}`;
  console.log(`started: ${peakMb()} MB`);
  await ask(`query($c: ID!) { marketingAggregate(clientId: $c, ${range}, currency: USD, metrics: [SPEND, CLICKS],
    groupBy: [CAMPAIGN_ID], sort: [{field: TOTAL_SPEND, direction: DESC}]) { CAMPAIGN_ID TOTAL_SPEND } }`);
  console.log(`after a CAMPAIGN_ID aggregate: ${peakMb()} MB`);
  await ask(`query($c: ID!) { marketingRecords(clientId: $c, ${range}, currency: GBP, sort: [{field: SPEND, direction: DESC}],
    pagination: {page: 20, pageSize: 1000}) { recordId spend } }`);
  console.log(`after a page 20 by SPEND: ${peakMb()} MB`);
  // One document per walk, the page a variable, as a client pages (mdq-client, the cold walk):
  // a document per page would fill the server's cache of compiled queries instead.
  const walk = async (currency) => {
    for (let page = 1; page <= Number(values.pages); page += 1)
      await ask(`query($c: ID!, $page: Int) { marketingRecords(clientId: $c, ${range}, currency: ${currency},
        pagination: {page: $page, pageSize: 5000}) { recordId date market dataSource channel campaignId
        campaignName impressions clicks spend conversions revenue currency } }`, { page });
  };
  await Promise.all(["EUR", "USD", "GBP", "JPY", "SEK", "CHF", "AUD", "CAD"].map(walk));
  console.log(`after 8 concurrent walks of ${values.pages} pages: ${peakMb()} MB`);
} finally {
  child.kill();
}
