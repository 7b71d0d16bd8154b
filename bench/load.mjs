#!/usr/bin/env node
// Times `POST /admin/loads` (what `mdq load` does) of a running `mdq serve` end to end — read,
// check every row, replace the brand's days in one transaction — for generated files of realistic
// marketing records as CSV, NDJSON and Parquet, on the DuckDB store and on the PostgreSQL store,
// with the server's peak resident memory (VmHWM, reset before each load) beside each time.
// Baselines of the same run, on the same files: DuckDB's own `CREATE TABLE AS SELECT * FROM
// read_csv / read_ndjson / read_parquet(...)` into a fresh database file, and PostgreSQL's
// `psql \copy` of the same CSV into an UNLOGGED table; beside the latter, unmarked, the same
// `\copy` into a table shaped as `records` (logged, partitioned, indexed alike), the engine's own
// cost of holding the rows as the store does. Each load is checked: the brand holds exactly the
// file's rows afterwards (a reload replaces, never adds).
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DuckDBInstance } from "@duckdb/node-api";
import pg from "pg";
import { recordsQuery } from "./harness/load-file.mjs";
import { freePort, resetPeakRss, statusKb } from "./harness/processes.mjs";

const USAGE = `usage: node bench/load.mjs [options]

  --rows N[,N...]     rows per file; several sizes also report how load time grows (default 1000000)
  --days N            days the rows spread over (default 90)
  --runs N            loads per store and format; the median is reported (default 2)
  --stores LIST       duckdb,postgres (default both)
  --formats LIST      csv,ndjson,parquet (default all three)
  --postgres URL      PostgreSQL server for the postgres store and \\copy (default postgres://root@127.0.0.1:5432/postgres)
  --derived-ids       files without a record_id column (ids derived by SHA-256)
  -h, --help          this text

Run \`npm run build\` first. Example: node bench/load.mjs --rows 1000000,10000000 --runs 1`;

const STORES = ["duckdb", "postgres"];
const FORMATS = ["csv", "ndjson", "parquet"];

function usageError(message) {
  process.stderr.write(`bench/load.mjs: ${message}\n\n${USAGE}\n`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    strict: true,
    allowPositionals: false,
    options: {
      rows: { type: "string", default: "1000000" },
      days: { type: "string", default: "90" },
      runs: { type: "string", default: "2" },
      stores: { type: "string", default: STORES.join(",") },
      formats: { type: "string", default: FORMATS.join(",") },
      postgres: { type: "string", default: "postgres://root@127.0.0.1:5432/postgres" },
      "derived-ids": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  }));
} catch (error) {
  usageError(error.message);
}
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const positive = (name, text) => {
  const number = Number(text);
  if (!Number.isInteger(number) || number < 1)
    usageError(`--${name} must be a whole number ≥ 1, not "${text}"`);
  return number;
};
const listOf = (name, text, allowed) => {
  const items = text.split(",").filter((item) => item !== "");
  const unknown = items.filter((item) => !allowed.includes(item));
  if (items.length === 0 || unknown.length > 0)
    usageError(`--${name} takes ${allowed.join(", ")}, not "${text}"`);
  return items;
};
const sizes = values.rows.split(",").map((text) => positive("rows", text));
const days = positive("days", values.days);
const runs = positive("runs", values.runs);
const stores = listOf("stores", values.stores, STORES);
const formats = listOf("formats", values.formats, FORMATS);
const withRecordIds = !values["derived-ids"];
const MAIN = new URL("../packages/cli/bin/mdq.cjs", import.meta.url).pathname;
const BENCH_DATABASE = "mdq_bench_load";

const median = (numbers) => [...numbers].sort((a, b) => a - b)[Math.floor((numbers.length - 1) / 2)];
async function timed(work) {
  const started = performance.now();
  const result = await work();
  return { seconds: (performance.now() - started) / 1000, result };
}

const COPY_OPTIONS = { csv: "HEADER, DELIMITER ','", ndjson: "FORMAT json", parquet: "FORMAT parquet" };
const READERS = { csv: "read_csv", ndjson: "read_ndjson", parquet: "read_parquet" };

