#!/usr/bin/env node
// The brands' side of the herd, in a process of its own (never the servers' nor the bench's event
// loop): every brand runs the real daily flow with the mdq-client SDK as it comes, each request
// timed and classed from undici's diagnostics channels. Roles:
//   herd   every brand at its start moment (ms after time 0): myAccess (which takes the token),
//          readiness polled until READY, then `mirror` of the last 7 days (its
//          marketingDataChanges, then the export); brands marked `aggregates` then ask 3 dashboard
//          aggregates of the last 30 days (by day, by market and data source, by CAMPAIGN_ID);
//   alone  the same flow, one brand after the other: each brand's sync with the region to itself;
//   noisy  one tenant: `exports` year-long exports and a year's CAMPAIGN_ID aggregate, each in a
//          loop, until "stop" arrives on stdin;
//   walk   one brand's 90-day page walk (5000-row GraphQL pages, parsed and validated by the
//          SDK as a sync reads them), `rounds` times: time, rows, bytes on the wire, its CPU.
//   node bench/harness/herd-clients.mjs <spec.json>   (writes the result to spec.out)
// `compression` "on" runs the SDK as it comes (`compression: true`: `Accept-Encoding: gzip, br`
// on its GraphQL and token requests, `gzip` on a text export), "off" asks for none (`compression:
// false`: `identity` on every request). Every request records the header it went with.
import { AsyncLocalStorage } from "node:async_hooks";
import { subscribe } from "node:diagnostics_channel";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ACCEPT_COMPRESSED } from "../../packages/client/dist/src/http-transport.js";
import { MdqClient, mirror } from "../../packages/client/dist/src/index.js";
import { wireBytes } from "./wire-bytes.mjs";

/** The class of each GraphQL operation the SDK sends, by its operation name. */
const OPERATION_CLASSES = {
  MdqMyAccess: "myAccess",
  MdqReadiness: "readiness",
  MdqChanges: "changes",
  MdqRecords: "records page",
  MdqAggregate: "aggregate",
};
/** The question classes the report shows, in its order. */
export const QUESTION_CLASSES = [
  "token",
  "readiness",
  "changes",
  "myAccess",
  "records page",
  "aggregate",
  "export",
  "other",
];

/** The class of one request from its URL and body. */
export function classOf(url, body) {
  const path = new URL(url).pathname;
  if (path.endsWith("/oauth2/token")) return "token";
  if (path.endsWith("/graphql")) {
    const name = /query\s+(\w+)/.exec(typeof body === "string" ? body : "")?.[1];
    return OPERATION_CLASSES[name] ?? "other";
  }
  if (path.includes("/export/")) return "export";
  return "other";
}

/**
 * The `Accept-Encoding` of each `--compression` setting: "on" is what the SDK asks by default,
 * "off" none. The bench's walkers send it on every page (walk.mjs's MDQ_BENCH_ACCEPT_ENCODING).
 */
export const ACCEPT_ENCODING = Object.freeze({ on: ACCEPT_COMPRESSED, off: "identity" });

/** Whose requests run in the current async context: the brand (`who`) and where they are recorded. */
const requester = new AsyncLocalStorage();
/** Each undici request in flight (the SDK's own and fetch's alike) → its record. */
const recorded = new WeakMap();

/**
 * A header of an undici request or answer: their headers are [name, value, …] (Node 20's and 24's
 * undici, and the SDK's).
 */
function headerOf(headers, name) {
  for (let index = 0; index + 1 < headers.length; index += 2)
    if (String(headers[index]).toLowerCase() === name) return String(headers[index + 1]);
  return null;
}

/**
 * Every HTTP request the SDK sends, read off undici's diagnostics channels (its GraphQL and token
 * requests through undici's `request`, its exports through fetch: both publish them), recorded
 * into the `requests` of the brand whose flow sent it (`requester`): when it started (`at`, ms of
 * this process's clock), class, the `Accept-Encoding` it went with, ms until the body was read
 * (`headersMs` until the headers), status, and whether a 429/503 carried Retry-After (and its
 * seconds). Nothing wraps the SDK: it runs as it comes.
 */
