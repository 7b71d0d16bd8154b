#!/usr/bin/env node
// The growth bench (issue 17): how MDQ's first answers grow with the data. For each scale it seeds
// the demo region afresh on each store (`mdq demo --seed-only --scale N`; PostgreSQL in a database
// of its own), starts `mdq serve` as shipped, takes a real token of each demo app, and for
// brand-acme's latest 90 days times the first answer of each question (scale-questions.mjs) —
// every timed ask is a (window, currency) no earlier ask used, so no cache of MDQ answers it —
// beside the engine's own SELECT for the same answer (engine-sql.mjs), run by this process on the
// same data, whose values must equal MDQ's. Then one client walking the window, 8 clients walking
// cold (the cold-walk scenario, against the in-memory replay of the same answers), seeding time,
// disk size and the server's peak RSS; and the targets, MET or MISSED. The summary
// questions' growth is read against a scale-1 store of each engine asked in turn with them
// (`measureQuestions`' reference), not against scale 1's own run minutes earlier.
//   npm run build && node bench/scale.mjs [--scales 1,30] [--stores duckdb,postgres] [--save]
// (`npm run bench -- --growth` runs it too.) See bench/README.md.
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { addDays, CURRENCY_CODES, loadConfig, todayIn } from "../packages/server/dist/src/index.js";
import { driveWalks, measureColdWalk, walkOf } from "./harness/cold-walk.mjs";
import { CONTENDERS } from "./harness/contenders.mjs";
import { countRows, seedDuckDb, tokensOf } from "./harness/demo-region.mjs";
import { openEngine, recordsSql, sourceCurrenciesOf } from "./harness/engine-sql.mjs";
import { list, positive, RUN_FLAGS, resultsDirectory } from "./harness/options.mjs";
import { dropBenchDatabase, postgresStoreMissing, seedPostgres } from "./harness/postgres.mjs";
import { machine, statusKb } from "./harness/processes.mjs";
import {
  canonical,
  firstDifference,
  QUESTIONS,
  timedAsks,
  variantOf,
  WALK_PAGE_SIZE,
} from "./harness/scale-questions.mjs";
import { evaluateScaleTargets, scaleTables } from "./harness/scale-report.mjs";
import { median } from "./harness/stats.mjs";

const STORES = ["duckdb", "postgres"];
const MDQ_OF_STORE = { duckdb: "mdq-duckdb", postgres: "mdq-postgres" };
/**
 * The database each scale's PostgreSQL store is seeded into (created afresh, dropped at the end):
 * named after this process, so that two runs on one server never drop each other's.
 */
const DATABASE = `mdq_scale_bench_${process.pid}`;
/** The database of each scale's scale-1 reference store (PostgreSQL). */
const REFERENCE_DATABASE = `${DATABASE}_reference`;
/** The scale of the reference store the summary questions are asked in turn with. */
const REFERENCE_SCALE = 1;

export const USAGE = `node bench/scale.mjs [flags]   (after npm run build; or: npm run bench -- --growth)

  --scales L          demo scales to seed and measure (default 1,30,150,600; scale 150 ≈ 6.4 M rows)
  --stores L          among duckdb, postgres (default both)
  --reps N            timed asks of each question per store, each a fresh window and currency (default 3;
                      the few-millisecond summary questions and a walk's first page get 10 × N; the
                      summary questions are asked in turn of a scale-1 store of the same engine,
                      which their growth target is read against)
  --days N            demo days ending yesterday (default 400)
  --walk-clients N    clients of the cold walk (default 8); 0 leaves the cold walk out
  --walk-rounds N     rounds of the cold walk (default 1)
  --replay-scales L   scales whose cold walk also runs the in-memory replay of the same answers
                      (default 1,30,150: the replay holds every page in memory)
  --duckdb-threads N  threads of the served DuckDB store and of the engine's copy (default 1, MDQ's)
  --postgres-url U    server holding the bench database (default postgres://root@127.0.0.1:5432/postgres)
  --save              write the committed bench/results/scale-latest.json
                      (default: bench/results/local/scale-latest.json, which git ignores)
  --out DIR           where scale-latest.json goes instead (overrides --save)
  --keep              keep the work directory (data copies, server logs)
  --help              this text
`;