async function generate(work, rowCount) {
  const files = {};
  const instance = await DuckDBInstance.create(":memory:", { memory_limit: "2GB", temp_directory: work });
  const connection = await instance.connect();
  const needed = new Set([...formats, ...(stores.includes("postgres") ? ["csv"] : [])]);
  for (const format of needed) {
    files[format] = join(work, `records-${rowCount}.${format}`);
    await connection.run(
      `COPY (${recordsQuery({ rows: rowCount, days, withRecordIds })}) TO '${files[format]}' (${COPY_OPTIONS[format]})`,
    );
  }
  connection.closeSync();
  instance.closeSync();
  const sizesText = await Promise.all(
    [...needed].map(async (format) => `${format} ${((await stat(files[format])).size / 1e6).toFixed(0)} MB`),
  );
  console.log(`generated ${rowCount.toLocaleString("en")} rows over ${days} days: ${sizesText.join(", ")}`);
  return files;
}

/** DuckDB's own read of the file into a table of a fresh database file. */
async function duckdbBaseline(work, file, format) {
  const database = join(work, `baseline-${format}.duckdb`);
  const instance = await DuckDBInstance.create(database);
  const connection = await instance.connect();
  const { seconds } = await timed(() =>
    connection.run(`CREATE TABLE records AS SELECT * FROM ${READERS[format]}('${file}')`),
  );
  connection.closeSync();
  instance.closeSync();
  await rm(database, { force: true });
  await rm(`${database}.wal`, { force: true });
  return seconds;
}

function databaseUrl(database) {
  const url = new URL(values.postgres);
  url.pathname = `/${database}`;
  return url.toString();
}

