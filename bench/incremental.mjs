#!/usr/bin/env node
// The daily run after a restatement, measured as brands do it (issue 12): a brand mirrors the last
// 90 days; the operator then restates 3 of those days; the next daily run is timed two ways
// against the same `mdq serve`, through a proxy that counts requests and bytes:
//   - `mirror`: the mdq-client mirror's daily run (asks marketingDataChanges, downloads the 3 days);
//   - look-back (baseline, what connectors do): re-download the last 30 days, every page.
// Prints bytes, requests and seconds of each and the ratios.
//   npm run build && node bench/incremental.mjs [--scale 30] [--runs 3]
import { spawnSync } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import { createServer, request as httpRequest } from "node:http";
import { join } from "node:path";
import { MdqClient, mirror } from "../packages/client/dist/src/index.js";
import { benchArgs } from "./harness/bench-args.mjs";
import { addDays, mdqMain as MDQ, startDemoService } from "./harness/demo-service.mjs";
import { freePort } from "./harness/processes.mjs";

const USAGE = `node bench/incremental.mjs [--scale 30] [--runs 3]   (after npm run build)
  --scale N   demo scale seeded for the brand's mirror (default 30)
  --runs N    daily runs timed each way (default 3)
`;
const values = benchArgs(
  "bench/incremental.mjs",
  USAGE,
  { scale: { type: "string", default: "30" }, runs: { type: "string", default: "3" } },
  ["scale", "runs"],
);
const { work, dataDir, port, credentials, serve } = await startDemoService({
  prefix: "mdq-incremental-bench-",
  scale: values.scale,
  env: { MDQ_PAGE_CACHE_MB: "0" },
});

/** A loopback proxy in front of the service that counts requests and the bytes of their answers. */
const counted = { requests: 0, bytes: 0 };
const proxy = createServer((incoming, outgoing) => {
  counted.requests += 1;
  const forward = httpRequest(
    { host: "127.0.0.1", port, path: incoming.url, method: incoming.method, headers: incoming.headers },
    (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.on("data", (chunk) => {
        counted.bytes += chunk.length;
      });
      answer.pipe(outgoing);
    },
  );
  incoming.pipe(forward);
});
const proxyPort = await freePort();
await new Promise((resolve) => proxy.listen(proxyPort, "127.0.0.1", resolve));
const via = `http://127.0.0.1:${proxyPort}`;

const app = credentials.apps[0];
const client = () =>
  new MdqClient({
    appClientId: app.appClientId,
    appClientSecret: app.appClientSecret,
    authUrl: via,
    baseUrl: via,
    brandClientId: app.brandClientId,
  });
const today = new Date().toISOString().slice(0, 10);
const to = addDays(today, -1);
const from = addDays(today, -90);
const HEADER =
  "record_id,date,market,data_source,channel,campaign_id,campaign_name,impressions,clicks,spend,conversions,revenue,currency";

/**
 * Restates 3 of the last 90 days of the brand with `mdq load`, as an operator does after late
 * conversions: every row of each day again, with 10% more conversions and revenue.
 */
async function restate(run) {
  const days = [addDays(to, -5 - run), addDays(to, -20 - run), addDays(to, -60 - run)];
  const csv = (value) =>
    /[",\n]/.test(String(value)) ? `"${String(value).replaceAll('"', '""')}"` : String(value);
  const lines = [];
  for (const day of days) {
    for await (const r of client().records({ from: day, to: day, pageSize: 5000 })) {
      lines.push(
        [
          r.recordId,
          r.date,
          r.market,
          r.dataSource,
          r.channel,
          r.campaignId,
          r.campaignName,
          r.impressions,
          r.clicks,
          r.spend.toFixed(2),
          (r.conversions * 1.1).toFixed(4),
          (r.revenue * 1.1).toFixed(2),
          r.currency,
        ]
          .map(csv)
          .join(","),
      );
    }
  }
  const path = join(work, `restate-${run}.csv`);
  await writeFile(path, `${HEADER}\n${lines.join("\n")}\n`);
  const load = spawnSync(process.execPath, [MDQ, "load", path, "--brand", app.brandClientId], {
    encoding: "utf8",
    env: { ...process.env, MDQ_DATA_DIR: dataDir },
  });
  if (load.status !== 0) throw new Error(load.stderr);
}

async function measure(work) {
  counted.requests = 0;
  counted.bytes = 0;
  const started = performance.now();
  const rows = await work();
  return {
    rows,
    seconds: (performance.now() - started) / 1000,
    requests: counted.requests,
    bytes: counted.bytes,
  };
}

const mirrorDir = join(work, "mirror");
try {
  const first = await measure(
    async () => (await mirror(client(), { dir: mirrorDir, from, to, format: "csv" })).rows,
  );
  const results = { mirror: [], lookBack: [] };
  for (let run = 0; run < Number(values.runs); run += 1) {
    await restate(run);
    results.mirror.push(
      await measure(async () => (await mirror(client(), { dir: mirrorDir, from, to, format: "csv" })).rows),
    );
    results.lookBack.push(
      await measure(async () => {
        let rows = 0;
        for await (const _record of client().records({ from: addDays(to, -29), to, pageSize: 5000 }))
          rows += 1;
        return rows;
      }),
    );
  }
  const median = (list, key) =>
    [...list.map((entry) => entry[key])].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  console.log(
    `demo --scale ${values.scale}, brand ${app.brandClientId}, mirror of ${from}..${to} (first run: ${first.rows} rows, ` +
      `${first.requests} requests, ${(first.bytes / 1e6).toFixed(1)} MB, ${first.seconds.toFixed(1)} s); ` +
      `then ${values.runs} daily runs, each after 3 restated days; medians:\n`,
  );
  console.log(
    "| daily run | rows | requests | bytes | s | bytes vs look-back | s vs look-back |\n|---|--:|--:|--:|--:|--:|--:|",
  );
  const lookBackBytes = median(results.lookBack, "bytes");
  const lookBackSeconds = median(results.lookBack, "seconds");
  for (const [name, list] of [
    ["mdq-client mirror (changed days only)", results.mirror],
    ["30-day look-back (baseline)", results.lookBack],
  ]) {
    console.log(
      `| ${name} | ${median(list, "rows")} | ${median(list, "requests")} | ${median(list, "bytes").toLocaleString("en-US")} | ` +
        `${median(list, "seconds").toFixed(2)} | ${(median(list, "bytes") / lookBackBytes).toFixed(3)} | ${(median(list, "seconds") / lookBackSeconds).toFixed(3)} |`,
    );
  }
  console.log(
    "\nEach restated day is restated whole (every row, conversions and revenue +10%). The look-back also misses" +
      " the restated day 60+ days back; the mirror never misses one.",
  );
} finally {
  serve.kill("SIGTERM");
  proxy.close();
  await rm(work, { recursive: true, force: true });
}