function scaleList(name, text) {
  const values = text.split(",").map((entry) => positive(name, entry.trim()));
  if (new Set(values).size !== values.length) throw new Error(`--${name}: a scale is listed twice`);
  return values;
}

/** The run's options from argv, checked; throws with the flag named. */
export function readScaleOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      scales: { type: "string", default: "1,30,150,600" },
      stores: { type: "string", default: STORES.join(",") },
      reps: { type: "string", default: "3" },
      days: { type: "string", default: "400" },
      "walk-clients": { type: "string", default: "8" },
      "walk-rounds": { type: "string", default: "1" },
      "replay-scales": { type: "string", default: "1,30,150" },
      "duckdb-threads": { type: "string", default: "1" },
      ...RUN_FLAGS,
      help: { type: "boolean", default: false },
    },
  });
  const walkClients = values["walk-clients"] === "0" ? 0 : positive("walk-clients", values["walk-clients"]);
  return Object.freeze({
    help: values.help,
    scales: scaleList("scales", values.scales),
    stores: list("stores", values.stores, STORES),
    reps: positive("reps", values.reps),
    days: positive("days", values.days),
    walkClients,
    walkRounds: positive("walk-rounds", values["walk-rounds"]),
    replayScales: scaleList("replay-scales", values["replay-scales"]),
    duckdbThreads: positive("duckdb-threads", values["duckdb-threads"]),
    postgresUrl: values["postgres-url"],
    out: values.out ?? resultsDirectory(values.save),
    keep: values.keep,
  });
}

const log = (message) => process.stderr.write(`${message}\n`);
const seconds = (since) => (performance.now() - since) / 1000;

/** Bytes of the files in `directory` (the DuckDB store: its file and write-ahead log). */
async function directoryBytes(directory) {
  let bytes = 0;
  for (const entry of await readdir(directory, { withFileTypes: true }))
    if (entry.isFile()) bytes += (await stat(join(directory, entry.name))).size;
  return bytes;
}

async function postgresBytes(databaseUrl) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return Number((await client.query("SELECT pg_database_size(current_database()) AS n")).rows[0].n);
  } finally {
    await client.end();
  }
}

/** One POST /graphql; the time until the whole answer is read, and the answer parsed. */
async function askMdq(url, token, body) {
  const started = performance.now();
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body,
  });
  const text = await response.text();
  const ms = performance.now() - started;
  const answer = response.status === 200 ? JSON.parse(text) : null;
  if (!answer || answer.errors)
    throw new Error(`MDQ refused a bench question (HTTP ${response.status}): ${text.slice(0, 500)}\n${body}`);
  return { ms, answer };
}

async function askEngine(engine, planned) {
  const started = performance.now();
  const rows = await engine.run(planned.sql, planned.params);
  return { ms: performance.now() - started, rows };
}

/**
 * Times every question on one store: a warm-up ask of each (untimed: connections, JIT, the
 * engine's buffers), then `reps` timed asks of each (`timedAsks`: more of the fast questions),
 * MDQ and the engine alternating (MDQ first, then the engine first), the engine's values checked
 * equal to MDQ's every time. With a `reference` (a server of the same engine on a scale-1 store),
 * each ask of a summary question is asked of it too, in turn (which first alternates), so that
 * their growth compares two servers asked in the same seconds: run minutes apart, a summary
 * question's few milliseconds moved by 40 % with the machine's speed.
 */
