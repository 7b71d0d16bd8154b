#!/usr/bin/env node
// The morning herd (issue 55): a region of B brands whose sizes follow a Zipf law (the largest
// about 100× the median, as large as brand-acme at demo scale 150), each with its own app, all
// published at time 0; each brand's client then runs the real daily flow with the mdq-client SDK
// (token, readiness polled until READY, marketingDataChanges, a 7-day mirror; every tenth brand
// also 3 dashboard aggregates, one by CAMPAIGN_ID), starting at a random moment (seeded) within
// the first `--spread` seconds. Beside them, a noisy tenant: 4 year-long exports and a year's
// CAMPAIGN_ID aggregate, each in a loop. The same herd runs with and without the noisy tenant;
// DuckDB is served by one instance, PostgreSQL + Redis by 3 behind nginx. Each brand's sync is
// also measured alone (before the herds: it warms the stores as a region's day would), and 8
// clients walk 90-day windows of the 8 largest brands cold, through the same front, for the
// throughput baseline. Every request states its Accept-Encoding (`--compression`); `--wan` puts a
// throttling proxy in front; `--compression both` compares a 90-day walk with and without. Each
// instance's mdq_question_duration_seconds, read before and after each herd, gives the service's
// own latency per question beside the clients'. Prints one table per herd and the issue's targets
// as PASS/FAIL lines.
//   npm run build && npm install --prefix bench && node bench/herd.mjs [flags]
//   smoke: node bench/herd.mjs --brands 12 --largest-scale 2 --spread 5 --stores duckdb
// See bench/README.md ("The morning herd").
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
// The server's small modules only, not its index: the bench's own memory stays small.
import { ensureAdminToken } from "../packages/server/dist/src/admin/admin-token.js";
import { todayIn } from "../packages/server/dist/src/calendar.js";
import { nginxConfig } from "../packages/test-support/dist/src/nginx.js";
import { mulberry32 } from "../packages/test-support/dist/src/seeded-random.js";
import { benchArgs } from "./harness/bench-args.mjs";
import { tokenOf } from "./harness/demo-region.mjs";
import { addDays } from "./harness/demo-service.mjs";
import { ACCEPT_ENCODING } from "./harness/herd-clients.mjs";
import { planHerdRegion, seedHerdRegion } from "./harness/herd-region.mjs";
import {
  aloneThroughput,
  compressionTable,
  herdTable,
  summarizeHerd,
  targetLines,
} from "./harness/herd-report.mjs";
import { list, positive, resultsDirectory } from "./harness/options.mjs";
import {
  cpuMs,
  freePort,
  machine,
  resetPeakRss,
  runJsonProcess,
  startContender,
  statusKb,
} from "./harness/processes.mjs";
import { recordsBody } from "./harness/queries.mjs";
import { readQuestionHistograms, serverLatency } from "./harness/question-metrics.mjs";
import { parseRate, parseRtt } from "./harness/wan-proxy.mjs";

const USAGE = `node bench/herd.mjs [flags]   (after npm run build and npm install --prefix bench)

  --brands N          brands in the region (default 200)
  --largest-scale N   the largest brand holds what brand-acme stores at this demo scale
                      (default 150: 6,900 campaigns a day, 2.76 M rows over 400 days)
  --days N            data days ending yesterday (default 400; the noisy tenant exports the last 365)
  --spread S          brands start at random moments within the first S seconds (default 60)
  --seed N            seed of those moments (default 1)
  --noisy X           on, off or both (default both: the same herd with and without the noisy tenant)
  --noisy-exports N   concurrent year-long export loops of the noisy tenant (default 4)
  --stores L          among duckdb, postgres (default both)
  --instances N       PostgreSQL instances behind nginx (default 3; DuckDB always runs one)
  --balance X         how nginx spreads requests: token (docs/deployment.md's hash of
                      Authorization: a token's requests to one instance) or round-robin
                      (default token)
  --alone X           all, or N: how many brands' syncs are measured alone for the slowdown
                      (default all; N takes the largest, the smallest and evenly spaced ranks between)
  --walk-clients N    clients of the cold-walk baseline (default 8)
  --wan RATE,RTT      put a throttling TCP proxy between the clients and the region, e.g. 50mbit,40ms
                      (RATE each way, RTT/2 delay each way: per connection in the herds; one link
                      per walking client, shared by its connections, in --compression both's walks)
  --compression X     on, off or both (default on). Every request states its Accept-Encoding: on is
                      the SDK's default (gzip, br; a text export gzip), off is identity, for the
                      herds and the cold walk; both runs them on, then walks the largest brand's
                      90 days with and without compression, with the SDK and the bare walker, on
                      loopback and (with --wan) over the WAN link: time, wire bytes, CPU per page
  --postgres-url U    server holding the bench database (default postgres://root@127.0.0.1:5432/postgres)
  --redis-url U       Redis of the PostgreSQL instances (default redis://127.0.0.1:6379)
  --save              write the committed bench/results/herd-latest.json
                      (default: bench/results/local/herd-latest.json, which git ignores)
  --out DIR           where herd-latest.json goes instead (overrides --save)
  --keep              keep the work directory (server logs, data)
  --help              this text
`;

