#!/usr/bin/env node
// Exports of two builds of MDQ asked in turn: one server per build, each on its own copy of one
// seeded data directory (or on one PostgreSQL database), asked the same export alternately, round
// after round, so that a slow hour of the machine falls on both. Prints each build's median and
// best rows/s per format, whether every body was byte-identical across builds and rounds, and
// each server's peak RSS (VmHWM) after the same asks. For a change to the export's speed, where
// one run of bench/export.mjs is too noisy to tell (issue 18).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { benchArgs } from "./harness/bench-args.mjs";
import { tokensOf } from "./harness/demo-region.mjs";
import { addDays, waitUntilLive } from "./harness/demo-service.mjs";
import { graphqlLatencies, p99 } from "./harness/graphql-latency.mjs";
import { list, positive } from "./harness/options.mjs";
import { freePort, statusKb } from "./harness/processes.mjs";

const FORMATS = ["ndjson", "csv", "parquet", "arrow"];
const USAGE = `node bench/export-alternate.mjs --data DIR --credentials FILE --builds A,B [flags]

  --data DIR         a seeded data directory (mdq demo --seed-only --data DIR; bench/export.mjs
                     --cache leaves one in CACHE/duckdb-s<scale>/data), copied once per build
  --credentials FILE the demo's credentials file (its first app asks the exports)
  --builds A,B       checkouts of MDQ, each built (npm ci && npm run build), e.g. a git worktree of
                     the base commit and .
  --database-url U   serve from this PostgreSQL database instead of --data's DuckDB file (both
                     builds share it: exports only read)
  --formats L        among ${FORMATS.join(", ")} (default ndjson,csv,parquet)
  --rounds N         timed rounds after one warm-up (default 9); the order of builds alternates
  --days N           days of the range, ending yesterday (default 90)
  --p99 S            also, each round, GraphQL's p99 (page 1 of 1000 rows) over S seconds idle and
                     S seconds under 4 exports of the first format looping, each build in turn
  --together N       also, each round, N exports of the first format at once, each build in turn:
                     their rows/s together (what exports with company get)
  --help             this text
`;

const values = benchArgs(
  "bench/export-alternate.mjs",
  USAGE,
  {
    data: { type: "string" },
    credentials: { type: "string" },
    builds: { type: "string" },
    "database-url": { type: "string" },
    formats: { type: "string", default: "ndjson,csv,parquet" },
    rounds: { type: "string", default: "9" },
    days: { type: "string", default: "90" },
    p99: { type: "string" },
    together: { type: "string" },
  },
  ["rounds", "days"],
  (values) => {
    for (const name of ["data", "credentials", "builds"])
      if (values[name] === undefined) throw new Error(`--${name} is required`);
    if (values.builds.split(",").length !== 2) throw new Error("--builds takes two checkouts, A,B");
    list("formats", values.formats, FORMATS);
    if (values.p99 !== undefined) positive("p99", values.p99);
    if (values.together !== undefined) positive("together", values.together);
  },
);

const formats = values.formats.split(",");
const builds = values.builds.split(",").map((build) => resolve(build));
const app = JSON.parse(await readFile(values.credentials, "utf8")).apps[0];
const to = addDays(new Date().toISOString().slice(0, 10), -1);
const from = addDays(to, -(Number(values.days) - 1));
const work = await mkdtemp(join(tmpdir(), "mdq-export-alternate-"));

async function serve(build, index) {
  const data = join(work, `data-${index}`);
  await cp(values.data, data, { recursive: true });
  const port = await freePort();
  const env = {
    ...process.env,
    MDQ_LOG_LEVEL: "warn",
    MDQ_ADMIN_PORT: String(await freePort()),
    MDQ_RATE_LIMIT_MAX: "1000000",
    ...(values["database-url"] ? { MDQ_DATABASE_URL: values["database-url"] } : {}),
  };
  const child = spawn(
    process.execPath,
    [join(build, "packages/cli/bin/mdq.cjs"), "serve", "--port", String(port), "--data", data],
    { env, stdio: ["ignore", "inherit", "inherit"] },
  );
  const base = `http://127.0.0.1:${port}`;
  await waitUntilLive(base);
  const tokens = await tokensOf(base, { apps: [app] });
  return { build, child, base, token: tokens[app.appClientId] };
}