async function measureQuestions({
  store,
  server,
  token,
  reference,
  engine,
  scope,
  today,
  reps,
  sourceCurrencies,
}) {
  const results = Object.fromEntries(
    QUESTIONS.map((question) => [
      question.id,
      { label: question.label, kind: question.kind, mdqMs: [], engineMs: [], referenceMs: [] },
    ]),
  );
  for (const warmUp of [true, false]) {
    for (const [index, question] of QUESTIONS.entries()) {
      const entry = results[question.id];
      const asks = timedAsks(question, reps);
      for (let rep = 0; rep < (warmUp ? 1 : asks); rep += 1) {
        const variant = variantOf({ scope, today, index, rep, warmUp, asks, sourceCurrencies });
        // Who asks first alternates: on PostgreSQL both read one database, and the second
        // finds the window's pages in shared buffers where the first read them from the OS.
        const engineFirst = question.engine && rep % 2 === 1;
        let own = engineFirst ? await askEngine(engine, question.engine(store, variant)) : null;
        const inTurn = reference && question.kind === "summary";
        const askReference = async () => {
          const answer = await askMdq(reference.server.url, reference.token, question.body(variant));
          if (!warmUp) entry.referenceMs.push(answer.ms);
        };
        if (inTurn && rep % 2 === 1) await askReference();
        const mdq = await askMdq(server.url, token, question.body(variant));
        if (inTurn && rep % 2 === 0) await askReference();
        const rows = mdq.answer.data[question.field];
        if (!warmUp) entry.mdqMs.push(mdq.ms);
        if (question.field === "marketingRecords")
          entry.rangeRows = mdq.answer.extensions.pageInfo.marketingRecords.totalCount;
        entry.answerRows = Array.isArray(rows) ? rows.length : 1;
        if (!question.engine) continue;
        own ??= await askEngine(engine, question.engine(store, variant));
        if (!warmUp) entry.engineMs.push(own.ms);
        if (canonical(rows) !== canonical(own.rows))
          throw new Error(
            `${store}: the engine's SQL and MDQ answer "${question.label}" (${variant.currency}, ${variant.scope.from}..${variant.scope.to}) differently: ${firstDifference(rows, own.rows)}`,
          );
        entry.checked = `same values (${own.rows.length} rows)`;
      }
    }
  }
  for (const entry of Object.values(results)) {
    entry.mdq = median(entry.mdqMs);
    entry.engine = median(entry.engineMs);
    entry.ratio = entry.engine ? entry.mdq / entry.engine : null;
    entry.reference = entry.referenceMs.length > 0 ? median(entry.referenceMs) : null;
    log(
      `  ${store} ${entry.label}: MDQ ${entry.mdq.toFixed(1)} ms` +
        (entry.engine ? `, engine ${entry.engine.toFixed(1)} ms, ${entry.ratio.toFixed(2)}×` : "") +
        (entry.reference ? `, scale ${REFERENCE_SCALE} in turn ${entry.reference.toFixed(1)} ms` : ""),
    );
  }
  return results;
}

/**
 * One client walking the window in 5000-row pages, on MDQ (the walker process, as a sync does)
 * and on the engine (keyset pages of the day sort, converted, in this process): rows/s of each.
 */
async function measureWalk({ store, context, app, engine, scope, sourceCurrencies }) {
  const currency = CURRENCY_CODES[(1 + QUESTIONS.length) % CURRENCY_CODES.length];
  const key = { app, currency, from: scope.from, to: scope.to };
  const contender = MDQ_OF_STORE[store];
  const mdq = await driveWalks({
    url: context.running.get(contender).url,
    clients: 1,
    walks: [walkOf(contender, context, key, WALK_PAGE_SIZE)],
  });
  if (mdq.failures.length > 0) throw new Error(`${store}: the one-client walk failed: ${mdq.failures[0]}`);
  const started = performance.now();
  let rows = 0;
  let after = null;
  for (;;) {
    const planned = recordsSql(store, {
      scope,
      currency,
      sort: { field: "DATE_DAY", direction: "DESC" },
      page: 1,
      pageSize: WALK_PAGE_SIZE,
      after,
      sourceCurrencies,
    });
    const page = await engine.run(planned.sql, planned.params);
    rows += page.length;
    if (page.length < WALK_PAGE_SIZE) break;
    const last = page.at(-1);
    after = { date: last.date, recordId: last.recordId };
  }
  const engineSeconds = seconds(started);
  if (rows !== mdq.rows)
    throw new Error(`${store}: the walk read ${mdq.rows} rows from MDQ, ${rows} from the engine`);
  const walk = {
    rows,
    pages: mdq.pages,
    mdqRowsPerSecond: mdq.rowsPerSecond,
    engineRowsPerSecond: rows / engineSeconds,
    lastVsFirst: mdq.lastVsFirst,
  };
  log(
    `  ${store} one-client walk: MDQ ${Math.round(walk.mdqRowsPerSecond)} rows/s, engine ${Math.round(walk.engineRowsPerSecond)} rows/s (${rows} rows, ${mdq.pages} pages)`,
  );
  return walk;
}