const values = benchArgs(
  "bench/herd.mjs",
  USAGE,
  {
    brands: { type: "string", default: "200" },
    "largest-scale": { type: "string", default: "150" },
    days: { type: "string", default: "400" },
    spread: { type: "string", default: "60" },
    seed: { type: "string", default: "1" },
    noisy: { type: "string", default: "both" },
    "noisy-exports": { type: "string", default: "4" },
    stores: { type: "string", default: "duckdb,postgres" },
    instances: { type: "string", default: "3" },
    balance: { type: "string", default: "token" },
    alone: { type: "string", default: "all" },
    "walk-clients": { type: "string", default: "8" },
    wan: { type: "string" },
    compression: { type: "string", default: "on" },
    "postgres-url": { type: "string", default: "postgres://root@127.0.0.1:5432/postgres" },
    "redis-url": { type: "string", default: "redis://127.0.0.1:6379" },
    save: { type: "boolean", default: false },
    out: { type: "string" },
    keep: { type: "boolean", default: false },
  },
  ["brands", "largest-scale", "days", "spread", "seed", "noisy-exports", "instances", "walk-clients"],
  (checked) => {
    list("stores", checked.stores, ["duckdb", "postgres"]);
    list("noisy", checked.noisy, ["on", "off", "both"]);
    if (checked.alone !== "all") positive("alone", checked.alone);
    list("compression", checked.compression, ["on", "off", "both"]);
    list("balance", checked.balance, ["round-robin", "token"]);
    if (checked.wan !== undefined) {
      const [rate, rtt, extra] = checked.wan.split(",");
      if (extra !== undefined || rtt === undefined) throw new Error("--wan is RATE,RTT, e.g. 50mbit,40ms");
      parseRate(rate);
      parseRtt(rtt);
    }
    if (Number(checked.days) < 366)
      throw new Error("--days must be at least 366 (the noisy tenant exports a year)");
  },
);
const options = Object.freeze({
  brands: Number(values.brands),
  largestScale: Number(values["largest-scale"]),
  days: Number(values.days),
  spread: Number(values.spread),
  seed: Number(values.seed),
  noisy: values.noisy === "both" ? [false, true] : [values.noisy === "on"],
  noisyExports: Number(values["noisy-exports"]),
  stores: list("stores", values.stores, ["duckdb", "postgres"]),
  instances: Number(values.instances),
  balance: values.balance,
  alone: values.alone === "all" ? Number.POSITIVE_INFINITY : Number(values.alone),
  walkClients: Number(values["walk-clients"]),
  wan: values.wan ?? null,
  compression: values.compression,
  postgresUrl: values["postgres-url"],
  redisUrl: values["redis-url"],
  out: values.out ?? resultsDirectory(values.save),
  keep: values.keep,
});

