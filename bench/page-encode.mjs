#!/usr/bin/env node
// Times the server's work per `marketingRecords` page on a seeded DuckDB data directory, in two
// parts: (a) reading a 5000-row page through the store (`queryRecords`, pages asked as the page
// cache asks a walk's: the packed page's SQL, its parse into columns, money converted), (b)
// writing its JSON (`recordsJson`, on a fresh copy of the page object: builds before issue 17's
// twelfth pass kept the answer per page object). CPU time, best of `--rounds`: the main thread's own (/proc/thread-self/schedstat,
// nanoseconds) and, for reads, the whole process's (`process.cpuUsage`: DuckDB's statement on
// libuv's pool included). `--server` is the built server package timed; `--baseline`, another
// commit's build (its `dist`), is timed in the same run, round for round in turn, and the table
// gives the ratio; the SHA-256 of the JSON each writes shows that both write the same bytes.
//   node packages/cli/bin/mdq.cjs demo --seed-only --scale 150 --data /tmp/s150 --credentials /tmp/s150.json
//   npm run build && node bench/page-encode.mjs --data /tmp/s150 [--baseline ../main/packages/server/dist]
//     [--server packages/server/dist] [--pages 20] [--rounds 7] [--currency USD]
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { acmeScope } from "./harness/queries.mjs";

const USAGE = `node bench/page-encode.mjs --data DIR [--baseline DIST] [--server DIST] [--pages 20] [--rounds 7] [--currency USD]
  --data DIR        a data directory seeded by \`mdq demo --seed-only\` (read through a copy)
  --server DIST     the built server package timed (default packages/server/dist)
  --baseline DIST   another build's server dist, timed in the same run round for round
`;
let values;
try {
  ({ values } = parseArgs({
    options: {
      data: { type: "string" },
      server: { type: "string", default: "packages/server/dist" },
      baseline: { type: "string" },
      pages: { type: "string", default: "20" },
      rounds: { type: "string", default: "7" },
      currency: { type: "string", default: "USD" },
      help: { type: "boolean", default: false },
    },
  }));
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  if (!values.data) throw new Error("--data is required");
} catch (error) {
  process.stderr.write(`${error.message}\n${USAGE}`);
  process.exit(2);
}
const pageCount = Number(values.pages);
const rounds = Number(values.rounds);
const pageSize = 5000;

/** The main thread's CPU time in nanoseconds (Linux), else the process's. */
function mainThreadNs() {
  try {
    return Number(readFileSync("/proc/thread-self/schedstat", "latin1").split(" ")[0]);
  } catch {
    return processNs();
  }
}

function processNs() {
  const { user, system } = process.cpuUsage();
  return (user + system) * 1000;
}

/** A built server package opened on its own copy of the data (DuckDB: one process a file). */
async function openBuild(dist) {
  const server = pathToFileURL(`${resolve(dist)}/src/`);
  const { addDays, openDuckDbStore, todayIn } = await import(new URL("index.js", server));
  const { recordsJson } = await import(new URL("graphql/records-json.js", server));
  const { RECORD_FIELDS } = await import(new URL("store/model/query-request.js", server));
  const { READ_AHEAD_ROWS } = await import(new URL("store/decorators/page-cache.js", server));
  const { DEFAULT_DUCKDB_THREADS } = await import(new URL("config.js", server));
  const copy = await mkdtemp(join(tmpdir(), "mdq-page-encode-"));
  await cp(values.data, copy, { recursive: true });
  // DuckDB's threads per statement as `mdq serve` sets them by default (MDQ_DUCKDB_THREADS).
  const store = await openDuckDbStore(copy, { threads: DEFAULT_DUCKDB_THREADS });
  const today = todayIn("Europe/London");
  const query = (page) => ({
    scope: acmeScope(addDays(today, -91), addDays(today, -2)),
    currency: values.currency,
    fields: RECORD_FIELDS,
    sort: [{ field: "DATE_DAY", direction: "DESC" }],
    page: { page, pageSize },
  });
  return {
    dist,
    // As the page cache asks a walk's pages: `ahead` at a time (page-cache.ts `READ_AHEAD_ROWS`).
    ahead: Math.max(1, Math.floor(READ_AHEAD_ROWS / pageSize)),
    store,
    recordsJson,
    query,
    best: {
      readMain: Number.POSITIVE_INFINITY,
      readProcess: Number.POSITIVE_INFINITY,
      write: Number.POSITIVE_INFINITY,
    },
    digest: "",
    close: async () => {
      await store.close();
      await rm(copy, { recursive: true, force: true });
    },
  };
}

/** One round of `build`: `pageCount` pages read, then written; its best figures kept per page. */
async function round(build) {
  const pages = [];
  let readMain = 0;
  let readProcess = 0;
  let read = 0;
  for (let page = 1; pages.length < pageCount; page += build.ahead) {
    const [main, all] = [mainThreadNs(), processNs()];
    const answered = await build.store.queryRecords(build.query(page), build.ahead);
    readMain += mainThreadNs() - main;
    readProcess += processNs() - all;
    read += answered.length;
    pages.push(...answered.filter((answer) => answer.rowCount === pageSize));
    if (answered.length < build.ahead || answered.at(-1).rowCount < pageSize) break;
  }
  if (pages.length < pageCount) throw new Error(`only ${pages.length} pages of ${pageSize} rows`);
  build.best.readMain = Math.min(build.best.readMain, readMain / read);
  build.best.readProcess = Math.min(build.best.readProcess, readProcess / read);
  const hash = createHash("sha256");
  let write = 0;
  for (const page of pages.slice(0, pageCount)) {
    const start = mainThreadNs();
    const json = build.recordsJson({ ...page });
    write += mainThreadNs() - start;
    hash.update(json);
  }
  build.best.write = Math.min(build.best.write, write / pageCount);
  build.digest = hash.digest("hex").slice(0, 16);
}

const builds = [values.baseline, values.server].filter((dist) => dist !== undefined);
const opened = [];
try {
  for (const dist of builds) opened.push(await openBuild(dist));
  for (let index = 0; index < rounds; index += 1) for (const build of opened) await round(build);
} finally {
  for (const build of opened) await build.close();
}

const perRow = (ns) => (ns / 1000 / pageSize).toFixed(3);
console.log(`${pageCount} pages of ${pageSize} rows (${values.currency}), best of ${rounds}: CPU µs per row`);
const [baseline, measured] = opened.length === 2 ? opened : [undefined, opened[0]];
const parts = [
  ["read, main thread", "readMain"],
  ["read, whole process", "readProcess"],
  ["write JSON (main thread)", "write"],
];
console.log(`| part | ${opened.map((build) => build.dist).join(" | ")} |${baseline ? " ratio |" : ""}`);
console.log(`| --- | ${opened.map(() => "---:").join(" | ")} |${baseline ? " ---: |" : ""}`);
for (const [label, key] of parts) {
  const ratio = baseline ? ` ${(measured.best[key] / baseline.best[key]).toFixed(2)} |` : "";
  console.log(`| ${label} | ${opened.map((build) => perRow(build.best[key])).join(" | ")} |${ratio}`);
}
console.log(`JSON SHA-256: ${opened.map((build) => `${build.dist} ${build.digest}`).join(", ")}`);