/** Seeds, serves and measures one scale on every selected store; returns its results entry. */
async function measureScale(scale, options, work) {
  const entry = { scale, stores: {} };
  const dir = join(work, `scale-${scale}`);
  const context = {
    work: dir,
    logDir: join(dir, "logs"),
    authUrl: "http://mdq-bench.localhost",
    dataDirs: {},
    credentials: {},
    tokens: {},
    postgres: null,
    running: new Map(),
  };
  await mkdir(context.logDir, { recursive: true });
  const engines = {};
  let completed = false;
  try {
    if (options.stores.includes("duckdb")) {
      const dataDir = join(dir, "mdq-duckdb");
      const started = performance.now();
      context.credentials.duckdb = await seedDuckDb({
        dataDir,
        credentialsFile: join(dir, "credentials.json"),
        scale,
        days: options.days,
      });
      entry.stores.duckdb = { seedSeconds: seconds(started), diskBytes: await directoryBytes(dataDir) };
      entry.rows = await countRows(dataDir);
      log(
        `[scale ${scale}] seeded DuckDB: ${entry.rows.toLocaleString("en")} rows in ${entry.stores.duckdb.seedSeconds.toFixed(1)} s, ${(entry.stores.duckdb.diskBytes / 1e6).toFixed(0)} MB`,
      );
      context.dataDirs["mdq-duckdb"] = dataDir;
      // The engine reads a copy: DuckDB lets no other process open a file a process writes.
      const engineDir = join(dir, "engine-duckdb");
      await cp(dataDir, engineDir, { recursive: true });
      engines.duckdb = await openEngine({
        store: "duckdb",
        dataDir: engineDir,
        threads: options.duckdbThreads,
      });
      if (options.walkClients > 0 && options.replayScales.includes(scale)) {
        context.dataDirs["bare-memory"] = join(dir, "bare-memory");
        await cp(dataDir, context.dataDirs["bare-memory"], { recursive: true });
      }
    }
    if (options.stores.includes("postgres")) {
      const missing = await postgresStoreMissing();
      if (missing) throw new Error(missing);
      const started = performance.now();
      const databaseUrl = await seedPostgres({
        serverUrl: options.postgresUrl,
        scale,
        days: options.days,
        dataDir: join(dir, "mdq-postgres"),
        credentialsFile: join(dir, "credentials-postgres.json"),
        database: DATABASE,
      });
      context.postgres = { databaseUrl };
      context.dataDirs["mdq-postgres"] = join(dir, "mdq-postgres");
      context.credentials.postgres = JSON.parse(
        await readFile(join(dir, "credentials-postgres.json"), "utf8"),
      );
      entry.stores.postgres = { seedSeconds: seconds(started), diskBytes: await postgresBytes(databaseUrl) };
      log(
        `[scale ${scale}] seeded PostgreSQL in ${entry.stores.postgres.seedSeconds.toFixed(1)} s, ${(entry.stores.postgres.diskBytes / 1e6).toFixed(0)} MB`,
      );
      engines.postgres = await openEngine({ store: "postgres", databaseUrl });
      entry.rows ??= Number((await engines.postgres.run("SELECT count(*) AS n FROM records", []))[0].n);
    }

    const references = scale === REFERENCE_SCALE ? null : await startReferences({ options, context, dir });

    const timeZone = loadConfig({}, {}).timeZone;
    const today = todayIn(timeZone);
    for (const store of options.stores) {
      const id = MDQ_OF_STORE[store];
      const server = await CONTENDERS[id].start(context);
      context.running.set(id, server);
      context.tokens[store] = await tokensOf(server.url, context.credentials[store]);
      log(`[scale ${scale}] started ${id} (pid ${server.pid})`);
    }
    const anyStore = options.stores[0];
    const apps = context.credentials[anyStore].apps;
    const app = apps.find((each) => each.brandClientId === "brand-acme") ?? apps[0];
    const scope = {
      brandId: app.brandClientId,
      from: addDays(today, -90),
      to: addDays(today, -1),
      markets: app.markets,
      dataSources: app.dataSources,
    };
    // The cold walk's keys and window (cold-walk.mjs) read these.
    context.question = { ...scope, currency: "EUR" };
    if (!context.credentials.duckdb) context.credentials.duckdb = context.credentials[anyStore];

    for (const store of options.stores) {
      const server = context.running.get(MDQ_OF_STORE[store]);
      const sourceCurrencies = await sourceCurrenciesOf(engines[store], store, scope.brandId);
      log(`[scale ${scale}] ${store}: questions`);
      const results = entry.stores[store];
      results.questions = await measureQuestions({
        store,
        server,
        token: context.tokens[store][app.appClientId],
        reference: references?.[store] ?? null,
        engine: engines[store],
        scope,
        today,
        reps: options.reps,
        sourceCurrencies,
      });
      await references?.[store]?.server.stop();
      entry.rangeRows = results.questions["walk-first-page"].rangeRows;
      results.walk = await measureWalk({
        store,
        context,
        app,
        engine: engines[store],
        scope,
        sourceCurrencies,
      });
    }

    if (options.walkClients > 0 && options.stores.includes("duckdb")) {
      const contenders = [...options.stores.map((store) => MDQ_OF_STORE[store])];
      if (context.dataDirs["bare-memory"]) {
        const bare = await CONTENDERS["bare-memory"].start(context);
        context.running.set("bare-memory", bare);
        contenders.push("bare-memory");
      }
      log(`[scale ${scale}] cold walk: ${options.walkClients} clients, ${WALK_PAGE_SIZE}-row pages`);
      await measureScaleColdWalk({ entry, options, context, contenders });
    } else if (options.walkClients > 0) {
      entry.notes = ["cold walk left out: it checks every walk against MDQ on DuckDB (--stores duckdb,…)"];
    }
    for (const store of options.stores) {
      const server = context.running.get(MDQ_OF_STORE[store]);
      entry.stores[store].peakRssMb = ((await statusKb(server.pid, "VmHWM")) ?? Number.NaN) / 1024;
    }
    completed = true;
    return entry;
  } finally {
    for (const server of context.running.values()) await server.stop();
    for (const engine of Object.values(engines)) await engine.close();
    if (context.postgres) await dropBenchDatabase(options.postgresUrl, DATABASE).catch(() => {});
    await dropBenchDatabase(options.postgresUrl, REFERENCE_DATABASE).catch(() => {});
    // A failed scale keeps its logs (and data) for a look.
    if (completed && !entry.failed && !options.keep) await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A scale-1 store of each selected engine, seeded beside the scale's own and served by MDQ as
 * shipped (its own data directory, database and tokens): the summary questions' reference. Each
 * is stopped once its store's questions are asked (`references[store].server.stop()`), before the
 * walks; the caller stops any left.
 */
async function startReferences({ options, context, dir }) {
  const reference = {
    ...context,
    logDir: join(dir, "logs-reference"),
    dataDirs: {},
    credentials: {},
    postgres: null,
  };
  await mkdir(reference.logDir, { recursive: true });
  const references = {};
  const started = [];
  try {
    if (options.stores.includes("duckdb")) {
      reference.dataDirs["mdq-duckdb"] = join(dir, "reference-duckdb");
      reference.credentials.duckdb = await seedDuckDb({
        dataDir: reference.dataDirs["mdq-duckdb"],
        credentialsFile: join(dir, "reference-credentials.json"),
        scale: REFERENCE_SCALE,
        days: options.days,
      });
    }
    if (options.stores.includes("postgres")) {
      reference.dataDirs["mdq-postgres"] = join(dir, "reference-postgres");
      reference.postgres = {
        databaseUrl: await seedPostgres({
          serverUrl: options.postgresUrl,
          scale: REFERENCE_SCALE,
          days: options.days,
          dataDir: reference.dataDirs["mdq-postgres"],
          credentialsFile: join(dir, "reference-credentials-postgres.json"),
          database: REFERENCE_DATABASE,
        }),
      };
      reference.credentials.postgres = JSON.parse(
        await readFile(join(dir, "reference-credentials-postgres.json"), "utf8"),
      );
    }
    for (const store of options.stores) {
      const server = await CONTENDERS[MDQ_OF_STORE[store]].start(reference);
      started.push(server);
      context.running.set(`${MDQ_OF_STORE[store]}-reference`, server);
      const credentials = reference.credentials[store];
      const app = credentials.apps.find((each) => each.brandClientId === "brand-acme") ?? credentials.apps[0];
      const tokens = await tokensOf(server.url, credentials);
      references[store] = { server, token: tokens[app.appClientId] };
    }
  } catch (error) {
    for (const server of started) await server.stop();
    throw error;
  }
  log(`[reference] scale ${REFERENCE_SCALE} stores seeded and served for the summary questions`);
  return references;
}

/**
 * The cold walk of one scale into `entry`; a walk that fails (a server gone, a page refused) is
 * noted there with its error, and the scale's other figures stand.
 */
async function measureScaleColdWalk({ entry, options, context, contenders }) {
  try {
    const [coldWalk] = await measureColdWalk({
      scenario: { contenders, baseline: "bare-memory" },
      options: {
        contenders,
        walkClients: options.walkClients,
        pageSizes: [WALK_PAGE_SIZE],
        rounds: options.walkRounds,
      },
      context,
      running: context.running,
      skipped: new Map(),
      log,
    });
    const replay = coldWalk.results.find((result) => result.contender === "bare-memory");
    for (const store of options.stores) {
      const result = coldWalk.results.find((each) => each.contender === MDQ_OF_STORE[store]);
      entry.stores[store].coldWalk = {
        rowsPerSecond: result.rowsPerSecond,
        replayRowsPerSecond: replay?.rowsPerSecond ?? null,
        ratio: replay ? result.rowsPerSecond / replay.rowsPerSecond : null,
        lastVsFirst: result.lastVsFirst,
        p99: result.p99,
        failures: result.failures,
        verified: result.verified,
      };
    }
  } catch (error) {
    entry.notes = [...(entry.notes ?? []), `cold walk failed: ${error.message.split("\n")[0]}`];
    log(`[scale ${entry.scale}] cold walk failed (logs in ${context.logDir}): ${error.message}`);
    entry.failed = true;
  }
}

async function main(argv) {
  let options;
  try {
    options = readScaleOptions(argv);
  } catch (error) {
    process.stderr.write(`${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  process.env.MDQ_DUCKDB_THREADS = String(options.duckdbThreads);
  // The served PostgreSQL store's statement timeout (default 15 s): at scale 600 a 90-day
  // CAMPAIGN_ID aggregate runs past it on a 2-core machine, and the bench times it instead of
  // recording a 503 (bench/README.md says so beside the figures).
  process.env.MDQ_DATABASE_STATEMENT_TIMEOUT_MS ??= "120000";
  const started = Date.now();
  const work = await mkdtemp(join(tmpdir(), "mdq-bench-scale-"));
  const results = {
    startedAt: new Date(started).toISOString(),
    options: { ...options, out: undefined, postgresUrl: new URL(options.postgresUrl).host },
    machine: machine(),
    scales: [],
  };
  let exitCode = 0;
  try {
    for (const scale of options.scales) results.scales.push(await measureScale(scale, options, work));
    if (results.scales.some((entry) => entry.failed)) exitCode = 1;
  } catch (error) {
    log(`growth bench failed: ${error.stack ?? error.message}`);
    exitCode = 1;
  }
  results.machine.loadAverageAtEnd = loadavg()[0];
  results.seconds = Math.round((Date.now() - started) / 1000);
  results.targets = evaluateScaleTargets(results);
  if (results.scales.length > 0) {
    await mkdir(options.out, { recursive: true });
    const file = join(options.out, "scale-latest.json");
    await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
    process.stdout.write(`\n${scaleTables(results)}\nwrote ${file}\n`);
  }
  if (options.keep || exitCode !== 0) log(`kept the work directory ${work} (server logs, data)`);
  else await rm(work, { recursive: true, force: true });
  return exitCode;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(await main(process.argv.slice(2)));
