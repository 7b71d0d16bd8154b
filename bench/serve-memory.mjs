#!/usr/bin/env node
// Peak RSS of `mdq serve` on a seeded DuckDB data directory (issue 17's scale-600 memory target,
// taken apart): starts the served binary with the given environment, asks questions that fill
// DuckDB's memory, then 8 concurrent walks in 5000-row pages, printing the server's VmHWM after
// each step and its CPU seconds over the walks.
//   node bench/serve-memory.mjs --data DIR --credentials FILE [--pages N] [--cold] [--runs N]
//   MDQ_DUCKDB_MEMORY_MB=128 MDQ_PAGE_CACHE_MB=32 node bench/serve-memory.mjs --data DIR --credentials FILE
// DIR is a data directory seeded by `mdq demo --seed-only --scale 600` (or any scale).
//
// Default: the first app's brand, a CAMPAIGN_ID aggregate and a page 20 by SPEND, then 8 walks of
// its latest 90 days in 8 currencies. `--cold`: the growth bench's conditions (bench/scale.mjs, its
// peak RSS at scale 600 is taken over the questions and the cold walk): per brand a CAMPAIGN_ID
// aggregate and pages 20 by SPEND, REVENUE and CLICKS, two walks of one client (the growth bench's
// one-client walk and the cold walk's reference), then 8 walks each of its own app, window
// (shifted by a day per round of apps) and currency, as the cold walk's keys (cold-walk.mjs), to
// their last page.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { benchArgs } from "./harness/bench-args.mjs";
import { tokensOf } from "./harness/demo-region.mjs";
import { mdqMain, waitUntilLive } from "./harness/demo-service.mjs";
import { cpuMs, statusKb } from "./harness/processes.mjs";

const USAGE = `node bench/serve-memory.mjs --data DIR --credentials FILE [flags]

  --data DIR          a DuckDB data directory seeded by mdq demo --seed-only (required)
  --credentials FILE  its credentials file (required)
  --pages N           pages each walk asks at most (default 227: brand-acme's window at scale 600)
  --cold              the growth bench's conditions: every brand's questions, walks of every app
  --runs N            servers started one after the other, each measured alone (default 1)
  --port P            the server's port (default 4290)
  --help              this text

Environment: MDQ_DUCKDB_MEMORY_MB, MDQ_PAGE_CACHE_MB, DUCKDB_JE_MALLOC_CONF reach the server.
`;
const values = benchArgs(
  "bench/serve-memory.mjs",
  USAGE,
  {
    data: { type: "string" },
    credentials: { type: "string" },
    pages: { type: "string", default: "227" },
    cold: { type: "boolean", default: false },
    runs: { type: "string", default: "1" },
    port: { type: "string", default: "4290" },
  },
  ["pages", "runs", "port"],
  (given) => {
    if (!given.data || !given.credentials) throw new Error("--data and --credentials are required");
  },
);
const port = Number(values.port);
const base = `http://localhost:${port}`;
const apps = JSON.parse(readFileSync(values.credentials, "utf8")).apps;
const CURRENCIES = ["EUR", "USD", "GBP", "JPY", "SEK", "CHF", "AUD", "CAD"];
const RECORD_FIELDS = `recordId date market dataSource channel campaignId campaignName impressions clicks
  spend conversions revenue currency`;
const day = (back) => new Date(Date.now() - back * 86_400_000).toISOString().slice(0, 10);
const rangeOf = (shift = 0) => `dateRange: {from: "${day(90 + shift)}", to: "${day(1 + shift)}"}`;

for (let run = 1; run <= Number(values.runs); run += 1) {
  if (Number(values.runs) > 1) console.log(`run ${run}`);
  await measure();
}

