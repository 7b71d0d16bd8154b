#!/usr/bin/env node
// The load generator, in a process of its own (never the servers' nor the orchestrator's event
// loop): runs autocannon against one contender for `warmup + duration` seconds and prints one JSON
// line about the answers that completed within the last `duration` seconds only — the steady
// state, so that a round is not cut short by the first requests of every connection, however long
// one request takes.
//   node bench/harness/drive.mjs '<json: {url, connections, duration, warmup, requests}>'
import autocannon from "autocannon";
import { percentile } from "./stats.mjs";

const spec = JSON.parse(process.argv[2] ?? "{}");
if (!spec.url || !Array.isArray(spec.requests) || spec.requests.length === 0) {
  throw new Error("drive.mjs needs {url, connections, duration, requests: [{method, path, headers, body}]}");
}
const duration = spec.duration ?? 5;
const warmup = spec.warmup ?? 0;

const answers = [];
let started;
const instance = autocannon(
  {
    url: spec.url,
    connections: spec.connections ?? 20,
    duration: warmup + duration,
    timeout: spec.timeout ?? 60,
    requests: spec.requests,
  },
  (error, result) => {
    if (error) throw error;
    const windowStart = started + warmup * 1000;
    const measured = answers.filter((answer) => answer.at >= windowStart);
    const latencies = measured.map((answer) => answer.ms).sort((a, b) => a - b);
    const bytes = measured.reduce((sum, answer) => sum + answer.bytes, 0);
    process.stdout.write(
      `${JSON.stringify({
        requests: measured.length,
        seconds: duration,
        rps: measured.length / duration,
        p50: percentile(latencies, 50),
        p90: percentile(latencies, 90),
        p99: percentile(latencies, 99),
        max: latencies.at(-1) ?? 0,
        bytesPerSecond: bytes / duration,
        non2xx: measured.filter((answer) => answer.status < 200 || answer.status > 299).length,
        statuses: Object.fromEntries(
          [...new Set(measured.map((answer) => answer.status))].map((status) => [
            status,
            measured.filter((answer) => answer.status === status).length,
          ]),
        ),
        errors: result.errors,
        timeouts: result.timeouts,
      })}\n`,
    );
  },
);
started = Date.now();
instance.on("response", (_client, status, bytes, ms) => {
  answers.push({ at: Date.now(), status, bytes, ms });
});
