#!/usr/bin/env node
// Times `POST /admin/loads` of a running `mdq serve` end to end (read, validate every row, replace
// the brand's days in one transaction) for a generated file of realistic marketing records, as
// CSV and as Parquet: the first load, then reloads of the same days (idempotence: the stored row
// count must stay the same), CSV and Parquet alternating so that noise hits both alike.
// Beside it, in the same run, the machine's limit: DuckDB's own
// `CREATE TABLE AS SELECT * FROM read_csv(...)` (and `read_parquet`) of the same file into a
// fresh database file. Then, in this process, where a load's time goes: reading and checking
// the file, and the store's transaction. Prints medians, rows/s, the ratio to the 20 s target
// and MDQ/baseline.
//   npm run build && node bench/load.mjs [--rows 1000000] [--days 90] [--runs 3] [--derived-ids]
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DuckDBInstance } from "@duckdb/node-api";
import { openDuckDbStore } from "../packages/server/dist/src/index.js";
import { readRecordsFile } from "../packages/server/dist/src/load/records-file.js";
import { freePort } from "./harness/processes.mjs";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "1000000" },
    days: { type: "string", default: "90" },
    runs: { type: "string", default: "3" },
    "derived-ids": { type: "boolean", default: false },
  },
});
const rowCount = Number(values.rows);
const days = Number(values.days);
const runs = Number(values.runs);
const withRecordIds = !values["derived-ids"];
const TARGET_SECONDS = 20;
const MAIN = new URL("../packages/cli/dist/src/main.js", import.meta.url).pathname;

const work = await mkdtemp(join(tmpdir(), "mdq-bench-load-"));
const files = { csv: join(work, "records.csv"), parquet: join(work, "records.parquet") };

/**
 * One row per (day, market, data source, campaign): row i is day i % days; the rest of i names
 * the market, the source and the campaign, so the natural key is unique. Values vary per row and
 * are deterministic; campaign names repeat as they do in real exports. Parquet gets real types
 * (DATE, INTEGER, DECIMAL), as an export from a warehouse would have.
 */
function recordsQuery() {
  return `
    WITH n AS (SELECT i, i % ${days} AS day, i // ${days} AS k FROM range(${rowCount}) t(i)),
    r AS (
      SELECT i, day, k,
        ['GB','US','DE','FR','JP','SE','ES','IT'][1 + k % 8] AS market,
        ['google_ads','meta_ads','tiktok_ads','amazon_ads'][1 + (k // 8) % 4] AS data_source,
        hash(i) AS h
      FROM n
    )
    SELECT
      ${withRecordIds ? "'rec-' || lpad(CAST(i AS VARCHAR), 9, '0') AS record_id," : ""}
      DATE '2026-01-01' + CAST(day AS INTEGER) AS date,
      market,
      data_source,
      ['search','social','display','video'][1 + (k // 32) % 4] AS channel,
      'c-' || CAST(k // 32 AS VARCHAR) AS campaign_id,
      'Campaign ' || CAST((k // 32) % 5000 AS VARCHAR) || ' ' || market AS campaign_name,
      CAST(h % 100000 AS INTEGER) AS impressions,
      CAST(h % 3000 AS INTEGER) AS clicks,
      CAST((h % 10000000) / 100 AS DECIMAL(18, 2)) AS spend,
      CAST((h % 4000) / 100 AS DECIMAL(18, 2)) AS conversions,
      CAST((h % 30000000) / 1000 AS DECIMAL(18, 3)) AS revenue,
      CASE market WHEN 'GB' THEN 'GBP' WHEN 'US' THEN 'USD' WHEN 'JP' THEN 'JPY' WHEN 'SE' THEN 'SEK'
        ELSE 'EUR' END AS currency
    FROM r ORDER BY day, i`;
}

async function timed(work) {
  const started = performance.now();
  const result = await work();
  return { seconds: (performance.now() - started) / 1000, result };
}

const median = (numbers) => [...numbers].sort((a, b) => a - b)[Math.floor((numbers.length - 1) / 2)];

const generation = await timed(async () => {
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  await connection.run(`COPY (${recordsQuery()}) TO '${files.csv}' (HEADER, DELIMITER ',')`);
  await connection.run(`COPY (${recordsQuery()}) TO '${files.parquet}' (FORMAT parquet)`);
  connection.closeSync();
  instance.closeSync();
});
console.log(
  `generated ${rowCount.toLocaleString("en")} rows over ${days} days in ${generation.seconds.toFixed(1)} s: ` +
    `CSV ${((await stat(files.csv)).size / 1e6).toFixed(0)} MB, ` +
    `Parquet ${((await stat(files.parquet)).size / 1e6).toFixed(0)} MB` +
    `${withRecordIds ? "" : " (no record_id column: ids derived)"}; load average before: ${loadavg()[0].toFixed(2)}`,
);

/** The machine's limit: DuckDB reading the same file into a table of a fresh database file. */
async function baseline(format) {
  const file = join(work, `baseline-${format}.duckdb`);
  const instance = await DuckDBInstance.create(file);
  const connection = await instance.connect();
  const reader = format === "csv" ? "read_csv" : "read_parquet";
  const { seconds } = await timed(() =>
    connection.run(`CREATE TABLE records AS SELECT * FROM ${reader}('${files[format]}')`),
  );
  connection.closeSync();
  instance.closeSync();
  await rm(file, { force: true });
  await rm(`${file}.wal`, { force: true });
  return seconds;
}
const baselines = { csv: [], parquet: [] };
for (let run = 0; run < runs; run += 1) {
  for (const format of ["csv", "parquet"]) baselines[format].push(await baseline(format));
}