async function measure() {
  const child = spawn(
    process.execPath,
    [mdqMain, "serve", "--port", String(port), "--data", values.data, "--auth-url", base, "--base-url", base],
    { env: { MDQ_RATE_LIMIT_MAX: "1000000", MDQ_LOG_LEVEL: "silent", ...process.env }, stdio: "ignore" },
  );
  const peakMb = async () => ((await statusKb(child.pid, "VmHWM")) / 1024).toFixed(0);
  try {
    await waitUntilLive(base);
    const tokens = await tokensOf(base, { apps });
    /** Asks `query` as the app at `index` (its brand as `$c`); the answer must hold no error. */
    const ask = async (index, query, variables = {}) => {
      const response = await fetch(`${base}/graphql`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${tokens[apps[index].appClientId]}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ query, variables: { c: apps[index].brandClientId, ...variables } }),
      });
      const answer = await response.json();
      if (answer.errors)
        throw new Error(`the server answered ${JSON.stringify(answer.errors).slice(0, 300)}`);
      return answer.data;
    };
    const campaigns = (index) =>
      ask(
        index,
        `query($c: ID!) { marketingAggregate(clientId: $c, ${rangeOf()}, currency: USD, metrics: [SPEND, CLICKS],
        groupBy: [CAMPAIGN_ID], sort: [{field: TOTAL_SPEND, direction: DESC}]) { CAMPAIGN_ID TOTAL_SPEND } }`,
      );
    const page20 = (index, field) =>
      ask(
        index,
        `query($c: ID!) { marketingRecords(clientId: $c, ${rangeOf()}, currency: GBP, sort: [{field: ${field}, direction: DESC}],
        pagination: {page: 20, pageSize: 1000}) { recordId spend } }`,
      );
    console.log(`started: ${await peakMb()} MB`);
    if (values.cold) {
      // One app per brand (its last in the credentials).
      const perBrand = [...new Map(apps.map((app, index) => [app.brandClientId, index])).values()];
      for (const index of perBrand) {
        await campaigns(index);
        for (const field of ["SPEND", "REVENUE", "CLICKS"]) await page20(index, field);
      }
      console.log(`after each brand's CAMPAIGN_ID aggregate and pages 20 by value: ${await peakMb()} MB`);
    } else {
      await campaigns(0);
      console.log(`after a CAMPAIGN_ID aggregate: ${await peakMb()} MB`);
      await page20(0, "SPEND");
      console.log(`after a page 20 by SPEND: ${await peakMb()} MB`);
    }
    // One document per walk, the page a variable, as a client pages (mdq-client, the cold walk):
    // a document per page would fill the server's cache of compiled queries instead.
    const walk = async (walkIndex, { index = 0, shift = 0 } = {}) => {
      const query = `query($c: ID!, $page: Int) { marketingRecords(clientId: $c, ${rangeOf(shift)},
        currency: ${CURRENCIES[walkIndex]}, pagination: {page: $page, pageSize: 5000}) { ${RECORD_FIELDS} } }`;
      for (let page = 1; page <= Number(values.pages); page += 1) {
        const data = await ask(index, query, { page });
        if (data.marketingRecords.length === 0) break;
      }
    };
    if (values.cold) {
      // The growth bench's one client walking, then its cold walk's reference walk: the window
      // ending yesterday, which none of the 8 walks below asks (theirs end a day earlier or more).
      await walk(0);
      await walk(1);
      console.log(`after two walks of one client: ${await peakMb()} MB`);
    }
    const cpuBefore = await cpuMs(child.pid);
    const started = performance.now();
    // The cold walk's keys: apps vary fastest, then the window ends a day earlier.
    const keyOf = (walkIndex) =>
      values.cold ? { index: walkIndex % apps.length, shift: 1 + Math.floor(walkIndex / apps.length) } : {};
    await Promise.all(CURRENCIES.map((_, walkIndex) => walk(walkIndex, keyOf(walkIndex))));
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const cpu = (((await cpuMs(child.pid)) - cpuBefore) / 1000).toFixed(1);
    console.log(`after 8 concurrent walks (${seconds} s, server CPU ${cpu} s): ${await peakMb()} MB`);
  } finally {
    child.kill();
    await once(child, "exit");
  }
}
