#!/usr/bin/env node
// Read replicas (issue 56, point 6 and its targets). On a private primary with 2 streaming
// standbys (started here, as the tests start them: test-support's `startStandbyPair`), the demo
// region seeded at `--scale` into the primary (`mdq demo --seed-only`, replicated), and `mdq
// serve` started as shipped twice on the same database — "primary alone" (MDQ_DATABASE_REPLICA_URLS
// empty) and "2 standbys" (reads on both standbys) — it measures:
//  (a) the read bench: the dashboard questions' first answers (scale-questions.mjs; each timed ask
//      a fresh window or currency, as bench/scale.mjs asks them; both setups' answers checked
//      equal) and the 8-client cold walk's rows/s (cold-walk.mjs keys: fresh windows, 5000-row
//      pages), each setup's figure and standbys / primary alone;
//  (b) records-page p99 while a `--load-rows` load (generated as bench/load.mjs does, loaded
//      through the admin API as `mdq load` does, into a brand of its own) lands on the primary,
//      against the idle p99 of the same setup; target: ≤ 1.3× idle with standbys;
//  (c) the routing check's median (`ReplicaRouter.targetFor` against a `SELECT 1` on the same
//      primary; target ≤ 1 ms), and, read from the served instance's metrics
//      (`mdq_replica_positions_total`), how many brand positions records pages read from the
//      primary once the instance knows the brand's version: the target is none;
//  (d) the results as JSON: bench/results/local/replicas-latest.json (--save: bench/results/).
// Every process shares one machine here: the standbys replay on the cores the primary and MDQ use,
// so the figures measure what routing costs, not capacity standbys on their own hosts would add
// (--load-via host parts the cores as hosts would, as far as two cores can).
//   npm run build && node bench/replicas.mjs [--scale 30] [--load-rows 1000000] [--save]
// The size is --scale 150 (≈ 6.4 M rows); the default 30 seeds in minutes. See bench/README.md.
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import pg from "pg";
import { addDays, CURRENCY_CODES, loadConfig, todayIn } from "../packages/server/dist/src/index.js";
import { migrateDatabase, openStore } from "../packages/server/dist/src/store/open-store.js";
import { recordCommitLsns } from "../packages/server/dist/src/store/postgres/commit-lsns.js";
import { startStandbyPair } from "../packages/test-support/dist/src/index.js";
import { benchArgs } from "./harness/bench-args.mjs";
import { driveWalks, walkKeys, walkOf } from "./harness/cold-walk.mjs";
import { mdqEnv } from "./harness/contenders.mjs";
import { tokensOf } from "./harness/demo-region.mjs";
import { recordsQuery } from "./harness/load-file.mjs";
import { resultsDirectory } from "./harness/options.mjs";
import { seedPostgres } from "./harness/postgres.mjs";
import { freePort, machine, startContender } from "./harness/processes.mjs";
import { recordsBody } from "./harness/queries.mjs";
import {
  canonical,
  firstDifference,
  QUESTIONS,
  timedAsks,
  variantOf,
  WALK_PAGE_SIZE,
} from "./harness/scale-questions.mjs";
import { median, percentile } from "./harness/stats.mjs";

