#!/usr/bin/env node
// The brands' side of the herd, in a process of its own (never the servers' nor the bench's event
// loop): every brand runs the real daily flow with the mdq-client SDK, each request timed and
// classed through the SDK's fetch hook. Roles:
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
// false`, and `identity` on the exports too). Every request records the header it went with.
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

/**
 * A fetch that records each request of `who` into `requests`: when it started (`at`, ms of this
 * process's clock), class, the `Accept-Encoding` it was sent with, ms until the body is read
 * (`headersMs` until the headers), status, and whether a 429/503 carried Retry-After (and its
 * seconds). With compression "off" it asks `identity` of the exports as well: the SDK's
 * `compression: false` covers its GraphQL and token requests, and a text export asks `gzip`.
 */
function recordingFetch(requests, who, compression) {
  return async (input, init = {}) => {
    const url = input instanceof Request ? input.url : String(input);
    const record = { who, class: classOf(url, init.body), status: 0, ms: 0, headersMs: 0, bytes: 0 };
    const headers = new Headers(init.headers);
    if (compression === "off") headers.set("accept-encoding", ACCEPT_ENCODING.off);
    record.acceptEncoding = headers.get("accept-encoding");
    const started = performance.now();
    record.at = started;
    requests.push(record);
    let response;
    try {
      response = await fetch(input, { ...init, headers });
    } catch (error) {
      record.ms = performance.now() - started;
      record.status = "network";
      throw error;
    }
    record.headersMs = performance.now() - started;
    record.ms = record.headersMs;
    record.status = response.status;
    if (response.status === 429 || response.status === 503) {
      const retryAfter = response.headers.get("retry-after");
      record.retryAfter = retryAfter !== null;
      if (retryAfter !== null) record.retryAfterSeconds = Number(retryAfter);
    }
    if (!response.body) return response;
    const counted = response.body.pipeThrough(
      new TransformStream({
        transform(chunk, controller) {
          record.bytes += chunk.byteLength;
          controller.enqueue(chunk);
        },
        flush() {
          record.ms = performance.now() - started;
        },
      }),
    );
    return new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

const addDays = (day, n) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function clientOf(spec, app, requests) {
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
    fetch: recordingFetch(requests, app.rank, spec.compression),
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
async function dailyFlow(spec, app, requests, startedAt) {
  const client = clientOf(spec, app, requests);
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

async function noisy(spec, requests) {
  const app = spec.apps[0];
  const client = clientOf(spec, app, requests);
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

async function walk(spec, requests) {
  const app = spec.apps[0];
  const yesterday = addDays(spec.today, -1);
  const rounds = [];
  for (let round = 0; round < spec.rounds; round += 1) {
    const client = clientOf(spec, app, requests);
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
      // This process's CPU (every thread: fetch decodes compressed answers on the thread pool).
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
  const result = await ROLES[spec.role](spec, requests);
  await writeFile(spec.out, JSON.stringify({ ...result, requests }));
  process.exit(0);
}
