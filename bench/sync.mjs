#!/usr/bin/env node
// Times a one-client sync of about a million rows with the mdq-client SDK beside a baseline
// measured in the same run: the plainest client — one request after another, pageSize 5000,
// every field, 90-day windows — against the same `mdq serve`. Prints rows/s, the ratio, and how
// many 429s each client received (the SDK must receive none). `mdq-client sync` runs twice:
// through the bulk export (its default) and with `--page-walk` (the GraphQL page walk it used
// before, and still uses against a service without the export); both files must be identical.
//   npm run build && node bench/sync.mjs [--scale 120] [--days 400]
import { spawnSync } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { MdqClient } from "../packages/client/dist/src/index.js";
import { benchArgs } from "./harness/bench-args.mjs";
import { walkDayPages } from "./harness/day-walk.mjs";
import { addDays, startDemoService } from "./harness/demo-service.mjs";

const USAGE = `node bench/sync.mjs [--scale 120] [--days 400]   (after npm run build)
  --scale N   demo scale (default 120: about a million rows in the synced range)
  --days N    demo days ending yesterday, all of them synced (default 400)
`;
const values = benchArgs(
  "bench/sync.mjs",
  USAGE,
  { scale: { type: "string", default: "120" }, days: { type: "string", default: "400" } },
  ["scale", "days"],
);
const {
  work,
  base,
  credentials,
  seedingSeconds: seeding,
  serve,
} = await startDemoService({ prefix: "mdq-sync-bench-", scale: values.scale, days: values.days });
const app = credentials.apps[0];
const today = new Date().toISOString().slice(0, 10);
const from = addDays(today, -Number(values.days));
const to = addDays(today, -1);

/** A fetch that counts answers by status. */
function countingFetch(counts) {
  return async (...args) => {
    const response = await fetch(...args);
    counts[response.status] = (counts[response.status] ?? 0) + 1;
    return response;
  };
}

async function bareClient() {
  const counts = {};
  const count = countingFetch(counts);
  const basic = Buffer.from(`${app.appClientId}:${app.appClientSecret}`).toString("base64");
  const token = (
    await (
      await count(`${base}/oauth2/token`, {
        method: "POST",
        headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials&scope=api_data%2Fread",
      })
    ).json()
  ).access_token;
  let rows = 0;
  for (let start = from; start <= to; start = addDays(start, 90)) {
    const [end] = [addDays(start, 89), to].sort(); // ISO days sort as dates
    rows += await walkDayPages(count, base, token, app.brandClientId, { from: start, to: end });
  }
  return { rows, counts };
}

async function sdkClient(concurrency) {
  const counts = {};
  const client = new MdqClient({
    appClientId: app.appClientId,
    appClientSecret: app.appClientSecret,
    authUrl: base,
    baseUrl: base,
    brandClientId: app.brandClientId,
    fetch: countingFetch(counts),
  });
  let rows = 0;
  for await (const _record of client.records({ from, to, pageSize: 5000, windowDays: 90, concurrency }))
    rows += 1;
  return { rows, counts };
}

const CLIENT_CLI = new URL("../packages/client/dist/src/cli/main.js", import.meta.url).pathname;

/** `mdq-client sync` to a CSV file, as a brand would run it; its 429s are not visible here. */
async function cliSync(name, extra = []) {
  const out = join(work, name);
  const result = spawnSync(
    process.execPath,
    [CLIENT_CLI, "sync", "--from", from, "--to", to, "--out", out, "--quiet", ...extra],
    {
      encoding: "utf8",
      env: {
        ...process.env,
        MDQ_AUTH_URL: base,
        MDQ_BASE_URL: base,
        MDQ_BRAND_CLIENT_ID: app.brandClientId,
        MDQ_APP_CLIENT_ID: app.appClientId,
        MDQ_APP_CLIENT_SECRET: app.appClientSecret,
      },
    },
  );
  if (result.status !== 0) throw new Error(`mdq-client sync exited ${result.status}: ${result.stderr}`);
  const text = await readFile(out, "utf8");
  const lines = text.split("\n").filter((line) => line !== "").length;
  return { rows: lines - 1, counts: null, text };
}

async function timed(run) {
  const started = performance.now();
  const result = await run();
  return { ...result, seconds: (performance.now() - started) / 1000 };
}

try {
  const bare = await timed(bareClient);
  const sdk1 = await timed(() => sdkClient(1));
  const sdk2 = await timed(() => sdkClient(2));
  const cliWalk = await timed(() => cliSync("walk.csv", ["--page-walk"]));
  const cli = await timed(() => cliSync("export.csv"));
  console.log(
    `seeded ${values.scale}× demo (${values.days} days) in ${seeding.toFixed(1)} s; brand ${app.brandClientId}, ${from}..${to}\n`,
  );
  console.log("| client | rows | s | rows/s | vs bare | 429s |\n|---|---|---|---|---|---|");
  for (const [name, result] of [
    ["bare loop (baseline)", bare],
    ["SDK, concurrency 1", sdk1],
    ["SDK, concurrency 2 (default)", sdk2],
    ["mdq-client sync --page-walk → CSV file", cliWalk],
    ["mdq-client sync → CSV file (bulk export)", cli],
  ]) {
    const rate = result.rows / result.seconds;
    console.log(
      `| ${name} | ${result.rows} | ${result.seconds.toFixed(1)} | ${Math.round(rate)} | ${(rate / (bare.rows / bare.seconds)).toFixed(2)} | ${result.counts === null ? "n/a" : (result.counts[429] ?? 0)} |`,
    );
  }
  console.log(
    `\nmdq-client sync through the export: ${(cliWalk.seconds / cli.seconds).toFixed(2)}× the page walk's rows/s`,
  );
  if ([sdk1, sdk2, cli, cliWalk].some((result) => result.rows !== bare.rows))
    console.log("\nrow counts differ!");
  if (cli.text !== cliWalk.text) console.log("\nthe export's file differs from the page walk's!");
} finally {
  serve.kill("SIGTERM");
  await rm(work, { recursive: true, force: true });
}