async function onServer(sql) {
  const client = new pg.Client({ connectionString: values.postgres });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function psql(command) {
  psqlSession([command]);
}

/** `commands` run by one psql session in turn, each its own `-c` (a `\copy` must be alone in one). */
function psqlSession(commands) {
  const args = [
    databaseUrl(BENCH_DATABASE),
    "-v",
    "ON_ERROR_STOP=1",
    "-q",
    ...commands.flatMap((command) => ["-c", command]),
  ];
  const result = spawnSync("psql", args, { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`psql failed: ${result.stderr}`);
}

/** The file's columns, typed, as `copy_baseline` and `copy_same_work` hold them. */
const FILE_COLUMNS = `${withRecordIds ? 'record_id text COLLATE "C",' : ""} date date, market text COLLATE "C",
  data_source text COLLATE "C", channel text COLLATE "C", campaign_id text COLLATE "C",
  campaign_name text COLLATE "C", impressions bigint, clicks bigint, spend numeric, conversions numeric,
  revenue numeric, currency text COLLATE "C"`;

/** `psql \copy` of the same CSV into an UNLOGGED table with the file's columns, typed. */
async function copyBaseline(file) {
  psql(`DROP TABLE IF EXISTS copy_baseline; CREATE UNLOGGED TABLE copy_baseline (${FILE_COLUMNS})`);
  const { seconds } = await timed(async () =>
    psql(`\\copy copy_baseline FROM '${file}' WITH (FORMAT csv, HEADER true)`),
  );
  psql("DROP TABLE copy_baseline");
  return seconds;
}

/**
 * The engine doing the store's own write, unmarked beside the baseline: `psql \copy` of
 * the same CSV into a table shaped as `records` is (logged, hash-partitioned by brand in 8, with
 * its walk index and its record-id index, migrations.ts), `runs` times as the loads run, each a
 * replace (the brand's rows deleted and the file copied in one transaction), then vacuumed and
 * analyzed as the store's partition is after a load. The table lives as long as the bench's
 * database, as `records` does, so its reloads follow the same history as the server's (CSV
 * first, then the other formats). What MDQ's load costs beyond what PostgreSQL needs to hold the
 * same rows as durably, indexed alike. Resolves with each copy's seconds; files without record
 * ids (`--derived-ids`) have no such copy: `undefined`.
 */
async function sameWorkCopies(file) {
  if (!withRecordIds) return undefined;
  const partitions = Array.from(
    { length: 8 },
    (_, index) =>
      `CREATE TABLE IF NOT EXISTS copy_same_work_p${index} PARTITION OF copy_same_work
        FOR VALUES WITH (MODULUS 8, REMAINDER ${index});`,
  );
  psql(`CREATE TABLE IF NOT EXISTS copy_same_work (brand_id text COLLATE "C" NOT NULL DEFAULT 'bench', ${FILE_COLUMNS})
      PARTITION BY HASH (brand_id);
    ${partitions.join("\n")}
    CREATE INDEX IF NOT EXISTS copy_same_work_walk ON copy_same_work (brand_id, date DESC, record_id)
      INCLUDE (market, data_source, channel, campaign_id, currency);
    CREATE INDEX IF NOT EXISTS copy_same_work_record ON copy_same_work (brand_id, record_id);`);
  const columns = `record_id, date, market, data_source, channel, campaign_id, campaign_name, impressions,
    clicks, spend, conversions, revenue, currency`.replace(/\s+/g, " ");
  const replace = [
    "BEGIN",
    "DELETE FROM copy_same_work WHERE brand_id = 'bench'",
    `\\copy copy_same_work (${columns}) FROM '${file}' WITH (FORMAT csv, HEADER true)`,
    "COMMIT",
    // As the store does after each load (postgres-store.ts `vacuumBrandPartition`).
    "VACUUM (ANALYZE) copy_same_work",
  ];
  const times = [];
  for (let run = 0; run < runs; run += 1) times.push((await timed(async () => psqlSession(replace))).seconds);
  return times;
}

/** `mdq serve` on `store`, started the way an operator starts it; answers admin calls. */
async function startServer(work, store) {
  const dataDir = join(work, `data-${store}`);
  const env = { ...process.env, MDQ_LOG_LEVEL: "warn" };
  if (store === "postgres") {
    await onServer(`DROP DATABASE IF EXISTS ${BENCH_DATABASE} WITH (FORCE)`);
    await onServer(`CREATE DATABASE ${BENCH_DATABASE}`);
    env.MDQ_DATABASE_URL = databaseUrl(BENCH_DATABASE);
    const migrated = spawnSync(process.execPath, [MAIN, "migrate"], { env, encoding: "utf8" });
    if (migrated.status !== 0) throw new Error(`mdq migrate failed: ${migrated.stderr}`);
  }
  const adminPort = await freePort();
  env.MDQ_ADMIN_PORT = String(adminPort);
  const child = spawn(
    process.execPath,
    [MAIN, "serve", "--port", String(await freePort()), "--data", dataDir],
    {
      env,
      stdio: ["ignore", "inherit", "inherit"],
    },
  );
  let token;
  for (let attempt = 0; token === undefined; attempt += 1) {
    if (attempt > 300) throw new Error("mdq serve did not start within 30 s");
    try {
      const address = JSON.parse(await readFile(join(dataDir, "admin.json"), "utf8"));
      if (address.pid === child.pid) token = (await readFile(join(dataDir, "admin-token"), "utf8")).trim();
    } catch {
      // not written yet
    }
    if (token === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const admin = async (method, path, body) => {
    const response = await fetch(`http://127.0.0.1:${adminPort}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const answer = await response.json();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  };
  await admin("POST", "/admin/brands", { brandId: "bench", name: "Bench" });
  // A load refuses a row whose currency has no rate on or before its day (docs/load-format.md):
  // one rate of each of the rows' currencies, the day before their first.
  const fx = join(work, "fx.csv");
  await writeFile(
    fx,
    "date,currency,rate\n2025-12-31,GBP,0.85\n2025-12-31,USD,1.08\n2025-12-31,JPY,160\n2025-12-31,SEK,11.5\n",
  );
  await admin("POST", "/admin/fx", { path: fx });
  /** A load, answered as it goes (its headers come at once: a 10 M-row load outlasts fetch's wait for them). */
  const load = async (body) => {
    const response = await fetch(`http://127.0.0.1:${adminPort}/admin/loads`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/x-ndjson",
      },
      body: JSON.stringify(body),
    });
    // Seconds spent in each phase the load reports (reading, checking, writing, replacing): the
    // time from a phase's first progress line to the next phase's, read as the lines arrive.
    const phases = {};
    let phase;
    let phaseStarted = performance.now();
    let text = "";
    let last;
    const decoder = new TextDecoder();
    const take = (line) => {
      if (line.trim() === "") return;
      last = JSON.parse(line);
      const next = last.progress?.phase ?? (last.progress ? phase : "committing");
      if (next === phase) return;
      const now = performance.now();
      if (phase !== undefined) phases[phase] = (phases[phase] ?? 0) + (now - phaseStarted) / 1000;
      phase = next;
      phaseStarted = now;
    };
    for await (const chunk of response.body) {
      text += decoder.decode(chunk, { stream: true });
      const lines = text.split("\n");
      text = lines.pop();
      lines.forEach(take);
    }
    take(text);
    if (!response.ok || last?.result === undefined)
      throw new Error(`load: ${response.status} ${JSON.stringify(last)}`);
    return { ...last.result, phases };
  };
  return {
    admin,
    load,
    pid: child.pid,
    async stop() {
      child.kill("SIGTERM");
      await once(child, "exit");
      if (store === "postgres") await onServer(`DROP DATABASE IF EXISTS ${BENCH_DATABASE} WITH (FORCE)`);
    },
  };
}

/** One load through the admin API: seconds, and the server's peak RSS during it (MB). */
async function timedLoad(server, file, format, rowCount) {
  const resetOk = await resetPeakRss(server.pid);
  const { seconds, result } = await timed(() =>
    server.load({ brandId: "bench", path: file, format, processingDate: "2026-04-01" }),
  );
  const peakMb = ((await statusKb(server.pid, "VmHWM")) ?? Number.NaN) / 1024;
  const status = await server.admin("GET", "/admin/status");
  const stored = status.brands.find((brand) => brand.brandId === "bench")?.rows;
  if (result.rows !== rowCount || stored !== rowCount) {
    throw new Error(
      `${format}: loaded ${result.rows}, stored ${stored}, expected ${rowCount} (not idempotent)`,
    );
  }
  return { seconds, peakMb: resetOk ? peakMb : Number.NaN, phases: result.phases };
}

/** "reading 1.2, checking 3.4, …" (seconds per phase of a load). */
const phaseText = (phases) =>
  Object.entries(phases)
    .map(([name, seconds]) => `${name} ${seconds.toFixed(2)}`)
    .join(", ");

const results = [];
const root = await mkdtemp(join(tmpdir(), "mdq-bench-load-"));
console.log(`load average before: ${loadavg()[0].toFixed(2)}`);
try {
  for (const rowCount of sizes) {
    const work = await mkdtemp(join(root, `rows-${rowCount}-`));
    const files = await generate(work, rowCount);
    for (const store of stores) {
      const server = await startServer(work, store);
      try {
        for (const format of formats) {
          const loads = [];
          for (let run = 0; run < runs; run += 1)
            loads.push(await timedLoad(server, files[format], format, rowCount));
          // The engine's own read, right after, on the same file (PostgreSQL: always the CSV).
          const baselineTimes = [];
          for (let run = 0; run < runs; run += 1) {
            baselineTimes.push(
              store === "duckdb"
                ? await duckdbBaseline(work, files[format], format)
                : await copyBaseline(files.csv),
            );
          }
          const row = {
            rows: rowCount,
            store,
            format,
            seconds: median(loads.map((load) => load.seconds)),
            peakMb: Math.max(...loads.map((load) => load.peakMb)),
            baseline: median(baselineTimes),
            baselineName: store === "duckdb" ? `DuckDB CTAS ${READERS[format]}` : "psql \\copy CSV, unlogged",
          };
          const sameWork = store === "postgres" ? await sameWorkCopies(files.csv) : undefined;
          if (sameWork) row.sameWork = median(sameWork);
          results.push(row);
          console.log(
            `${store} ${format} ${rowCount.toLocaleString("en")} rows: ${row.seconds.toFixed(2)} s, ` +
              `peak RSS ${row.peakMb.toFixed(0)} MB; ${row.baselineName} ${row.baseline.toFixed(2)} s` +
              (sameWork
                ? `; the same into records' shape ${sameWork.map((time) => time.toFixed(2)).join(", ")} s`
                : ""),
          );
          for (const load of loads) console.log(`  phases (s): ${phaseText(load.phases)}`);
        }
      } finally {
        await server.stop();
      }
    }
    await rm(work, { recursive: true, force: true });
  }
} finally {
  await rm(root, { recursive: true, force: true });
}

const TARGETS = { csv: 1.5, ndjson: 1.5, parquet: 2 };
console.log(
  `\nmachine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GB; ` +
    `node ${process.version}; load average after: ${loadavg()[0].toFixed(2)}; ${runs} run(s), medians\n`,
);
console.log(
  `terms: MDQ's DuckDB load and DuckDB's CTAS both run on every core (${cpus().length} threads); the load ` +
    `under its ${process.env.MDQ_LOAD_MEMORY_MB || 256} MB memory limit (MDQ_LOAD_MEMORY_MB; a PostgreSQL load's scratch DuckDB too), ` +
    "the CTAS under DuckDB's default (80% of memory); " +
    "the load also checks every rule, sorts and replaces days in one transaction, which the baselines do not; " +
    '"same work" (PostgreSQL, unmarked): psql \\copy of the CSV into a logged table shaped as records ' +
    "(8 hash partitions, its two indexes), each run a replace (DELETE and copy in one transaction) then VACUUM (ANALYZE), as the loads run\n",
);
console.log(
  "| store | format | rows | MDQ load s | rows/s | server peak RSS MB | baseline | baseline s | MDQ / baseline | target | same work s | MDQ / same work |",
);
console.log("|---|---|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|");
for (const row of results) {
  const target = row.store === "duckdb" ? TARGETS[row.format] : 1.5;
  const ratio = row.seconds / row.baseline;
  console.log(
    `| ${row.store} | ${row.format} | ${row.rows.toLocaleString("en")} | ${row.seconds.toFixed(2)} | ` +
      `${Math.round(row.rows / row.seconds).toLocaleString("en")} | ${row.peakMb.toFixed(0)} | ${row.baselineName} | ` +
      `${row.baseline.toFixed(2)} | ${ratio.toFixed(2)} | ≤ ${target} ${ratio <= target ? "yes" : "NO"} | ` +
      (row.sameWork === undefined
        ? "– | – |"
        : `${row.sameWork.toFixed(2)} | ${(row.seconds / row.sameWork).toFixed(2)} |`),
  );
}
if (sizes.length > 1) {
  const [small, large] = [Math.min(...sizes), Math.max(...sizes)];
  console.log(
    `\n| store | format | growth ${small.toLocaleString("en")} → ${large.toLocaleString("en")} rows, per row | ≤ 1.1 |`,
  );
  console.log("|---|---|--:|---|");
  for (const store of stores) {
    for (const format of formats) {
      const time = (rows) =>
        results.find((row) => row.rows === rows && row.store === store && row.format === format);
      const growth = time(large).seconds / large / (time(small).seconds / small);
      console.log(`| ${store} | ${format} | ${growth.toFixed(2)} | ${growth <= 1.1 ? "yes" : "NO"} |`);
    }
  }
}
const peak = Math.max(...results.map((row) => row.peakMb));
console.log(
  `\nhighest server peak RSS: ${peak.toFixed(0)} MB (target ≤ 512 MB: ${peak <= 512 ? "yes" : "NO"})`,
);