// The service, started the way an operator starts it.
const dataDir = join(work, "data");
const adminPort = await freePort();
const server = spawn(
  process.execPath,
  [MAIN, "serve", "--port", String(await freePort()), "--data", dataDir],
  {
    env: { ...process.env, MDQ_ADMIN_PORT: String(adminPort), MDQ_LOG_LEVEL: "warn" },
    stdio: ["ignore", "inherit", "inherit"],
  },
);
const adminUrl = `http://127.0.0.1:${adminPort}`;
let token;
for (let attempt = 0; token === undefined; attempt += 1) {
  if (attempt > 200) throw new Error("mdq serve did not start within 20 s");
  try {
    const address = JSON.parse(await readFile(join(dataDir, "admin.json"), "utf8"));
    if (address.pid === server.pid) token = (await readFile(join(dataDir, "admin-token"), "utf8")).trim();
  } catch {
    // not written yet
  }
  if (token === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
}

async function admin(method, path, body) {
  const response = await fetch(`${adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

/** Peak resident memory of the server so far (Linux), in MB. */
async function serverPeakMb() {
  try {
    const status = await readFile(`/proc/${server.pid}/status`, "utf8");
    return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024;
  } catch {
    return Number.NaN;
  }
}

async function timedLoad(format) {
  const { seconds, result } = await timed(() =>
    admin("POST", "/admin/loads", {
      brandId: "bench",
      path: files[format],
      format,
      processingDate: "2026-04-01",
    }),
  );
  const status = await admin("GET", "/admin/status");
  const stored = status.brands.find((brand) => brand.brandId === "bench")?.rows;
  if (result.rows !== rowCount || stored !== rowCount) {
    throw new Error(
      `${format}: loaded ${result.rows}, stored ${stored}, expected ${rowCount} (not idempotent)`,
    );
  }
  return seconds;
}

const loads = { first: [], csv: [], parquet: [] };
let peakMb;
try {
  await admin("POST", "/admin/brands", { brandId: "bench", name: "Bench" });
  loads.first.push(await timedLoad("csv"));
  for (let run = 0; run < runs; run += 1) {
    loads.csv.push(await timedLoad("csv"));
    loads.parquet.push(await timedLoad("parquet"));
  }
  peakMb = await serverPeakMb();
} finally {
  server.kill("SIGTERM");
  await once(server, "exit");
}

// Where the time goes, in this process on the same files: the reader (parse, check every rule),
// then the store's transaction (iterate the checked records, append, delete the days, insert).
const phases = {};
for (const format of ["csv", "parquet"]) {
  const store = await openDuckDbStore(join(work, `phases-${format}`));
  const checks = [];
  const stores = [];
  for (let run = 0; run < runs; run += 1) {
    const { seconds: check, result: file } = await timed(() => readRecordsFile(files[format]));
    try {
      stores.push((await timed(() => store.replaceRecords("bench", file.records()))).seconds);
    } finally {
      file.close();
    }
    checks.push(check);
  }
  await store.close();
  phases[format] = { check: median(checks), store: median(stores) };
}
await rm(work, { recursive: true, force: true });

console.log(
  `\nmachine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GB; ` +
    `node ${process.version}; load average after: ${loadavg()[0].toFixed(2)}\n`,
);
console.log(
  `| POST /admin/loads, ${rowCount.toLocaleString("en")} rows | runs | median s | best s | rows/s ` +
    `| median / ${TARGET_SECONDS} s target | DuckDB CTAS s | MDQ / DuckDB |`,
);
console.log("|---|---|---|---|---|---|---|---|");
for (const [scenario, times, baselineTimes] of [
  ["CSV, first load", loads.first, baselines.csv],
  ["CSV, reload of the same days", loads.csv, baselines.csv],
  ["Parquet, reload of the same days", loads.parquet, baselines.parquet],
]) {
  const middle = median(times);
  console.log(
    `| ${scenario} | ${times.length} | ${middle.toFixed(2)} | ${Math.min(...times).toFixed(2)} | ` +
      `${Math.round(rowCount / middle).toLocaleString("en")} | ${(middle / TARGET_SECONDS).toFixed(2)} | ` +
      `${median(baselineTimes).toFixed(2)} | ${(middle / median(baselineTimes)).toFixed(1)} |`,
  );
}
console.log(`\nserver peak RSS: ${peakMb.toFixed(0)} MB\n`);
console.log("| in-process phase (median) | read + check s | store transaction s |\n|---|---|---|");
for (const format of ["csv", "parquet"]) {
  console.log(`| ${format} | ${phases[format].check.toFixed(2)} | ${phases[format].store.toFixed(2)} |`);
}
const slowestCsv = Math.max(...loads.first, ...loads.csv);
const csvMedian = median(loads.csv);
const parquetMedian = median(loads.parquet);
console.log(
  `\nslowest CSV load ${slowestCsv.toFixed(2)} s: under ${TARGET_SECONDS} s ${slowestCsv < TARGET_SECONDS ? "yes" : "NO"}; ` +
    `Parquet faster than CSV (median reloads): ${parquetMedian < csvMedian ? "yes" : "NO"} ` +
    `(CSV / Parquet = ${(csvMedian / parquetMedian).toFixed(2)})`,
);