const MDQ = new URL("../packages/cli/bin/mdq.cjs", import.meta.url).pathname;
const CLIENTS = new URL("./harness/herd-clients.mjs", import.meta.url).pathname;
const WAN_PROXY = new URL("./harness/wan-proxy.mjs", import.meta.url).pathname;
/** The cold walk's walker (bench/harness/walk.mjs), in a process of its own. */
const WALKER = new URL("./harness/walk.mjs", import.meta.url).pathname;
const NGINX = "/usr/sbin/nginx";
/** The region's clock: every brand's today is this zone's. */
const TIME_ZONE = "Europe/London";
const AUTH_URL = "http://mdq-herd.localhost";
/** Currencies of the cold walk and of the compression walks: none the herd (EUR) asks. */
const WALK_CURRENCIES = ["CHF", "SEK", "NOK", "DKK", "PLN", "CZK", "HUF", "AUD", "CAD", "JPY"];
const DATABASE = `mdq_herd_bench_${process.pid}`;

const log = (message) => process.stderr.write(`${message}\n`);

/** The ranks measured alone: all, or `count` spread over the ranks (the largest and smallest in). */
function aloneRanks(brands, count) {
  if (count >= brands) return Array.from({ length: brands }, (_, index) => index + 1);
  if (count === 1) return [1];
  const ranks = new Set();
  for (let index = 0; index < count; index += 1)
    ranks.add(1 + Math.round((index * (brands - 1)) / (count - 1)));
  return [...ranks];
}

/** nginx in front of `upstreams` (docs/deployment.md's configuration, room for a herd's connections). */
async function startNginx(prefix, upstreams) {
  if (!existsSync(NGINX))
    throw new Error(
      `${NGINX} is missing: the PostgreSQL herd runs behind Debian's nginx (apt-get install nginx-light)`,
    );
  await mkdir(prefix, { recursive: true });
  const port = await freePort();
  const config = join(prefix, "nginx.conf");
  await writeFile(
    config,
    nginxConfig(prefix, port, upstreams, { balance: options.balance }).replace(
      "worker_connections 256",
      "worker_connections 8192",
    ),
  );
  const child = spawn(
    NGINX,
    ["-p", prefix, "-e", join(prefix, "error.log"), "-c", config, "-g", "daemon off;"],
    {
      stdio: "ignore",
    },
  );
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries += 1) {
    if (child.exitCode !== null)
      throw new Error(`nginx exited with ${child.exitCode} (see ${prefix}/error.log)`);
    if (
      await fetch(`${url}/livez`).then(
        (response) => response.ok,
        () => false,
      )
    )
      break;
    if (tries > 200) throw new Error("nginx did not answer in 10 s");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}

/**
 * The throttling proxy in its own process, in front of `target`; resolves once it listens. A
 * `shared` link is one client's: all its connections share the rate.
 */