subscribe("undici:request:create", ({ request }) => {
  const context = requester.getStore();
  if (context === undefined) return;
  const body =
    Buffer.isBuffer(request.body) || typeof request.body === "string" ? String(request.body) : undefined;
  const at = performance.now();
  const record = {
    who: context.who,
    class: classOf(`${request.origin}${request.path}`, body),
    acceptEncoding: headerOf(request.headers, "accept-encoding"),
    status: 0,
    ms: 0,
    headersMs: 0,
    at,
  };
  context.requests.push(record);
  recorded.set(request, record);
});
subscribe("undici:request:headers", ({ request, response }) => {
  const record = recorded.get(request);
  if (record === undefined) return;
  record.headersMs = performance.now() - record.at;
  record.ms = record.headersMs;
  record.status = response.statusCode;
  if (response.statusCode === 429 || response.statusCode === 503) {
    const retryAfter = headerOf(response.headers, "retry-after");
    record.retryAfter = retryAfter !== null;
    if (retryAfter !== null) record.retryAfterSeconds = Number(retryAfter);
  }
});
subscribe("undici:request:trailers", ({ request }) => {
  const record = recorded.get(request);
  if (record !== undefined) record.ms = performance.now() - record.at;
});
subscribe("undici:request:error", ({ request }) => {
  const record = recorded.get(request);
  if (record === undefined) return;
  record.ms = performance.now() - record.at;
  if (record.status === 0) record.status = "network";
});

const addDays = (day, n) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function clientOf(spec, app) {
  return new MdqClient({
    appClientId: app.appClientId,
    appClientSecret: app.appClientSecret,
    authUrl: spec.url,
    baseUrl: spec.url,
    brandClientId: app.brandClientId,
    // A herd's answers may queue: a request is given minutes, not the default 30 s.
    timeoutMs: 600_000,
    maxRetryAfterSeconds: 600,
    compression: spec.compression !== "off",
  });
}

/** The three dashboard questions of a brand that asks aggregates: the last 30 days. */
const DASHBOARD = [
  { metrics: ["SPEND", "CLICKS", "IMPRESSIONS"], groupBy: ["DATE_DAY"] },
  { metrics: ["SPEND", "REVENUE", "CONVERSIONS"], groupBy: ["MARKET", "DATA_SOURCE"] },
  { metrics: ["SPEND", "CLICKS", "REVENUE"], groupBy: ["CAMPAIGN_ID"] },
];

/**
 * One brand's daily flow; resolves to its times: `syncSeconds` from its start to its mirror done
 * (the sync), `flowSeconds` with the dashboard aggregates too.
 */
function dailyFlow(spec, app, requests, startedAt) {
  return requester.run({ requests, who: app.rank }, () => flowOf(spec, app, startedAt));
}