const USAGE = `node bench/replicas.mjs [flags]   (after npm run build)

  --scale N          demo scale seeded into the primary (default 30; the issue's size is 150, ≈ 6.4 M rows)
  --days N           demo days ending yesterday (default 400)
  --reps N           timed asks of each dashboard question per setup, each a fresh window or currency
                     (default 3; the fast questions get 10 × N, as in bench/scale.mjs)
  --walk-clients N   clients of the cold walk (default 8)
  --load-rows N      rows of the load that lands on the primary during the p99 measure (default 1000000)
  --page-clients N   clients asking records pages during the idle and load measures (default 2)
  --idle-asks N      records pages asked for the idle p99 of each setup (default 300)
  --load-via L       which instance runs the load during the p99 measure, among other (the other
                     setup's instance: the reading instance's event loop parses none of the file, as
                     in a region whose operator loads through another instance), host (the same, and
                     each process pinned to a core as hosts would part them: the primary, every one
                     of its backends, and the loading instance on core 0; the standbys, the reading
                     instance and this bench's clients on core 1) and same (the reading instance
                     itself) (default other,host,same; the target's PASS/FAIL reads the first)
  --samples N        timed calls of the routing check and of SELECT 1 (default 2000)
  --save             write the committed bench/results/replicas-latest.json
                     (default: bench/results/local/replicas-latest.json, which git ignores)
  --keep             keep the work directory (server logs, the generated file)
  --help             this text
`;
const args = benchArgs(
  "bench/replicas.mjs",
  USAGE,
  {
    scale: { type: "string", default: "30" },
    days: { type: "string", default: "400" },
    reps: { type: "string", default: "3" },
    "walk-clients": { type: "string", default: "8" },
    "load-rows": { type: "string", default: "1000000" },
    "page-clients": { type: "string", default: "2" },
    "idle-asks": { type: "string", default: "300" },
    "load-via": { type: "string", default: "other,host,same" },
    samples: { type: "string", default: "2000" },
    save: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
  },
  ["scale", "days", "reps", "walk-clients", "load-rows", "page-clients", "idle-asks", "samples"],
);
/** Who runs the load during the p99 measure (--load-via), and what each is called in the report. */
const LOAD_VIA = ["other", "host", "same"];
const LOAD_VIA_LABEL = {
  other: "other instance",
  host: "other instance, the primary and the loader on core 0, standbys and reader on core 1",
  same: "reading instance itself",
};
const options = {
  scale: Number(args.scale),
  days: Number(args.days),
  reps: Number(args.reps),
  walkClients: Number(args["walk-clients"]),
  loadRows: Number(args["load-rows"]),
  pageClients: Number(args["page-clients"]),
  idleAsks: Number(args["idle-asks"]),
  samples: Number(args.samples),
  loadVia: args["load-via"].split(",").map((via) => via.trim()),
};
if (options.loadVia.length === 0 || options.loadVia.some((via) => !LOAD_VIA.includes(via))) {
  process.stderr.write(
    `bench/replicas.mjs: --load-via takes a list of ${LOAD_VIA.join(", ")}, not ${args["load-via"]}\n`,
  );
  process.exit(2);
}

/** The two ways `mdq serve` reads: the primary alone, and on both standbys. */
const SETUPS = ["primary", "replicas"];
const SETUP_LABEL = { primary: "primary alone", replicas: "2 standbys" };
/** The p99 target of records pages during a load with standbys, against idle. */
const LOAD_P99_TARGET = 1.3;
/** Rows per records page of the idle and load measures. */
const PAGE_SIZE = 1000;
const DATABASE = "mdq_replicas_bench";
const MDQ = new URL("../packages/cli/bin/mdq.cjs", import.meta.url).pathname;

const log = (message) => process.stderr.write(`${message}\n`);

