#!/usr/bin/env node
// Times the server's main-thread work per `marketingRecords` page on a seeded DuckDB data
// directory, in two parts: (a) reading a 5000-row page through the store (`queryRecords`: the
// packed page's SQL, its parse into columns, money converted), (b) writing its JSON
// (`recordsJson`, on a fresh copy of the page object: answers are kept per page object). CPU time,
// best of `--rounds`: the main thread's own (/proc/thread-self/schedstat, nanoseconds) and, for
// reads, the process's (`process.cpuUsage`, DuckDB's threads included). `--server` picks the built
// server package to time (another commit's `dist`), and the SHA-256 of the JSON written shows that
// two builds write the same bytes.
//   node packages/cli/bin/mdq.cjs demo --seed-only --scale 150 --data /tmp/s150 --credentials /tmp/s150.json
//   npm run build && node bench/page-encode.mjs --data /tmp/s150 [--pages 20] [--rounds 7] [--currency USD]
//     [--server packages/server/dist]
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    data: { type: "string" },
    server: { type: "string", default: "packages/server/dist" },
    pages: { type: "string", default: "20" },
    rounds: { type: "string", default: "7" },
    currency: { type: "string", default: "USD" },
  },
});
if (!values.data) throw new Error("--data: a data directory seeded by `mdq demo --seed-only`");
const pageCount = Number(values.pages);
const rounds = Number(values.rounds);
const server = pathToFileURL(`${resolve(values.server)}/src/`);
const { addDays, openDuckDbStore, todayIn } = await import(new URL("index.js", server));
const { recordsJson } = await import(new URL("graphql/records-json.js", server));
const { RECORD_FIELDS } = await import(new URL("store/query-request.js", server));
const { READ_AHEAD_ROWS } = await import(new URL("store/page-cache.js", server));

/** The main thread's CPU time in nanoseconds (Linux), else the process's. */
function mainThreadNs() {
  try {
    return Number(readFileSync("/proc/thread-self/schedstat", "latin1").split(" ")[0]);
  } catch {
    const { user, system } = process.cpuUsage();
    return (user + system) * 1000;
  }
}

function processNs() {
  const { user, system } = process.cpuUsage();
  return (user + system) * 1000;
}

// DuckDB opens a file from one process at a time: the bench reads its own copy.
const copy = await mkdtemp(join(tmpdir(), "mdq-page-encode-"));
await cp(values.data, copy, { recursive: true });
const store = await openDuckDbStore(copy);
const today = todayIn("Europe/London");
const pageSize = 5000;
/** As the page cache asks a walk's pages: `ahead` at a time (page-cache.ts `READ_AHEAD_ROWS`). */
const ahead = Math.max(1, Math.floor(READ_AHEAD_ROWS / pageSize));
const query = (page) => ({
  scope: {
    brandId: "brand-acme",
    from: addDays(today, -91),
    to: addDays(today, -2),
    markets: ["DE", "FR", "GB", "SE", "US"],
    dataSources: ["google_ads", "meta_ads", "tiktok_ads"],
    channels: null,
    campaignIds: null,
  },
  currency: values.currency,
  fields: RECORD_FIELDS,
  sort: [{ field: "DATE_DAY", direction: "DESC" }],
  page: { page, pageSize },
});

const best = { readMain: Infinity, readProcess: Infinity, write: Infinity };
let pages = [];
let digest = "";
try {
  for (let round = 0; round < rounds; round += 1) {
    pages = [];
    let readMain = 0;
    let readProcess = 0;
    for (let page = 1; pages.length < pageCount; page += ahead) {
      const [main, all] = [mainThreadNs(), processNs()];
      const read = await store.queryRecords(query(page), ahead);
      readMain += mainThreadNs() - main;
      readProcess += processNs() - all;
      pages.push(...read.filter((answer) => answer.rowCount === pageSize));
      if (read.length < ahead || read.at(-1).rowCount < pageSize) break;
    }
    if (pages.length < pageCount) throw new Error(`only ${pages.length} pages of ${pageSize} rows`);
    // Reads in batches of `ahead`: per page over the pages read.
    const read = Math.ceil(pageCount / ahead) * ahead;
    best.readMain = Math.min(best.readMain, readMain / read);
    best.readProcess = Math.min(best.readProcess, readProcess / read);
    pages = pages.slice(0, pageCount);
    const hash = createHash("sha256");
    let write = 0;
    for (const page of pages) {
      const start = mainThreadNs();
      const json = recordsJson({ ...page });
      write += mainThreadNs() - start;
      hash.update(json);
    }
    best.write = Math.min(best.write, write / pageCount);
    digest = hash.digest("hex").slice(0, 16);
  }
} finally {
  await store.close();
  await rm(copy, { recursive: true, force: true });
}
const ms = (ns) => (ns / 1e6).toFixed(2);
const perRow = (ns) => (ns / 1000 / pageSize).toFixed(3);
console.log(
  `${values.server}: ${pageCount} pages of ${pageSize} rows (${values.currency}), best of ${rounds}`,
);
console.log("| part                         | CPU ms / page | µs / row |");
console.log("| ---------------------------- | ------------: | -------: |");
console.log(`| read, main thread            | ${ms(best.readMain)} | ${perRow(best.readMain)} |`);
console.log(`| read, process (DuckDB too)   | ${ms(best.readProcess)} | ${perRow(best.readProcess)} |`);
console.log(`| write JSON (main thread)     | ${ms(best.write)} | ${perRow(best.write)} |`);
console.log(`JSON sha256 ${digest}`);
