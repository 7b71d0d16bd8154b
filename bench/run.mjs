#!/usr/bin/env node
// `npm run bench`: seeds the demo data at a chosen scale, starts every contender itself (each a
// child process on its own port, each on its own copy of the same data), checks that every one
// answers like MDQ, then drives each with autocannon from a separate process, contenders
// alternating within each round, and prints the median throughput, p50 and p99 with ratios to
// each scenario's baseline and the targets as MET / MISSED. Writes latest.json and
// latest.svg to bench/results/local/ (git ignores it), or with --save to the committed
// bench/results/. Its dependencies are bench/package.json's. See bench/README.md.
import { spawnSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { addDays, loadConfig, todayIn } from "../packages/server/dist/src/index.js";
import { renderChart } from "./harness/chart.mjs";
import { measureColdWalk } from "./harness/cold-walk.mjs";
import { CONTENDERS } from "./harness/contenders.mjs";
import { countRows, seedDuckDb, tokensOf } from "./harness/demo-region.mjs";
import { measureGrowth } from "./harness/growth.mjs";
import { readOptions, USAGE } from "./harness/options.mjs";
import { dropBenchDatabase, node24, postgresStoreMissing, seedPostgres } from "./harness/postgres.mjs";
import { driveLoad, machine, resetPeakRss, sampleRss, statusKb } from "./harness/processes.mjs";
import { recordsBody } from "./harness/queries.mjs";
import { evaluateTargets, growthTables, resultsTable, targetsTable, walkTable } from "./harness/report.mjs";
import { SCENARIOS } from "./harness/scenarios.mjs";
import { SOAK_CONTENDERS, soak, soakTable } from "./harness/soak.mjs";
import { send, verifyContender } from "./harness/verify.mjs";

let options;
try {
  options = readOptions();
} catch (error) {
  process.stderr.write(`${error.message}\n\n${USAGE}`);
  process.exit(2);
}
if (options.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

const log = (message) => process.stderr.write(`${message}\n`);
const median = (numbers) => {
  const sorted = [...numbers].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const labels = Object.fromEntries(Object.entries(CONTENDERS).map(([id, contender]) => [id, contender.label]));
const started = Date.now();

const work = await mkdtemp(join(tmpdir(), "mdq-bench-run-"));
const context = {
  work,
  logDir: join(work, "logs"),
  // Tokens name this as issuer and audience; MDQ and yoga share it so that both accept them.
  authUrl: "http://mdq-bench.localhost",
  dataDirs: {},
  credentials: {},
  tokens: {},
  postgres: null,
  profile: options.profile,
};
await mkdir(context.logDir, { recursive: true });
const running = new Map();
const skipped = new Map();

/** totalCount of a records question asked of MDQ on DuckDB. */
async function totalCount(question, appClientId) {
  const mdq = running.get("mdq-duckdb");
  const token = appClientId ? context.tokens.duckdb[appClientId] : Object.values(context.tokens.duckdb)[0];
  const answer = await send(mdq.url, {
    method: "POST",
    path: "/graphql",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: recordsBody({ ...question, page: 1, pageSize: 1000 }),
  });
  const body = JSON.parse(answer.text);
  if (body.errors)
    throw new Error(`MDQ refused the bench's records question: ${JSON.stringify(body.errors)}`);
  return body.extensions.pageInfo.marketingRecords.totalCount;
}

/** A connection URL fit for the results file: any password replaced. */
function withoutPassword(text) {
  try {
    const url = new URL(text);
    if (url.password !== "") url.password = "***";
    return url.toString();
  } catch {
    return "(unparsable URL)";
  }
}

/** Non-2xx answers of all rounds by status, plus transport errors and timeouts: `503×22, errors×1`. */
function statusCounts(rounds) {
  const counts = {};
  for (const round of rounds) {
    for (const [status, count] of Object.entries(round.statuses ?? {}))
      if (!status.startsWith("2")) counts[status] = (counts[status] ?? 0) + count;
    if (round.errors > 0) counts.errors = (counts.errors ?? 0) + round.errors;
    if (round.timeouts > 0) counts.timeouts = (counts.timeouts ?? 0) + round.timeouts;
  }
  return Object.entries(counts)
    .map(([status, count]) => `${status}×${count}`)
    .join(", ");
}

async function runScenario(id) {
  const scenario = SCENARIOS[id];
  const entry = { id, title: scenario.title, baseline: scenario.baseline, results: [], skipped: [] };
  const contenders = scenario.contenders.filter((contender) => options.contenders.includes(contender));
  const measured = [];
  for (const contender of contenders) {
    if (skipped.has(contender)) {
      entry.skipped.push({ contender, reason: skipped.get(contender) });
      continue;
    }
    const server = running.get(contender);
    const requests = scenario.requests(contender, context);
    const verified = await verifyContender({
      scenario: id,
      contender,
      url: server.url,
      requests,
      referenceUrl: running.get("mdq-duckdb").url,
      reference: scenario.requests("mdq-duckdb", context),
    });
    log(`[${id}] ${contender}: ${verified}`);
    measured.push({ contender, server, requests, verified, rounds: [] });
  }
  const connections = scenario.connections ?? options.connections;
  const rounds = scenario.rounds ?? options.rounds;
  for (let round = 0; round < rounds; round += 1) {
    // A B C, A B C, …: drift (other load on the machine, heat, caches) hits every contender alike.
    for (const contender of measured) {
      const spec = {
        url: contender.server.url,
        connections,
        duration: options.duration,
        warmup: options.warmup,
        requests: contender.requests,
      };
      let memory;
      if (id === "memory") {
        const reset = await resetPeakRss(contender.server.pid);
        const sampler = sampleRss(contender.server.pid);
        const load = await driveLoad(spec);
        const sampledKb = await sampler.stop();
        const hwmKb = await statusKb(contender.server.pid, "VmHWM");
        memory = reset
          ? { peakRssMb: hwmKb / 1024, peakRssSource: "VmHWM after clear_refs" }
          : { peakRssMb: sampledKb / 1024, peakRssSource: "highest VmRSS sampled every 50 ms" };
        contender.rounds.push({ ...load, ...memory });
      } else {
        contender.rounds.push(await driveLoad(spec));
      }
      const last = contender.rounds.at(-1);
      const trouble = last.non2xx + last.errors + last.timeouts;
      log(
        `[${id}] round ${round + 1}/${rounds} ${contender.contender}: ${last.rps.toFixed(1)} req/s, p50 ${last.p50.toFixed(0)} ms, p99 ${last.p99.toFixed(0)} ms` +
          (memory ? `, peak RSS ${memory.peakRssMb.toFixed(0)} MB` : "") +
          (trouble > 0 ? `, ${last.non2xx} non-2xx, ${last.errors} errors, ${last.timeouts} timeouts` : ""),
      );
    }
  }
  for (const contender of measured) {
    const failures = contender.rounds.reduce(
      (sum, round) => sum + round.non2xx + round.errors + round.timeouts,
      0,
    );
    const result = {
      contender: contender.contender,
      rps: median(contender.rounds.map((round) => round.rps)),
      p50: median(contender.rounds.map((round) => round.p50)),
      p99: median(contender.rounds.map((round) => round.p99)),
      failures,
      requests: contender.rounds.reduce((sum, round) => sum + round.requests, 0),
      verified:
        contender.verified +
        (failures > 0
          ? `; ${failures} failed requests under load! (HTTP status counts: ${statusCounts(contender.rounds)})`
          : ""),
      rounds: contender.rounds,
    };
    // Fewer answers than connections in a round: latencies are cut off by the end of the round.
    const fewest = Math.min(...contender.rounds.map((round) => round.requests));
    if (id !== "memory" && fewest < connections)
      result.verified += `; only ${fewest} answers in a round: lengthen --duration`;
    if (id === "memory") {
      result.peakRssMb = Math.max(...contender.rounds.map((round) => round.peakRssMb));
      result.peakRssSource = contender.rounds[0].peakRssSource;
      result.verified += `; peak RSS ${result.peakRssMb.toFixed(0)} MB`;
    }
    entry.results.push(result);
  }
  return entry;
}

let exitCode = 0;
try {
  log(`work directory ${work}`);
  const seedDir = join(work, "seed");
  let seconds = Date.now();
  context.credentials.duckdb = await seedDuckDb({
    dataDir: seedDir,
    credentialsFile: join(work, "credentials.json"),
    scale: options.scale,
    days: options.days,
  });
  context.rows = await countRows(seedDir);
  log(
    `seeded DuckDB: scale ${options.scale}, ${context.rows.toLocaleString("en")} rows in ${((Date.now() - seconds) / 1000).toFixed(1)} s`,
  );

  const wanted = new Set(
    options.scenarios
      .flatMap((id) => SCENARIOS[id].contenders)
      .filter((id) => options.contenders.includes(id)),
  );
  wanted.add("mdq-duckdb");
  if (options.soak > 0) for (const id of SOAK_CONTENDERS) if (options.contenders.includes(id)) wanted.add(id);
  if ([...wanted].some((id) => CONTENDERS[id].store === "postgres")) {
    const missing = await postgresStoreMissing();
    if (missing) {
      for (const id of wanted) if (CONTENDERS[id].store === "postgres") skipped.set(id, missing);
      log(`skipped: ${missing}`);
    } else {
      seconds = Date.now();
      const pgDataDir = join(work, "mdq-postgres");
      const credentialsFile = join(work, "credentials-postgres.json");
      try {
        const databaseUrl = await seedPostgres({
          serverUrl: options.postgresUrl,
          scale: options.scale,
          days: options.days,
          dataDir: pgDataDir,
          credentialsFile,
        });
        context.postgres = { databaseUrl };
        context.dataDirs["mdq-postgres"] = pgDataDir;
        // A second MDQ on the same database keeps its admin files apart.
        context.dataDirs["mdq-postgres-nocache"] = join(work, "mdq-postgres-nocache");
        await mkdir(context.dataDirs["mdq-postgres-nocache"], { recursive: true });
        context.credentials.postgres = JSON.parse(await readFile(credentialsFile, "utf8"));
        log(`seeded PostgreSQL database in ${((Date.now() - seconds) / 1000).toFixed(1)} s`);
        if (wanted.has("postgraphile")) {
          try {
            context.postgres.node24 = node24();
          } catch (error) {
            skipped.set("postgraphile", `no Node 24 binary: ${error.message}`);
          }
        }
      } catch (error) {
        await dropBenchDatabase(options.postgresUrl).catch(() => {});
        const reason = `PostgreSQL seeding failed: ${error.message.split("\n")[0]}`;
        for (const id of wanted) if (CONTENDERS[id].store === "postgres") skipped.set(id, reason);
        log(`skipped: ${reason}`);
      }
    }
  }

  for (const id of Object.keys(CONTENDERS)) {
    if (!wanted.has(id) || skipped.has(id)) continue;
    if (CONTENDERS[id].store === "duckdb") {
      context.dataDirs[id] = join(work, id);
      await cp(seedDir, context.dataDirs[id], { recursive: true });
    }
    running.set(id, await CONTENDERS[id].start(context));
    log(`started ${id} (pid ${running.get(id).pid}) at ${running.get(id).url}`);
    // One MDQ per store issues the tokens: the others of that store hold the same signing keys.
    const store = CONTENDERS[id].store;
    if (CONTENDERS[id].kind === "mdq" && context.tokens[store] === undefined)
      context.tokens[store] = await tokensOf(running.get(id).url, context.credentials[store]);
  }

  const timeZone = loadConfig({}, { dataDir: seedDir }).timeZone;
  const today = todayIn(timeZone);
  const app = context.credentials.duckdb.apps[0];
  context.question = {
    brandId: app.brandClientId,
    from: addDays(today, -90),
    to: addDays(today, -1),
    currency: "GBP",
    markets: app.markets,
    dataSources: app.dataSources,
  };
  context.rangeRows = await totalCount(context.question);
  context.deepPage = Math.min(50, Math.floor(context.rangeRows / 1000));
  if (context.deepPage < 50)
    log(
      `note: ${context.rangeRows} rows in range, so the deep page is page ${context.deepPage} (page 50 needs --scale ≥ 27)`,
    );
  context.syncFrom = addDays(today, -7);
  context.syncPlan = [];
  for (const each of context.credentials.duckdb.apps) {
    const rows = await totalCount(
      { ...context.question, brandId: each.brandClientId, from: context.syncFrom },
      each.appClientId,
    );
    context.syncPlan.push({
      appClientId: each.appClientId,
      brandId: each.brandClientId,
      pages: Math.max(1, Math.ceil(rows / 5000)),
    });
  }
  // Tokens of yoga's requests are MDQ's, for the same apps.
  if (context.credentials.postgres) {
    const byApp = Object.fromEntries(
      context.credentials.postgres.apps.map((each) => [each.appClientId, each]),
    );
    if (context.credentials.duckdb.apps.some((each) => !byApp[each.appClientId]))
      throw new Error("the PostgreSQL demo has other apps than the DuckDB demo");
  }

  const results = {
    startedAt: new Date(started).toISOString(),
    options: { ...options, out: undefined, postgresUrl: withoutPassword(options.postgresUrl) },
    machine: machine(),
    context: {
      rows: context.rows,
      rangeRows: context.rangeRows,
      deepPage: context.deepPage,
      question: context.question,
      syncFrom: context.syncFrom,
      syncPlan: context.syncPlan,
    },
    contenders: Object.fromEntries(
      Object.entries(CONTENDERS).map(([id, contender]) => [
        id,
        running.has(id)
          ? { label: contender.label, status: "ran" }
          : skipped.has(id)
            ? { label: contender.label, status: "skipped", reason: skipped.get(id) }
            : { label: contender.label, status: "not selected" },
      ]),
    ),
    scenarios: [],
  };
  for (const id of options.scenarios) {
    if (SCENARIOS[id].kind === "walk")
      results.scenarios.push(
        ...(await measureColdWalk({ scenario: SCENARIOS[id], options, context, running, skipped, log })),
      );
    else results.scenarios.push(await runScenario(id));
  }

  if (options.soak > 0) results.soak = await soak({ minutes: options.soak, context, running, log });

  if (options.growth) {
    for (const server of running.values()) await server.stop();
    running.clear();
    const refreshTokens = async (id, url) => {
      if (CONTENDERS[id].kind === "mdq") {
        const store = CONTENDERS[id].store;
        context.tokens[store] = await tokensOf(url, context.credentials[store]);
      }
    };
    results.growth = await measureGrowth({ options, context, seedDir, skipped, log, refreshTokens });
  }

  results.machine.loadAverageAtEnd = loadavg()[0];
  results.targets = evaluateTargets(results);
  results.seconds = Math.round((Date.now() - started) / 1000);
  await mkdir(options.out, { recursive: true });
  await writeFile(join(options.out, "latest.json"), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(join(options.out, "latest.svg"), renderChart(results, labels));

  const table = resultsTable(results, labels);
  process.stdout.write(
    `\nMDQ bench: scale ${options.scale} (${context.rows.toLocaleString("en")} rows; ${context.rangeRows.toLocaleString("en")} in the 90-day range of ${context.question.brandId}), ` +
      `${options.rounds} rounds × ${options.duration} s, ${options.connections} connections; medians of rounds; ${results.seconds} s in all; ` +
      `${results.machine.cpus} × ${results.machine.cpu}, Node ${results.machine.node}, load average ${results.machine.loadAverageAtStart.toFixed(2)} at start, ${results.machine.loadAverageAtEnd.toFixed(2)} at end\n\n` +
      `${walkTable(results, labels)}\n\n${table}\n\n${targetsTable(results.targets)}\n` +
      (results.growth ? `\n${growthTables(results.growth, labels)}\n` : "") +
      (results.soak ? `\n${soakTable(results.soak, labels)}\n` : "") +
      `\nwrote ${join(options.out, "latest.json")} and ${join(options.out, "latest.svg")}\n`,
  );
  if (options.growth) {
    // The growth bench seeds each scale afresh and starts its own servers (bench/scale.mjs).
    const scale = spawnSync(
      process.execPath,
      [
        new URL("./scale.mjs", import.meta.url).pathname,
        "--scales",
        options.growthScales.join(","),
        "--postgres-url",
        options.postgresUrl,
        "--out",
        options.out,
      ],
      { stdio: "inherit" },
    );
    if (scale.status !== 0) throw new Error(`bench/scale.mjs failed (exit ${scale.status})`);
  }
} catch (error) {
  log(`bench failed: ${error.stack ?? error.message}`);
  exitCode = 1;
} finally {
  for (const server of running.values()) await server.stop();
  if (context.postgres) await dropBenchDatabase(options.postgresUrl).catch(() => {});
  if (options.keep || exitCode !== 0) log(`kept ${work} (contender logs in ${context.logDir})`);
  else await rm(work, { recursive: true, force: true });
}
process.exit(exitCode);