/** Milliseconds of each of `samples` awaited calls of `call`, sorted, after 100 unmeasured. */
async function timed(call) {
  for (let index = 0; index < 100; index += 1) await call();
  const times = [];
  for (let index = 0; index < options.samples; index += 1) {
    const started = process.hrtime.bigint();
    await call();
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return times.sort((a, b) => a - b);
}

/**
 * `mdq serve` as shipped on the seeded database, reading on `replicaUrls` ("" = the primary
 * alone), with its admin API (token read from the data directory, as load.mjs does).
 */
async function startMdq({ name, databaseUrl, replicaUrls, dataDir, logDir }) {
  const port = await freePort();
  const adminPort = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const running = await startContender({
    name,
    command: process.execPath,
    args: [MDQ, "serve", "--port", String(port), "--data", dataDir],
    env: mdqEnv("http://mdq-bench.localhost", {
      MDQ_ADMIN_PORT: String(adminPort),
      MDQ_DATABASE_URL: databaseUrl,
      MDQ_DATABASE_REPLICA_URLS: replicaUrls,
    }),
    readyUrl: `${url}/livez`,
    logDir,
  });
  let token;
  for (let attempt = 0; token === undefined; attempt += 1) {
    if (attempt > 300) throw new Error(`${name}: no admin token within 30 s`);
    try {
      const address = JSON.parse(await readFile(join(dataDir, "admin.json"), "utf8"));
      if (address.pid === running.pid) token = (await readFile(join(dataDir, "admin-token"), "utf8")).trim();
    } catch {
      // Not written yet.
    }
    if (token === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  return { ...running, url, adminUrl, adminToken: token };
}

/** One admin call; throws with the answer when it is not 2xx. */
async function admin(server, method, path, body) {
  const response = await fetch(`${server.adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 500)}`);
  return text === "" ? null : JSON.parse(text);
}

/**
 * `POST /admin/loads` (what `mdq load` does), answered as it goes (its headers come at once: a
 * large load outlasts fetch's wait for them); resolves to the load's result line.
 */
async function adminLoad(server, body) {
  const response = await fetch(`${server.adminUrl}/admin/loads`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${server.adminToken}`,
      "content-type": "application/json",
      accept: "application/x-ndjson",
    },
    body: JSON.stringify(body),
  });
  const lines = (await response.text()).split("\n").filter((line) => line.trim() !== "");
  const last = lines.length > 0 ? JSON.parse(lines.at(-1)) : null;
  if (!response.ok || last?.result === undefined)
    throw new Error(`load: ${response.status} ${JSON.stringify(last)?.slice(0, 500)}`);
  return last.result;
}

/** The sum of the instance's Prometheus samples named `name` whose labels hold `label` ("" = all). */
async function metricSum(server, name, label = "") {
  const values = await metricOf(server, name);
  return Object.entries(values)
    .filter(([labels]) => labels.includes(label))
    .reduce((sum, [, value]) => sum + value, 0);
}

/** The instance's `mdq_store_reads_total` summed by target: {primary, replica1, replica2}. */
async function readsByTarget(server) {
  const totals = { primary: 0, replica1: 0, replica2: 0 };
  for (const [labels, value] of Object.entries(await metricOf(server, "mdq_store_reads_total"))) {
    const target = /target="([^"]+)"/.exec(labels)?.[1];
    if (target) totals[target] = (totals[target] ?? 0) + value;
  }
  return totals;
}

/** `after` − `before`, target by target. */
const readsBetween = (before, after) =>
  Object.fromEntries(Object.keys(after).map((target) => [target, after[target] - (before[target] ?? 0)]));

const readsText = (reads) =>
  Object.entries(reads)
    .map(([target, count]) => `${target} ${count}`)
    .join(", ");

/** The samples of the instance's Prometheus metrics named `name`, as {labels text: value}. */
async function metricOf(server, name) {
  const text = await (await fetch(`${server.adminUrl}/metrics`)).text();
  const values = {};
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const space = line.lastIndexOf(" ");
    values[line.slice(name.length, space) || "{}"] = Number(line.slice(space + 1));
  }
  return values;
}

/** One POST /graphql; the time until the whole answer is read, and the answer parsed. */
async function ask(server, token, body) {
  const started = performance.now();
  const response = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body,
  });
  const text = await response.text();
  const ms = performance.now() - started;
  const answer = response.status === 200 ? JSON.parse(text) : null;
  if (!answer || answer.errors)
    throw new Error(`MDQ refused a bench question (HTTP ${response.status}): ${text.slice(0, 500)}`);
  return { ms, answer };
}

/** The dashboard questions on one setup: a warm-up ask of each, then the timed asks. */
async function measureQuestions(server, token, scope, today, answers) {
  const results = {};
  for (const warmUp of [true, false]) {
    for (const [index, question] of QUESTIONS.entries()) {
      const asks = timedAsks(question, options.reps);
      results[question.id] ??= { label: question.label, kind: question.kind, ms: [] };
      for (let rep = 0; rep < (warmUp ? 1 : asks); rep += 1) {
        // The same variants are asked of each setup: each is its own process (its own page cache),
        // and the two setups' answers are compared.
        const variant = variantOf({ scope, today, index, rep, warmUp, asks, sourceCurrencies: [] });
        const { ms, answer } = await ask(server, token, question.body(variant));
        if (warmUp) continue;
        results[question.id].ms.push(ms);
        // myAccess reads the brand directory (the primary, whatever the setup) and answers each
        // token's own expiry: the one answer the two setups' tokens make differ.
        if (question.field === "myAccess") continue;
        const key = `${question.id}/${rep}`;
        const rows = canonical(answer.data[question.field]);
        if (!answers.has(key)) answers.set(key, rows);
        else if (answers.get(key) !== rows)
          throw new Error(
            `"${question.label}" (${variant.currency}, ${variant.scope.to}) answered differently on the standbys: ${firstDifference(JSON.parse(answers.get(key)), JSON.parse(rows))}`,
          );
      }
    }
  }
  for (const entry of Object.values(results)) entry.median = median(entry.ms);
  return results;
}

/**
 * The cold walk on one setup: one untimed set of walks (JIT warm, caches cold), then a fresh set
 * timed, `walkClients` clients at once (cold-walk.mjs's keys and walker process).
 */
async function measureColdWalk(server, context, setupIndex) {
  const clients = options.walkClients;
  const walksOf = (set) =>
    walkKeys(context, set, clients).map((key) => walkOf("mdq-postgres", context, key, WALK_PAGE_SIZE));
  // Sets 1 and 2 are timed (one per setup), 3 and 4 the warm-ups: no set is walked twice.
  await driveWalks({ url: server.url, clients, walks: walksOf(3 + setupIndex) });
  const result = await driveWalks({ url: server.url, clients, walks: walksOf(1 + setupIndex) });
  if (result.failures.length > 0) throw new Error(`cold walk failed: ${result.failures[0]}`);
  return {
    rowsPerSecond: result.rowsPerSecond,
    pages: result.pages,
    p50: result.p50,
    p99: result.p99,
  };
}

/**
 * Records pages asked by `pageClients` clients until `until()` says stop (checked before each
 * ask), each a fresh (window, currency, page) from `next()`; the latencies, sorted.
 */
async function askPages({ server, token, scope, next, until }) {
  const times = [];
  const client = async () => {
    while (!until(times.length)) {
      const { shift, currency, page } = next();
      const to = addDays(scope.to, -shift);
      const body = recordsBody({
        brandId: scope.brandId,
        from: addDays(to, -89),
        to,
        currency,
        page,
        pageSize: PAGE_SIZE,
      });
      times.push((await ask(server, token, body)).ms);
    }
  };
  await Promise.all(Array.from({ length: options.pageClients }, client));
  return times.sort((a, b) => a - b);
}

/** An endless supply of records-page variants no earlier one used: pages 1–3 × currencies × days. */
function pageVariants(firstShift) {
  let index = 0;
  return () => {
    const at = index++;
    return {
      page: 1 + (at % 3),
      currency: CURRENCY_CODES[Math.floor(at / 3) % CURRENCY_CODES.length],
      shift: firstShift + Math.floor(at / (3 * CURRENCY_CODES.length)),
    };
  };
}

/**
 * The load file: `rows` marketing records as CSV, shaped as bench/load.mjs generates them (one
 * row per day, market, source and campaign; deterministic values), written by DuckDB.
 */
async function generateLoadFile(work, rows) {
  const file = join(work, `records-${rows}.csv`);
  const days = 90;
  const instance = await DuckDBInstance.create(":memory:", { memory_limit: "1GB", temp_directory: work });
  const connection = await instance.connect();
  await connection.run(`COPY (${recordsQuery({ rows, days })}) TO '${file}' (HEADER, DELIMITER ',')`);
  connection.closeSync();
  instance.closeSync();
  log(`generated ${rows.toLocaleString("en")} rows: ${((await stat(file)).size / 1e6).toFixed(0)} MB of CSV`);
  return file;
}

/**
 * Records-page p99 of one setup idle, then while the load file lands on the primary in a brand of
 * its own (`POST /admin/loads`, what `mdq load` does). Idle pages use windows ending 100+ days
 * back and load-time pages 200+ (no page the questions or the walk asked).
 */
async function measureLoadP99({ server, loader, token, scope, file, setup, via }) {
  const idle = await askPages({
    server,
    token,
    scope,
    next: pageVariants(100),
    until: (asked) => asked >= options.idleAsks,
  });
  const brandId = `bench-load-${setup}-${via}`;
  await admin(loader, "POST", "/admin/brands", { brandId, name: `Load bench (${setup})` });
  let loading = true;
  const started = performance.now();
  const load = adminLoad(loader, {
    brandId,
    path: file,
    format: "csv",
    processingDate: "2026-04-01",
  }).finally(() => {
    loading = false;
  });
  const during = await askPages({ server, token, scope, next: pageVariants(200), until: () => !loading });
  const result = await load;
  const loadSeconds = (performance.now() - started) / 1000;
  if (result.rows !== options.loadRows)
    throw new Error(`${setup}: the load stored ${result.rows} rows, not ${options.loadRows}`);
  const idleP99 = percentile(idle, 99);
  const loadP99 = percentile(during, 99);
  return {
    idle: { asks: idle.length, p50: median(idle), p99: idleP99 },
    duringLoad: { asks: during.length, p50: median(during), p99: loadP99 },
    loadSeconds,
    ratio: loadP99 / idleP99,
  };
}

/** Every process of one PostgreSQL server of the pair: its postmaster and its children. */
async function serverPids(server) {
  const postmaster = (await readFile(join(server.dataDir, "postmaster.pid"), "utf8")).split("\n")[0].trim();
  const children = spawnSync("pgrep", ["-P", postmaster], { encoding: "utf8" }).stdout;
  return [postmaster, ...children.split("\n").filter((pid) => pid !== "")];
}

/** Pins every thread of each process in `pids` to `cores` (taskset's list, e.g. "0" or "0-1"). */
function pin(pids, cores) {
  for (const pid of pids) {
    const done = spawnSync("taskset", ["-a", "-p", "-c", cores, String(pid)], { encoding: "utf8" });
    if (done.status !== 0) throw new Error(`taskset -a -p -c ${cores} ${pid}: ${done.stderr.trim()}`);
  }
}

/**
 * For --load-via host: the primary (every backend; a backend forked later inherits the
 * postmaster's core) and the loading instance on core 0, the standbys, the reading instance and
 * this process on core 1, as if the primary had a host of its own. Returns the undo.
 */
async function pinAsHosts(pair, reader, loader) {
  const primary = await serverPids(pair.primary);
  const standbys = (await Promise.all(pair.standbys.map((standby) => serverPids(standby)))).flat();
  pin([...primary, loader.pid], "0");
  pin([...standbys, reader.pid, process.pid], "1");
  return async () => {
    const every = `0-${cpus().length - 1}`;
    pin([...(await serverPids(pair.primary)), loader.pid, reader.pid, process.pid], every);
    pin((await Promise.all(pair.standbys.map((standby) => serverPids(standby)))).flat(), every);
  };
}

/**
 * Whether records pages of a brand whose version the instance already knows read its position
 * from the primary: the instance's `mdq_replica_positions_total` by source, before and after
 * `asks` fresh records pages (the first one, which learns the position, excluded).
 */
async function knownBrandRoundTrips({ server, token, scope }) {
  const next = pageVariants(300);
  await askPages({ server, token, scope, next, until: (asked) => asked >= 1 });
  const positions = async () => ({
    primary: await metricSum(server, "mdq_replica_positions_total", 'source="primary"'),
    known: await metricSum(server, "mdq_replica_positions_total", 'source="known"'),
  });
  const before = await positions();
  const asks = 50;
  await askPages({ server, token, scope, next, until: (asked) => asked >= asks });
  const after = await positions();
  return { asks, fromPrimary: after.primary - before.primary, known: after.known - before.known };
}

/** The routing check alone, on a small database of its own: `targetFor` against `SELECT 1`. */
async function measureRoutingCheck(pair) {
  const database = await pair.createDatabase("bench_routing");
  await migrateDatabase(pair.primary.url(database));
  const config = loadConfig(
    {},
    {
      region: "uk",
      databaseUrl: pair.primary.url(database),
      databaseReplicaUrls: pair.standbys.map((standby) => standby.url(database)).join(","),
      dataDir: "/tmp",
    },
  );
  const router = await openStore(config);
  try {
    const brandId = "bench-brand";
    await router.createBrand({ brandId, name: "Bench", createdAt: new Date() });
    await router.addGrants(brandId, { markets: ["GB"], dataSources: ["search"] });
    for (const standby of pair.standbys) await standby.caughtUp();
    await router.observer.poll();
    const baseline = new pg.Pool({ connectionString: pair.primary.url(database), max: 1 });
    const select1 = await timed(() => baseline.query("SELECT 1"));
    const check = await timed(() => router.targetFor(brandId));
    const target = await router.targetFor(brandId);
    await baseline.end();
    return {
      select1: { median: median(select1), p99: percentile(select1, 99) },
      check: { median: median(check), p99: percentile(check, 99) },
      chose: target,
    };
  } finally {
    await router.close();
  }
}

const fixed = (value, digits = 1) => (value === null || value === undefined ? "–" : value.toFixed(digits));

function report(results) {
  const lines = [];
  const { read, load, routing, knownBrand } = results;
  lines.push(
    `read replicas bench, scale ${results.options.scale} (${results.rows.toLocaleString("en")} rows)`,
  );
  lines.push("");
  lines.push("(a) dashboard questions, first answers, median ms: primary alone | 2 standbys | ratio");
  for (const id of Object.keys(read.primary.questions)) {
    const a = read.primary.questions[id].median;
    const b = read.replicas.questions[id].median;
    lines.push(
      `  ${read.primary.questions[id].label.padEnd(58)} ${fixed(a).padStart(8)} | ${fixed(b).padStart(8)} | ${fixed(b / a, 2)}×`,
    );
  }
  const walkA = read.primary.coldWalk.rowsPerSecond;
  const walkB = read.replicas.coldWalk.rowsPerSecond;
  lines.push(
    `  cold walk, ${options.walkClients} clients, rows/s ${"".padEnd(30)} ${String(Math.round(walkA)).padStart(8)} | ${String(Math.round(walkB)).padStart(8)} | ${fixed(walkB / walkA, 2)}×`,
  );
  lines.push(`  reads by target on the standbys' instance: ${readsText(read.replicas.readsByTarget)}`);
  lines.push("");
  for (const via of Object.keys(load)) {
    lines.push(
      `(b) records-page p99 (${PAGE_SIZE}-row pages, ${options.pageClients} clients) during a ${options.loadRows.toLocaleString("en")}-row load on the primary, run by the ${LOAD_VIA_LABEL[via]}`,
    );
    for (const setup of SETUPS) {
      const entry = load[via][setup];
      lines.push(
        `  ${SETUP_LABEL[setup].padEnd(14)} idle p99 ${fixed(entry.idle.p99)} ms (${entry.idle.asks} pages), during load p99 ${fixed(entry.duringLoad.p99)} ms (${entry.duringLoad.asks} pages, load ${fixed(entry.loadSeconds)} s): ${fixed(entry.ratio, 2)}× idle`,
      );
    }
    lines.push(
      `  reads by target on the standbys' instance, idle and load: ${readsText(load[via].replicas.readsByTarget)}`,
    );
  }
  lines.push(
    `  target ≤ ${LOAD_P99_TARGET}× idle with standbys (load run by the ${LOAD_VIA_LABEL[options.loadVia[0]]}): ${results.targets.loadP99}`,
  );
  lines.push("");
  lines.push("(c) routing check");
  lines.push(
    `  SELECT 1 on the primary     median ${fixed(routing.select1.median, 3)} ms   p99 ${fixed(routing.select1.p99, 3)} ms`,
  );
  lines.push(
    `  routing check (targetFor)   median ${fixed(routing.check.median, 3)} ms   p99 ${fixed(routing.check.p99, 3)} ms; chose ${routing.chose}`,
  );
  lines.push(`  target median ≤ 1 ms: ${results.targets.routingMedian}`);
  lines.push(
    `  known brand: ${knownBrand.asks} records pages read ${knownBrand.fromPrimary} positions from the primary, ${knownBrand.known} known: ${results.targets.knownBrand}`,
  );
  return `${lines.join("\n")}\n`;
}

const started = Date.now();
const work = await mkdtemp(join(tmpdir(), "mdq-bench-replicas-"));
const logDir = join(work, "logs");
await mkdir(logDir, { recursive: true });
const results = {
  startedAt: new Date(started).toISOString(),
  options,
  machine: machine(),
};
const running = [];
let exitCode = 0;
log(`starting a primary and 2 standbys (work directory ${work})`);
const pair = await startStandbyPair(2);
try {
  const serverUrl = pair.primary.url("postgres");
  const seedStarted = performance.now();
  const databaseUrl = await seedPostgres({
    serverUrl,
    scale: options.scale,
    days: options.days,
    dataDir: join(work, "seed"),
    credentialsFile: join(work, "credentials.json"),
    database: DATABASE,
  });
  // The demo seed ran without standbys configured, so no brand has a recorded position yet (a
  // read would then need the primary's current one, which a load moves ahead of every standby):
  // record them, as a write through the router does.
  const primaryPool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  await recordCommitLsns(primaryPool, null);
  results.rows = Number((await primaryPool.query("SELECT count(*) AS n FROM records")).rows[0].n);
  await primaryPool.end();
  results.seedSeconds = (performance.now() - seedStarted) / 1000;
  for (const standby of pair.standbys) await standby.caughtUp(600_000);
  log(
    `seeded scale ${options.scale}: ${results.rows.toLocaleString("en")} rows in ${results.seedSeconds.toFixed(0)} s; standbys caught up`,
  );
  const credentials = JSON.parse(await readFile(join(work, "credentials.json"), "utf8"));
  const replicaUrls = pair.standbys.map((standby) => standby.url(DATABASE)).join(",");
  const loadFile = await generateLoadFile(work, options.loadRows);

  const today = todayIn(loadConfig({}, {}).timeZone);
  const app = credentials.apps.find((each) => each.brandClientId === "brand-acme") ?? credentials.apps[0];
  const scope = {
    brandId: app.brandClientId,
    from: addDays(today, -90),
    to: addDays(today, -1),
    markets: app.markets,
    dataSources: app.dataSources,
  };
  const servers = {};
  for (const setup of SETUPS) {
    servers[setup] = await startMdq({
      name: `mdq-${setup}`,
      databaseUrl,
      replicaUrls: setup === "replicas" ? replicaUrls : "",
      dataDir: join(work, `data-${setup}`),
      logDir,
    });
    running.push(servers[setup]);
    servers[setup].tokens = await tokensOf(servers[setup].url, credentials);
  }

  // (a) the read bench.
  results.read = {};
  const answers = new Map();
  for (const [setupIndex, setup] of SETUPS.entries()) {
    const server = servers[setup];
    const token = server.tokens[app.appClientId];
    log(`[${SETUP_LABEL[setup]}] dashboard questions`);
    const questions = await measureQuestions(server, token, scope, today, answers);
    log(`[${SETUP_LABEL[setup]}] cold walk, ${options.walkClients} clients`);
    const context = {
      credentials: { duckdb: credentials },
      tokens: { postgres: server.tokens },
      question: { ...scope, currency: "EUR" },
    };
    const coldWalk = await measureColdWalk(server, context, setupIndex);
    results.read[setup] = {
      questions,
      coldWalk,
      readsByTarget: await readsByTarget(server),
    };
  }

  // (b) records-page p99 during a load, each setup against its own idle p99; the load run by the
  // other setup's instance, by the reading one, or both (--load-via).
  results.load = {};
  for (const via of options.loadVia) {
    results.load[via] = {};
    for (const setup of SETUPS) {
      const server = servers[setup];
      const loader = via === "same" ? server : servers[SETUPS.find((other) => other !== setup)];
      log(
        `[${SETUP_LABEL[setup]}] records pages idle, then during a ${options.loadRows}-row load (${LOAD_VIA_LABEL[via]})`,
      );
      const before = await readsByTarget(server);
      const unpin = via === "host" ? await pinAsHosts(pair, server, loader) : async () => undefined;
      const measured = await measureLoadP99({
        server,
        loader,
        token: server.tokens[app.appClientId],
        scope,
        file: loadFile,
        setup,
        via,
      }).finally(unpin);
      measured.readsByTarget = readsBetween(before, await readsByTarget(server));
      measured.fallbacks = await metricOf(server, "mdq_replica_fallbacks_total");
      results.load[via][setup] = measured;
      for (const standby of pair.standbys) await standby.caughtUp(600_000);
    }
  }

  // (c) the routing check, and a known brand's round trips on the standbys' instance.
  for (const standby of pair.standbys) await standby.caughtUp(600_000);
  results.knownBrand = await knownBrandRoundTrips({
    server: servers.replicas,
    token: servers.replicas.tokens[app.appClientId],
    scope,
  });
  results.routing = await measureRoutingCheck(pair);

  results.targets = {
    loadP99: results.load[options.loadVia[0]].replicas.ratio <= LOAD_P99_TARGET ? "PASS" : "FAIL",
    routingMedian: results.routing.check.median <= 1 ? "PASS" : "FAIL",
    knownBrand: results.knownBrand.fromPrimary === 0 ? "PASS" : "FAIL",
  };
} catch (error) {
  log(`replicas bench failed (logs in ${logDir}): ${error.stack ?? error.message}`);
  exitCode = 1;
} finally {
  for (const server of running) await server.stop();
  await pair.stop();
}
results.machine.loadAverageAtEnd = loadavg()[0];
results.seconds = Math.round((Date.now() - started) / 1000);
if (exitCode === 0) {
  const out = resultsDirectory(args.save);
  await mkdir(out, { recursive: true });
  const file = join(out, "replicas-latest.json");
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`\n${report(results)}wrote ${file}\n`);
}
if (args.keep || exitCode !== 0) log(`kept the work directory ${work}`);
else await rm(work, { recursive: true, force: true });
process.exit(exitCode);