/** One export read whole: its seconds, rows and the SHA-256 of its body. */
async function exportOnce(server, format) {
  const query = new URLSearchParams({ clientId: app.brandClientId, from, to, format });
  const started = performance.now();
  const response = await fetch(`${server.base}/export/marketing-records?${query}`, {
    headers: { authorization: `Bearer ${server.token}`, "accept-encoding": "identity" },
  });
  if (response.status !== 200) throw new Error(`${format}: ${response.status} ${await response.text()}`);
  const hash = createHash("sha256");
  for await (const chunk of response.body) hash.update(chunk);
  return {
    seconds: (performance.now() - started) / 1000,
    rows: Number(response.headers.get("mdq-row-count")),
    digest: hash.digest("hex"),
  };
}

/** GraphQL's p99 idle, then under 4 exports of `format` looping. */
async function p99s(server, format, ms) {
  const latencies = () => graphqlLatencies(server.base, server.token, app.brandClientId, { from, to }, ms);
  const idle = p99(await latencies());
  let running = true;
  const exporters = Array.from({ length: 4 }, async () => {
    while (running) await exportOnce(server, format);
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const busy = p99(await latencies());
  running = false;
  await Promise.all(exporters);
  return { idle, busy };
}

const servers = [];
try {
  for (const [index, build] of builds.entries()) servers.push(await serve(build, index));
  for (const format of formats) for (const server of servers) await exportOnce(server, format);
  const seconds = new Map();
  const digests = new Map(formats.map((format) => [format, new Set()]));
  let rows = 0;
  for (let round = 0; round < Number(values.rounds); round += 1)
    for (const format of formats)
      for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
        const answer = await exportOnce(server, format);
        const key = `${format} ${server.build}`;
        seconds.set(key, [...(seconds.get(key) ?? []), answer.seconds]);
        digests.get(format).add(answer.digest);
        rows = answer.rows;
      }
  console.log(
    `brand ${app.brandClientId}, ${from}..${to}, ${rows} rows, ${values.rounds} rounds alternated\n`,
  );
  console.log("| format | build | median rows/s | best rows/s | seconds, sorted |");
  console.log("| --- | --- | ---: | ---: | --- |");
  for (const [key, times] of seconds) {
    const [format, build] = key.split(" ");
    const sorted = [...times].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    console.log(
      `| ${format} | ${build} | ${Math.round(rows / median)} | ${Math.round(rows / sorted[0])} | ${sorted.map((s) => s.toFixed(3)).join(" ")} |`,
    );
  }
  if (values.p99 !== undefined) {
    const latencyRounds = new Map(servers.map((server) => [server.build, []]));
    for (let round = 0; round < Number(values.rounds); round += 1)
      for (const server of round % 2 === 0 ? servers : [...servers].reverse())
        latencyRounds.get(server.build).push(await p99s(server, formats[0], Number(values.p99) * 1000));
    console.log(
      `\n| build | GraphQL p99 idle → under 4 ${formats[0]} exports, ms, each round | median ratio |`,
    );
    console.log("| --- | --- | ---: |");
    for (const [build, rounds] of latencyRounds) {
      const ratios = rounds.map(({ idle, busy }) => busy / idle).sort((a, b) => a - b);
      const text = rounds.map(({ idle, busy }) => `${idle.toFixed(1)} → ${busy.toFixed(1)}`).join(", ");
      console.log(`| ${build} | ${text} | ${ratios[Math.floor(ratios.length / 2)].toFixed(2)} |`);
    }
  }
  if (values.together !== undefined) {
    const count = Number(values.together);
    const together = new Map(servers.map((server) => [server.build, []]));
    for (let round = 0; round < Number(values.rounds); round += 1)
      for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
        const started = performance.now();
        const answers = await Promise.all(
          Array.from({ length: count }, () => exportOnce(server, formats[0])),
        );
        for (const answer of answers) digests.get(formats[0]).add(answer.digest);
        together.get(server.build).push((count * rows) / ((performance.now() - started) / 1000));
      }
    console.log(`\n| build | ${count} ${formats[0]} exports at once, rows/s together, each round | median |`);
    console.log("| --- | --- | ---: |");
    for (const [build, rates] of together) {
      const sorted = [...rates].sort((a, b) => a - b);
      const text = rates.map((rate) => Math.round(rate)).join(", ");
      console.log(`| ${build} | ${text} | ${Math.round(sorted[Math.floor(sorted.length / 2)])} |`);
    }
  }
  console.log("");
  for (const [format, set] of digests)
    console.log(`${format}: ${set.size === 1 ? "every body identical" : `${set.size} different bodies`}`);
  for (const server of servers)
    console.log(
      `${server.build}: peak RSS ${((await statusKb(server.child.pid, "VmHWM")) / 1024).toFixed(1)} MB`,
    );
} finally {
  for (const server of servers) server.child.kill();
  await rm(work, { recursive: true, force: true });
}