async function startWanProxy(target, wan, { shared = false } = {}) {
  const [rate, rtt] = wan.split(",");
  const child = spawn(process.execPath, [WAN_PROXY, JSON.stringify({ target, rate, rtt, shared })], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [line] = await once(child.stdout, "data");
  const { port } = JSON.parse(String(line));
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}

/** Runs the clients' process with `spec`; resolves to its result (requests included). */
async function runClients(work, spec, { noisy = false } = {}) {
  const file = join(work, `clients-${spec.role}-${Date.now()}.json`);
  const out = `${file}.out`;
  await writeFile(file, JSON.stringify({ ...spec, work: join(work, "mirrors"), out }));
  const child = spawn(process.execPath, [CLIENTS, file], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = once(child, "exit");
  const finish = async () => {
    const [code] = await exited;
    if (code !== 0) throw new Error(`herd-clients.mjs (${spec.role}) exited with ${code}`);
    const result = JSON.parse(await readFile(out, "utf8"));
    await rm(file, { force: true });
    await rm(out, { force: true });
    return result;
  };
  if (!noisy) {
    child.stdin.end();
    return finish();
  }
  // The tenant says "started" once its loops run; a tenant that dies first is an error, not a hang.
  await Promise.race([
    once(child.stdout, "data"),
    exited.then(([code]) => {
      throw new Error(`herd-clients.mjs (noisy) exited with ${code} before starting`);
    }),
  ]);
  return {
    stop() {
      child.stdin.end("stop\n");
      return finish();
    },
  };
}

/** Starts the region of one store: its instances (and nginx in front of several). */
async function startRegion(store, { work, logDir, databaseUrl, region }) {
  const count = store === "postgres" ? options.instances : 1;
  const instances = [];
  for (let index = 0; index < count; index += 1) {
    const dataDir = store === "duckdb" ? join(work, "duckdb") : join(work, `instance-${index + 1}`);
    await mkdir(dataDir, { recursive: true });
    const adminToken = await ensureAdminToken(dataDir);
    const port = await freePort();
    const adminPort = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const running = await startContender({
      name: `mdq-${store}-${index + 1}`,
      command: process.execPath,
      args: [MDQ, "serve", "--port", String(port), "--data", dataDir],
      env: {
        MDQ_LOG_LEVEL: "warn",
        MDQ_REGION: region,
        MDQ_TIME_ZONE: TIME_ZONE,
        // The herd comes from one address: the per-address limit is raised out of its way.
        MDQ_RATE_LIMIT_MAX: "1000000000",
        MDQ_AUTH_URL: AUTH_URL,
        MDQ_BASE_URL: AUTH_URL,
        MDQ_ADMIN_PORT: String(adminPort),
        MDQ_DATABASE_URL: databaseUrl ?? "",
        MDQ_REDIS_URL: store === "postgres" ? options.redisUrl : "",
        // Behind nginx, the client's address is the one nginx appends to X-Forwarded-For.
        ...(count > 1 ? { MDQ_TRUSTED_PROXIES: "127.0.0.1" } : {}),
      },
      readyUrl: `${url}/livez`,
      logDir,
    });
    instances.push({ ...running, url, adminUrl: `http://127.0.0.1:${adminPort}`, adminToken });
  }
  const nginx =
    count > 1
      ? await startNginx(
          join(work, "nginx"),
          instances.map((i) => Number(new URL(i.url).port)),
        )
      : null;
  return {
    instances,
    front: nginx?.url ?? instances[0].url,
    async stop() {
      await nginx?.stop();
      for (const instance of instances) await instance.stop();
    },
  };
}

/** Publishes today for every brand (time 0 of a run), through the first instance's admin API. */
async function publishAll(region, apps) {
  const [first] = region.instances;
  for (const app of apps) {
    const response = await fetch(`${first.adminUrl}/admin/publishes`, {
      method: "POST",
      headers: { authorization: `Bearer ${first.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ brandId: app.brandClientId }),
    });
    if (!response.ok)
      throw new Error(`publish ${app.brandClientId}: HTTP ${response.status} ${await response.text()}`);
  }
}

/** Peak RSS (MB) of each instance since the last `resetPeaks` (VmHWM). */
async function peaks(region) {
  return Promise.all(
    region.instances.map(async (instance) => ((await statusKb(instance.pid, "VmHWM")) ?? 0) / 1024),
  );
}
async function resetPeaks(region) {
  for (const instance of region.instances) await resetPeakRss(instance.pid);
}

/** The walker's walk of `app`'s 90 days ending yesterday in 5000-row pages, in `currency`. */
function ninetyDayWalk(app, token, today, currency) {
  const to = addDays(today, -1);
  return {
    mode: "page",
    path: "/graphql",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: recordsBody({
      brandId: app.brandClientId,
      from: addDays(to, -89),
      to,
      currency,
      page: "__PAGE__",
      pageSize: 5000,
    }),
  };
}

/** Runs the walker (its own process) with every page asking `compression`'s Accept-Encoding. */
async function runWalker(url, clients, walks, compression) {
  const result = await runJsonProcess(
    WALKER,
    { url, clients, walks },
    { MDQ_BENCH_ACCEPT_ENCODING: ACCEPT_ENCODING[compression] },
  );
  if (result.failures.length > 0) throw new Error(`the walk failed: ${result.failures[0]}`);
  return result;
}

/** The cold-walk baseline: `walkClients` clients each walking a 90-day window of the largest brands. */
async function coldWalk(url, apps, today, compression) {
  const largest = apps.slice(0, Math.min(options.walkClients, apps.length));
  const walks = await Promise.all(
    largest.map(async (app) => ninetyDayWalk(app, await tokenOf(url, app), today, WALK_CURRENCIES[0])),
  );
  const result = await runWalker(url, options.walkClients, walks, compression);
  return {
    rowsPerSecond: result.rowsPerSecond,
    rows: result.rows,
    seconds: result.seconds,
    p99: result.p99,
    acceptEncoding: result.acceptEncoding,
  };
}

/** CPU ms used so far by every instance of `region` (each process's every thread). */
async function regionCpuMs(region) {
  const each = await Promise.all(region.instances.map((instance) => cpuMs(instance.pid)));
  return each.reduce((sum, ms) => sum + (ms ?? 0), 0);
}

/**
 * The largest brand's 90-day walk in 5000-row pages per link (loopback, WAN), client (the SDK
 * parsing and validating each page as a sync does; the bare walker, which only counts rows) and
 * compression (off, on), each in a currency no other walk of the run asked: time, rows, bytes
 * on the wire, the region's CPU (every instance, before/after) and the client process's CPU.
 */
async function compareCompression({ work, store, region, apps, today }) {
  // One client walks at a time: the WAN link is that client's, shared by its connections (the
  // SDK keeps two requests in flight), not one link per connection as in the herds.
  const wanProxy = options.wan
    ? await startWanProxy(new URL(region.front).host, options.wan, { shared: true })
    : null;
  try {
    return await compressionWalks({ work, store, region, apps, today, wanProxy });
  } finally {
    await wanProxy?.stop();
  }
}

/** compareCompression's walks: each link, client and compression in turn. */
async function compressionWalks({ work, store, region, apps, today, wanProxy }) {
  const walks = [];
  let currency = 1; // WALK_CURRENCIES[0] is the cold walk's
  const links = [["loopback", region.front], ...(wanProxy ? [["wan", wanProxy.url]] : [])];
  const app = apps[0];
  for (const [link, url] of links) {
    for (const client of ["sdk", "walker"]) {
      for (const compression of ["off", "on"]) {
        const walkCurrency = WALK_CURRENCIES[currency++ % WALK_CURRENCIES.length];
        const serverBefore = await regionCpuMs(region);
        let walk;
        if (client === "sdk") {
          const result = await runClients(work, {
            role: "walk",
            url,
            today,
            compression,
            rounds: 1,
            currencies: [walkCurrency],
            apps: [app],
          });
          walk = result.rounds[0];
        } else {
          const token = await tokenOf(url, app);
          const result = await runWalker(
            url,
            1,
            [ninetyDayWalk(app, token, today, walkCurrency)],
            compression,
          );
          walk = {
            rows: result.rows,
            pages: result.pages,
            seconds: result.seconds,
            wireDown: result.wireDown,
            wireUp: result.wireUp,
            clientCpuMs: result.clientCpuMs,
          };
        }
        const serverCpuMs = (await regionCpuMs(region)) - serverBefore;
        walks.push({
          link,
          client,
          compression,
          acceptEncoding: ACCEPT_ENCODING[compression],
          ...walk,
          serverCpuMs,
        });
        log(
          `[${store}] 90-day walk, ${link}, ${client}, compression ${compression}: ${walk.seconds.toFixed(2)} s`,
        );
      }
    }
  }
  return { store, rank: app.rank, balance: region.instances.length > 1 ? options.balance : null, walks };
}

async function onServer(work) {
  const client = new pg.Client({ connectionString: options.postgresUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Seeds, serves and runs every herd of one store; resolves to its results. */
async function measureStore(store, plan, root) {
  const work = join(root, store);
  const logDir = join(work, "logs");
  await mkdir(logDir, { recursive: true });
  const today = todayIn(TIME_ZONE);
  // A region code of its own keeps this run's Redis keys apart from any other's.
  const region = `hb${String.fromCharCode(
    ...String(process.pid)
      .split("")
      .map((d) => 97 + Number(d)),
  )}`.slice(0, 8);
  let databaseUrl = null;
  if (store === "postgres") {
    await onServer((client) => client.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`));
    await onServer((client) => client.query(`CREATE DATABASE ${DATABASE}`));
    const url = new URL(options.postgresUrl);
    url.pathname = `/${DATABASE}`;
    databaseUrl = url.toString();
  }
  let running = null;
  let wanProxy = null;
  try {
    const seedStarted = performance.now();
    const credentials = await seedHerdRegion({
      plan,
      days: options.days,
      today,
      dataDir: join(work, "duckdb"),
      env: { MDQ_DATABASE_URL: databaseUrl ?? "", MDQ_REGION: region, MDQ_TIME_ZONE: TIME_ZONE },
      credentialsFile: join(work, "credentials.json"),
    });
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    if (databaseUrl) {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      await client.query("VACUUM (ANALYZE)");
      await client.end();
    }
    log(`[${store}] seeded ${plan.brands.length} brands and the noisy tenant in ${seedSeconds.toFixed(1)} s`);
    running = await startRegion(store, { work, logDir, databaseUrl, region });
    wanProxy = options.wan ? await startWanProxy(new URL(running.front).host, options.wan) : null;
    const url = wanProxy?.url ?? running.front;
    const apps = credentials.apps.filter((app) => app.rank > 0);
    const noisyApp = credentials.apps.find((app) => app.rank === 0);
    // Every request states its Accept-Encoding: the SDK's own (on) unless --compression off.
    const herdCompression = options.compression === "off" ? "off" : "on";
    const random = mulberry32(options.seed); // the seeded randomness of the brands' start moments
    const starts = apps.map(() => Math.round(random() * options.spread * 1000));
    const instancesPeakRssMb = running.instances.map(() => 0);
    const notePeaks = async () => {
      for (const [index, mb] of (await peaks(running)).entries())
        instancesPeakRssMb[index] = Math.max(instancesPeakRssMb[index], mb);
    };

    const ranks = aloneRanks(apps.length, options.alone);
    log(`[${store}] each brand's sync alone (${ranks.length} of ${apps.length} brands)`);
    await publishAll(running, credentials.apps);
    await resetPeaks(running);
    const aloneResult = await runClients(work, {
      role: "alone",
      url,
      today,
      compression: herdCompression,
      apps: apps.filter((app) => ranks.includes(app.rank)),
    });
    await notePeaks();
    const alone = Object.fromEntries(
      aloneResult.brands
        .filter((brand) => brand.error === null)
        .map((brand) => [brand.rank, brand.syncSeconds]),
    );
    const aloneFailed = aloneResult.brands.filter((brand) => brand.error !== null);
    const aloneRate = aloneThroughput(aloneResult.brands);
    if (aloneFailed.length > 0)
      log(`[${store}] ${aloneFailed.length} alone syncs failed: ${aloneFailed[0].error}`);

    const runs = [];
    for (const noisy of options.noisy) {
      log(`[${store}] herd of ${apps.length} brands, noisy tenant ${noisy ? "on" : "off"}`);
      await publishAll(running, credentials.apps);
      await resetPeaks(running);
      const adminUrls = running.instances.map((instance) => instance.adminUrl);
      const questionsBefore = await readQuestionHistograms(adminUrls);
      const tenant = noisy
        ? await runClients(
            work,
            {
              role: "noisy",
              url,
              today,
              compression: herdCompression,
              exports: options.noisyExports,
              apps: [noisyApp],
            },
            { noisy: true },
          )
        : null;
      const herd = await runClients(work, {
        role: "herd",
        url,
        today,
        compression: herdCompression,
        apps: apps.map((app, index) => ({ ...app, startMs: starts[index] })),
      });
      const tenantResult = tenant ? await tenant.stop() : null;
      // The service's own latency by question during the herd (the tenant's requests included).
      const serverClasses = serverLatency(questionsBefore, await readQuestionHistograms(adminUrls));
      const peakRssMb = await peaks(running);
      await notePeaks();
      const summary = summarizeHerd({ herd, noisy: tenantResult, alone });
      runs.push({
        store,
        instances: running.instances.length,
        balance: options.balance,
        noisy,
        wan: options.wan,
        compression: herdCompression,
        summary,
        serverClasses,
        aloneThroughput: aloneRate,
        peakRssMb,
      });
      log(
        `[${store}] herd done in ${summary.completionSeconds.toFixed(1)} s, ${summary.failed.length} brands failed`,
      );
    }

    log(`[${store}] cold walk: ${options.walkClients} clients, 90-day windows of the largest brands`);
    await resetPeaks(running);
    const walk = await coldWalk(url, apps, today, herdCompression);
    await notePeaks();
    for (const run of runs) run.coldWalk = walk;

    const compression =
      options.compression === "both"
        ? await compareCompression({ work, store, region: running, apps, today })
        : null;
    await notePeaks();
    return {
      store,
      seedSeconds,
      aloneBrands: ranks.length,
      aloneFailed: aloneFailed.map((brand) => `rank ${brand.rank}: ${brand.error}`),
      instancesPeakRssMb,
      runs,
      coldWalk: walk,
      compression,
    };
  } finally {
    await wanProxy?.stop();
    await running?.stop();
    if (databaseUrl)
      await onServer((client) => client.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`)).catch(
        () => {},
      );
  }
}

async function main() {
  const plan = planHerdRegion({
    brands: options.brands,
    largestScale: options.largestScale,
    days: options.days,
  });
  const rows = plan.brands.map((brand) => brand.rows);
  const medianRows = [...rows].sort((a, b) => a - b)[Math.floor(rows.length / 2)];
  const region = {
    brands: plan.brands.length,
    zipfExponent: plan.exponent,
    rows: rows.reduce((sum, n) => sum + n, 0),
    largestRows: rows[0],
    medianRows,
    largestOverMedian: rows[0] / medianRows,
    noisyRows: plan.noisy.rows,
  };
  log(
    `region: ${region.brands} brands, ${region.rows.toLocaleString("en")} rows (+ ${region.noisyRows.toLocaleString("en")} of the noisy tenant); largest ${region.largestRows.toLocaleString("en")}, median ${medianRows.toLocaleString("en")} (${region.largestOverMedian.toFixed(0)}×), Zipf exponent ${plan.exponent.toFixed(3)}`,
  );
  const started = Date.now();
  const root = await mkdtemp(join(tmpdir(), "mdq-bench-herd-"));
  const results = {
    startedAt: new Date(started).toISOString(),
    options: {
      ...options,
      out: undefined,
      postgresUrl: new URL(options.postgresUrl).host,
      alone: values.alone,
    },
    machine: machine(),
    region,
    stores: [],
  };
  let exitCode = 0;
  try {
    for (const store of options.stores) results.stores.push(await measureStore(store, plan, root));
  } catch (error) {
    log(`herd bench failed: ${error.stack ?? error.message}`);
    exitCode = 1;
  }
  results.machine.loadAverageAtEnd = loadavg()[0];
  results.seconds = Math.round((Date.now() - started) / 1000);
  const output = [
    `region: ${region.brands} brands (Zipf exponent ${plan.exponent.toFixed(3)}), ${region.rows.toLocaleString("en")} rows; largest ${region.largestRows.toLocaleString("en")}, median ${region.medianRows.toLocaleString("en")} (${region.largestOverMedian.toFixed(0)}×); noisy tenant ${region.noisyRows.toLocaleString("en")}; spread ${options.spread} s, seed ${options.seed}`,
  ];
  for (const store of results.stores) {
    output.push(
      "",
      `seeded in ${store.seedSeconds.toFixed(1)} s; slowdown baseline: ${store.aloneBrands} brands' syncs alone, before the herds${store.aloneFailed.length > 0 ? ` (${store.aloneFailed.length} failed)` : ""}`,
    );
    for (const run of store.runs) output.push("", herdTable(run));
    if (store.compression) output.push("", compressionTable(store.compression));
    store.targets = targetLines(store);
    output.push("", ...store.targets);
  }
  await mkdir(options.out, { recursive: true });
  const file = join(options.out, "herd-latest.json");
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${output.join("\n")}\nwrote ${file}\n`);
  if (options.keep || exitCode !== 0) log(`kept the work directory ${root} (server logs, data)`);
  else await rm(root, { recursive: true, force: true });
  return exitCode;
}

process.exit(await main());