/** `dailyFlow`'s steps, its requests recorded as the brand's. */
async function flowOf(spec, app, startedAt) {
  const client = clientOf(spec, app);
  const yesterday = addDays(spec.today, -1);
  const result = { rank: app.rank, rows: 0, error: null };
  const dir = join(spec.work, `mirror-${app.rank}`);
  try {
    await client.myAccess();
    await client.waitUntilReady({ interval: 1000, timeout: 600_000 });
    const summary = await mirror(client, { dir, from: addDays(yesterday, -6), to: yesterday, format: "csv" });
    result.rows = summary.rows;
    result.syncSeconds = (performance.now() - startedAt) / 1000;
    if (app.aggregates) {
      for (const question of DASHBOARD)
        for await (const _row of client.aggregate({
          from: addDays(yesterday, -29),
          to: yesterday,
          ...question,
        }));
    }
    result.flowSeconds = (performance.now() - startedAt) / 1000;
  } catch (error) {
    result.error = `${error.code ?? error.name}: ${error.message}`.slice(0, 300);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return result;
}

async function herd(spec, requests) {
  const timeZero = performance.now();
  const brands = await Promise.all(
    spec.apps.map(async (app) => {
      await sleep(app.startMs);
      const startedAt = performance.now();
      const result = await dailyFlow(spec, app, requests, startedAt);
      return {
        ...result,
        startMs: startedAt - timeZero,
        endMs: performance.now() - timeZero,
      };
    }),
  );
  return { brands, completionSeconds: (performance.now() - timeZero) / 1000 };
}

async function alone(spec, requests) {
  const brands = [];
  for (const app of spec.apps) brands.push(await dailyFlow(spec, app, requests, performance.now()));
  return { brands };
}

/** Reads a whole export body, keeping nothing: the tenant downloads, this process does not parse. */
async function drainExport(client, range) {
  const response = await client.openExport(range, "csv");
  let bytes = 0;
  for await (const chunk of response.body) bytes += chunk.byteLength;
  return bytes;
}

async function noisy(spec) {
  const app = spec.apps[0];
  const client = clientOf(spec, app);
  const yesterday = addDays(spec.today, -1);
  const year = { from: addDays(yesterday, -364), to: yesterday };
  let stopping = false;
  const stopped = new Promise((resolve) => {
    process.stdin.on("data", (chunk) => {
      if (String(chunk).includes("stop")) resolve();
    });
    process.stdin.on("end", resolve);
  }).then(() => {
    stopping = true;
  });
  const done = { exports: 0, aggregates: 0, exportBytes: 0, errors: [] };
  const loop = async (once) => {
    while (!stopping) {
      try {
        await once();
      } catch (error) {
        if (done.errors.length < 5) done.errors.push(`${error.code ?? error.name}: ${error.message}`);
        await sleep(1000);
      }
    }
  };
  const loops = [
    ...Array.from({ length: spec.exports }, () =>
      loop(async () => {
        done.exportBytes += await drainExport(client, year);
        done.exports += 1;
      }),
    ),
    loop(async () => {
      for await (const _row of client.aggregate({
        ...year,
        metrics: ["SPEND", "CLICKS", "REVENUE"],
        groupBy: ["CAMPAIGN_ID"],
      }));
      done.aggregates += 1;
    }),
  ];
  process.stdout.write("started\n");
  await stopped;
  // A loop's request in flight is finished, not cut: its latency is recorded whole.
  await Promise.all(loops);
  return done;
}

async function walk(spec) {
  const app = spec.apps[0];
  const yesterday = addDays(spec.today, -1);
  const rounds = [];
  for (let round = 0; round < spec.rounds; round += 1) {
    const client = clientOf(spec, app);
    await client.myAccess();
    const started = performance.now();
    const wireBefore = wireBytes();
    const cpuBefore = process.cpuUsage();
    let rows = 0;
    let pages = 0;
    for await (const page of client.recordPages({
      from: addDays(yesterday, -89),
      to: yesterday,
      pageSize: 5000,
      // A currency no earlier walk of the run asked: no answer cache helps.
      currency: spec.currencies[round % spec.currencies.length],
    })) {
      rows += page.rows.length;
      pages += 1;
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const wire = wireBytes();
    rounds.push({
      rows,
      pages,
      seconds,
      wireDown: wire.down - wireBefore.down,
      wireUp: wire.up - wireBefore.up,
      // This process's CPU (every thread: the SDK decodes compressed answers on the thread pool).
      clientCpuMs: (cpu.user + cpu.system) / 1000,
    });
  }
  return { rounds };
}

const ROLES = { herd, alone, noisy, walk };

if (import.meta.url === `file://${process.argv[1]}`) {
  const spec = JSON.parse(await readFile(process.argv[2], "utf8"));
  await mkdir(spec.work, { recursive: true });
  const requests = [];
  // The tenant's and the walker's requests are their one brand's; a herd's brands run their own.
  const result = await requester.run({ requests, who: spec.apps[0]?.rank ?? 0 }, () =>
    ROLES[spec.role](spec, requests),
  );
  await writeFile(spec.out, JSON.stringify({ ...result, requests }));
  process.exit(0);
}
