#!/usr/bin/env node
// The cold-walk load generator, in a process of its own (never the servers' nor the
// orchestrator's event loop): `clients` concurrent clients, each taking the next walk of the list
// and asking every page of it one after the other, as a brand's daily sync does, until the server
// says there is no next page. Prints one JSON line: rows/s and pages/s over the wall time, p50/p99
// per page, and how the last pages of a walk compare with its first ones.
//   node bench/harness/walk.mjs '<json: {url, clients, walks: [{path, headers, body, mode}]}>'
// A walk's body holds `"__PAGE__"` (mode "page": replaced by 1, 2, …) or `"__AFTER__"` (mode
// "cursor": replaced by the previous page's endCursor, null first), the way each API is walked.
// The summary also holds the walk's bytes on the wire and the walker's own CPU time, and the
// `Accept-Encoding` its pages asked with.

import { median, percentile } from "./stats.mjs";
import { wireBytes } from "./wire-bytes.mjs";

/** How many of the first and last pages of a walk are compared. */
export const EDGE_PAGES = 3;
/** The `Accept-Encoding` every page asks with (`MDQ_BENCH_ACCEPT_ENCODING`); unset, fetch's own ("gzip, deflate"). */
const ACCEPT_ENCODING = process.env.MDQ_BENCH_ACCEPT_ENCODING;
/** A walk never asks more pages than this (a server that always says "next page" is a failure). */
const MAX_PAGES = 10_000;

/** Rows in a page answer, without parsing it: every contender writes each record's id once. */
export function rowsIn(text) {
  let rows = 0;
  let at = text.indexOf('"recordId"');
  while (at !== -1) {
    rows += 1;
    at = text.indexOf('"recordId"', at + 10);
  }
  return rows;
}

/** Whether the answer says another page follows, and the cursor to ask it with (cursor walks). */
export function nextOf(text) {
  const hasNextPage = text.includes('"hasNextPage":true');
  const cursor = /"endCursor":("[^"]*")/.exec(text)?.[1];
  return { hasNextPage, cursor: cursor === undefined ? null : JSON.parse(cursor) };
}

/** The body of page `index` (0-based) of `walk`, after the page whose cursor was `cursor`. */
export function pageBody(walk, index, cursor) {
  return walk.mode === "cursor"
    ? walk.body.replace('"__AFTER__"', JSON.stringify(cursor))
    : walk.body.replace('"__PAGE__"', String(index + 1));
}

/** Asks every page of `walk` against `url`; `onPage(index, text)` sees each answer. */
export async function walkPages(url, walk, onPage = () => {}) {
  const pages = [];
  let cursor = null;
  for (let index = 0; index < MAX_PAGES; index += 1) {
    const started = performance.now();
    const response = await fetch(`${url}${walk.path}`, {
      method: "POST",
      headers:
        ACCEPT_ENCODING === undefined
          ? walk.headers
          : { ...walk.headers, "accept-encoding": ACCEPT_ENCODING },
      body: pageBody(walk, index, cursor),
    });
    const text = await response.text();
    const ms = performance.now() - started;
    onPage(index, text);
    if (response.status !== 200) {
      pages.push({ ms, rows: 0, status: response.status });
      return { pages, failed: `HTTP ${response.status} on page ${index + 1}: ${text.slice(0, 200)}` };
    }
    pages.push({ ms, rows: rowsIn(text), status: 200 });
    const next = nextOf(text);
    // Every contender says whether a page follows: an answer that says neither was cut or garbled
    // on its way (a walk must fail then, not end early with fewer rows).
    if (!next.hasNextPage && !text.includes('"hasNextPage":false'))
      return { pages, failed: `page ${index + 1} says no hasNextPage: ${text.slice(0, 200)}` };
    if (!next.hasNextPage) return { pages };
    cursor = next.cursor;
  }
  return { pages, failed: `more than ${MAX_PAGES} pages` };
}

const mean = (numbers) => numbers.reduce((sum, value) => sum + value, 0) / numbers.length;

/** Runs `walks` with `clients` concurrent clients; resolves to the summary the orchestrator reads. */
export async function runWalks({ url, clients, walks }) {
  const queue = [...walks];
  const done = [];
  // One untimed request per client first (any path; a 404 will do): the walker's own first-request
  // costs (sockets, its JIT) are not the server's, and would make every walk's first page slow.
  await Promise.all(
    Array.from({ length: Math.min(clients, walks.length) }, () =>
      fetch(`${url}/`).then(
        (response) => response.arrayBuffer(),
        () => undefined,
      ),
    ),
  );
  const started = performance.now();
  const wireBefore = wireBytes();
  const cpuBefore = process.cpuUsage();
  const client = async () => {
    for (let walk = queue.shift(); walk !== undefined; walk = queue.shift())
      done.push(await walkPages(url, walk));
  };
  await Promise.all(Array.from({ length: Math.min(clients, walks.length) }, client));
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const wire = wireBytes();
  const pages = done.flatMap((walk) => walk.pages);
  const latencies = pages.map((page) => page.ms).sort((a, b) => a - b);
  const rows = pages.reduce((sum, page) => sum + page.rows, 0);
  // Last pages against first pages of the same walk, for walks long enough to have both.
  const edges = done
    .filter((walk) => walk.pages.length >= 2 * EDGE_PAGES)
    .map(
      (walk) =>
        mean(walk.pages.slice(-EDGE_PAGES).map((page) => page.ms)) /
        mean(walk.pages.slice(0, EDGE_PAGES).map((page) => page.ms)),
    );
  return {
    walks: done.length,
    pages: pages.length,
    rows,
    seconds,
    rowsPerSecond: rows / seconds,
    pagesPerSecond: pages.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    lastVsFirst: edges.length > 0 ? median(edges) : null,
    pagesPerWalk: median(done.map((walk) => walk.pages.length)),
    failures: done.filter((walk) => walk.failed).map((walk) => walk.failed),
    acceptEncoding: ACCEPT_ENCODING ?? "gzip, deflate (fetch's own)",
    // Bytes over TCP during the timed walks (headers included), each way.
    wireDown: wire.down - wireBefore.down,
    wireUp: wire.up - wireBefore.up,
    // The walker's CPU (every thread of it: fetch decodes compressed answers on the thread pool).
    clientCpuMs: (cpu.user + cpu.system) / 1000,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const spec = JSON.parse(process.argv[2] ?? "{}");
  if (!spec.url || !Array.isArray(spec.walks) || spec.walks.length === 0)
    throw new Error("walk.mjs needs {url, clients, walks: [{path, headers, body, mode}]}");
  process.stdout.write(`${JSON.stringify(await runWalks(spec))}\n`);
}
