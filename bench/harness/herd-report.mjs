// The herd bench's figures (bench/herd.mjs): what one herd's results say (summarizeHerd), the
// tables printed per run, and the issue's targets read against them as PASS/FAIL lines.
import { QUESTION_CLASSES } from "./herd-clients.mjs";
import { median, percentile } from "./stats.mjs";

/** Classes whose p99 the cheap-question target reads. */
const CHEAP_CLASSES = ["token", "readiness", "changes", "myAccess"];
/** The server's name (mdq_question_duration_seconds' class) of a client class, where they differ. */
const SERVER_CLASS = { "records page": "records" };
const TARGETS = Object.freeze({
  cheapP99Ms: 50,
  slowdownVsMedian: 3,
  noisyCompletion: 1.25,
  throughputVsColdWalk: 0.7,
  throughputVsAlone: 0.7,
  shedShare: 0.01,
  peakRssMb: 512,
  pageBytesRatio: 5,
  wanWalkSpeedup: 3,
  loopbackThroughput: 0.8,
});

const sorted = (numbers) => [...numbers].sort((a, b) => a - b);

/** p50/p99 (ms) and count of each question class among `requests`. */
export function latencyByClass(requests) {
  const classes = {};
  for (const name of QUESTION_CLASSES) {
    const ms = sorted(requests.filter((request) => request.class === name).map((request) => request.ms));
    if (ms.length > 0) classes[name] = { n: ms.length, p50: percentile(ms, 50), p99: percentile(ms, 99) };
  }
  return classes;
}

/** The `Accept-Encoding` values the requests were sent with, and the classes that sent each. */
export function acceptEncodings(requests) {
  const byValue = {};
  for (const request of requests) {
    const value = request.acceptEncoding ?? "(none)";
    byValue[value] ??= [];
    if (!byValue[value].includes(request.class)) byValue[value].push(request.class);
  }
  return byValue;
}

/** Slack (ms) allowed between a Retry-After's end and the retry: timers fire a little early or late. */
const RETRY_SLACK_MS = 50;

/**
 * Requests by status; whether every 429 and 503 carried Retry-After; and of the herd brands'
 * (`who` > 0: one request of a class in flight at a time) answers with one, how many were
 * followed by the same class's next request no sooner than Retry-After said (the SDK honours it).
 */
export function statusCounts(requests) {
  const counts = {};
  for (const request of requests) counts[request.status] = (counts[request.status] ?? 0) + 1;
  const limited = requests.filter((request) => request.status === 429 || request.status === 503);
  const checked = limited.filter((request) => request.retryAfterSeconds >= 0 && request.who > 0);
  const honoured = checked.filter((request) => {
    const next = requests.find(
      (other) => other.who === request.who && other.class === request.class && other.at > request.at,
    );
    return (
      next === undefined ||
      next.at >= request.at + request.headersMs + request.retryAfterSeconds * 1000 - RETRY_SLACK_MS
    );
  });
  return {
    counts,
    limited: limited.length,
    withRetryAfter: limited.filter((r) => r.retryAfter).length,
    retryAfterChecked: checked.length,
    retryAfterHonoured: honoured.length,
  };
}

/**
 * The brands' flows run back to back, each alone (the `alone` role's `brands`): their rows ÷ the
 * sum of their flow times (myAccess to mirror done, and the dashboard aggregates of the brands
 * that ask them, as a herd's busy time counts them). What the region does one brand at a time:
 * the herd's rows per busy second against it says whether the herd collapses.
 */
export function aloneThroughput(brands) {
  const done = brands.filter((brand) => brand.error === null && brand.rows > 0);
  const rows = done.reduce((sum, brand) => sum + brand.rows, 0);
  const seconds = done.reduce((sum, brand) => sum + brand.flowSeconds, 0);
  return { brands: done.length, rows, seconds, rowsPerSecond: seconds > 0 ? rows / seconds : null };
}

/** Seconds during which at least one brand was syncing (the union of their intervals). */
function busySeconds(brands) {
  const intervals = brands.map((brand) => [brand.startMs, brand.endMs]).sort((a, b) => a[0] - b[0]);
  let total = 0;
  let [from, to] = intervals[0] ?? [0, 0];
  for (const [start, end] of intervals.slice(1)) {
    if (start > to) {
      total += to - from;
      [from, to] = [start, end];
    } else to = Math.max(to, end);
  }
  return (total + to - from) / 1000;
}

/**
 * One herd's figures from the clients' results: completion, sync time per row, each brand's
 * slowdown against `alone` (rank → sync seconds alone), throughput, classes and statuses.
 */
export function summarizeHerd({ herd, noisy, alone }) {
  const synced = herd.brands.filter((brand) => brand.error === null && brand.rows > 0);
  const perRowUs = sorted(synced.map((brand) => (brand.syncSeconds / brand.rows) * 1e6));
  const slowdowns = sorted(
    synced.filter((brand) => alone[brand.rank]).map((brand) => brand.syncSeconds / alone[brand.rank]),
  );
  const rows = synced.reduce((sum, brand) => sum + brand.rows, 0);
  const busy = busySeconds(herd.brands);
  const allRequests = [...herd.requests, ...(noisy?.requests ?? [])];
  const medianPerRow = median(perRowUs);
  const medianSlowdown = median(slowdowns);
  return {
    completionSeconds: herd.completionSeconds,
    brands: herd.brands.length,
    failed: herd.brands.filter((brand) => brand.error !== null).map((b) => `rank ${b.rank}: ${b.error}`),
    rows,
    syncUsPerRow: {
      median: medianPerRow,
      p95: percentile(perRowUs, 95),
      maxOverMedian: perRowUs.length > 0 ? perRowUs.at(-1) / medianPerRow : null,
    },
    slowdown: {
      brands: slowdowns.length,
      median: medianSlowdown,
      max: slowdowns.at(-1) ?? null,
      maxOverMedian: slowdowns.length > 0 ? slowdowns.at(-1) / medianSlowdown : null,
    },
    busySeconds: busy,
    rowsPerSecond: rows / herd.completionSeconds,
    rowsPerBusySecond: rows / busy,
    classes: latencyByClass(herd.requests),
    perBrand: herd.brands.map((brand) => ({
      rank: brand.rank,
      rows: brand.rows,
      startMs: Math.round(brand.startMs),
      syncSeconds: brand.syncSeconds ?? null,
      flowSeconds: brand.flowSeconds ?? null,
      aloneSeconds: alone[brand.rank] ?? null,
    })),
    statuses: statusCounts(allRequests),
    requests: allRequests.length,
    acceptEncodings: acceptEncodings(allRequests),
    noisy: noisy
      ? {
          exports: noisy.exports,
          aggregates: noisy.aggregates,
          exportBytes: noisy.exportBytes,
          errors: noisy.errors,
          classes: latencyByClass(noisy.requests),
        }
      : null,
  };
}

const ms = (value) => (value === undefined || value === null ? "–" : `${value.toFixed(1)}`);
const fixed = (value, digits = 2) =>
  value === undefined || value === null || Number.isNaN(value) ? "–" : value.toFixed(digits);

/** The table of one herd run (one store, noisy tenant on or off). */
export function herdTable(run) {
  const s = run.summary;
  const statuses = Object.entries(s.statuses.counts)
    .map(([status, n]) => `${status}: ${n}`)
    .join(", ");
  const lines = [
    `### ${run.store}, ${run.instances} instance${run.instances > 1 ? "s" : ""}${run.instances > 1 ? ` behind nginx (${run.balance ?? "round-robin"})` : ""}, noisy tenant ${run.noisy ? "on" : "off"}${run.wan ? `, WAN ${run.wan}` : ""}`,
    "",
    "| measure | value |",
    "|---|---|",
    `| herd completion | ${fixed(s.completionSeconds, 1)} s (${s.brands} brands, ${s.failed.length} failed) |`,
    `| sync time per row: median, p95, max/median | ${fixed(s.syncUsPerRow.median, 1)} µs, ${fixed(s.syncUsPerRow.p95, 1)} µs, ${fixed(s.syncUsPerRow.maxOverMedian)}× |`,
    `| slowdown (herd ÷ alone, ${s.slowdown.brands} brands): median, max, max/median | ${fixed(s.slowdown.median)}×, ${fixed(s.slowdown.max)}×, ${fixed(s.slowdown.maxOverMedian)}× |`,
    `| rows synced; rows/s over completion; over busy time (${fixed(s.busySeconds, 1)} s) | ${s.rows.toLocaleString("en")}; ${Math.round(s.rowsPerSecond).toLocaleString("en")}; ${Math.round(s.rowsPerBusySecond).toLocaleString("en")} |`,
    `| the same brands back to back, alone | ${run.aloneThroughput?.rowsPerSecond ? `${Math.round(run.aloneThroughput.rowsPerSecond).toLocaleString("en")} rows/s (${run.aloneThroughput.brands} brands, ${run.aloneThroughput.rows.toLocaleString("en")} rows in ${fixed(run.aloneThroughput.seconds, 1)} s); herd (busy) ÷ alone ${fixed(s.rowsPerBusySecond / run.aloneThroughput.rowsPerSecond)}×` : "–"} |`,
    `| 8-client cold walk, same data, same run | ${run.coldWalk ? `${Math.round(run.coldWalk.rowsPerSecond).toLocaleString("en")} rows/s (Accept-Encoding: ${run.coldWalk.acceptEncoding}); herd (busy) ÷ walk ${fixed(s.rowsPerBusySecond / run.coldWalk.rowsPerSecond)}×` : "–"} |`,
    `| status codes | ${statuses}; ${s.statuses.limited} × 429/503, ${s.statuses.withRetryAfter} with Retry-After; the SDK waited it out ${s.statuses.retryAfterHonoured} of ${s.statuses.retryAfterChecked} times (herd brands) |`,
    `| Accept-Encoding sent (compression ${run.compression}) | ${Object.entries(s.acceptEncodings)
      .map(([value, classes]) => `${value}: ${classes.join(", ")}`)
      .join("; ")} |`,
    `| peak RSS per instance during this herd | ${run.peakRssMb.map((mb) => `${Math.round(mb)} MB`).join(", ")} |`,
  ];
  if (s.noisy)
    lines.push(
      `| noisy tenant | ${s.noisy.exports} year-long exports, ${s.noisy.aggregates} CAMPAIGN_ID aggregates done${s.noisy.errors.length > 0 ? `; errors: ${s.noisy.errors[0]}` : ""} |`,
    );
  lines.push(
    "",
    "Client side: the herd's SDK clients, from sending to the body read. Server side: mdq_question_duration_seconds on every instance during the herd (the noisy tenant's requests included), from receiving to the response sent; its p99 is the bound of the bucket that holds it.",
    "",
    "| question class | client n | client p50 ms | client p99 ms | server n | server ≤ 50 ms | server p99 ≤ ms |",
    "|---|---|---|---|---|---|---|",
  );
  const server = run.serverClasses ?? {};
  for (const name of QUESTION_CLASSES) {
    const entry = s.classes[name];
    const inside = server[SERVER_CLASS[name] ?? name];
    if (!entry && !inside) continue;
    lines.push(
      `| ${name} | ${entry?.n ?? 0} | ${ms(entry?.p50)} | ${ms(entry?.p99)} | ${inside?.n ?? 0} | ${inside ? `${fixed(inside.within50 * 100, 1)} %` : "–"} | ${inside ? (inside.p99UpperMs === null ? "> 10000" : String(inside.p99UpperMs)) : "–"} |`,
    );
  }
  if (s.noisy)
    for (const [name, entry] of Object.entries(s.noisy.classes))
      lines.push(`| noisy tenant: ${name} | ${entry.n} | ${ms(entry.p50)} | ${ms(entry.p99)} | | | |`);
  if (s.failed.length > 0) lines.push("", `failed brands: ${s.failed.slice(0, 5).join("; ")}`);
  return lines.join("\n");
}

/** Of a compression comparison's walks, the one over `link` by `client` with compression `mode`. */
function walkOf(compression, link, client, mode) {
  return compression.walks.find((w) => w.link === link && w.client === client && w.compression === mode);
}

/**
 * The compression comparison's tables: each walk (link, client, compression), then each pair's
 * ratios, compressed ÷ uncompressed.
 */
export function compressionTable(compression) {
  const perPage = (walk, ms) => (walk.pages > 0 ? ms / walk.pages : null);
  const per5000 = (walk) => (walk.rows > 0 ? (walk.wireDown / walk.rows) * 5000 : null);
  const lines = [
    `### ${compression.store}${compression.balance ? ` (nginx ${compression.balance})` : ""}: rank-${compression.rank} brand's 90-day walk (5000-row pages), compression off and on`,
    "",
    "sdk: mdq-client's page walk (each page parsed and validated); walker: bench/harness/walk.mjs (rows counted in the text). CPU: the region's instances (every thread) and the client's process, per page.",
    "",
    "| link | client | Accept-Encoding | rows | pages | s | rows/s | wire bytes per 5000 rows | server CPU ms/page | client CPU ms/page |",
    "|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const walk of compression.walks)
    lines.push(
      `| ${walk.link} | ${walk.client} | ${walk.acceptEncoding} | ${walk.rows} | ${walk.pages} | ${fixed(walk.seconds)} | ${Math.round(walk.rows / walk.seconds).toLocaleString("en")} | ${Math.round(per5000(walk) ?? 0).toLocaleString("en")} | ${fixed(perPage(walk, walk.serverCpuMs), 1)} | ${fixed(perPage(walk, walk.clientCpuMs), 1)} |`,
    );
  lines.push(
    "",
    "| link | client | wire bytes on ÷ off | time on ÷ off | rows/s on ÷ off | server CPU/page on ÷ off | client CPU/page on ÷ off |",
    "|---|---|---|---|---|---|---|",
  );
  for (const link of ["loopback", "wan"])
    for (const client of ["sdk", "walker"]) {
      const on = walkOf(compression, link, client, "on");
      const off = walkOf(compression, link, client, "off");
      if (!on || !off) continue;
      lines.push(
        `| ${link} | ${client} | ${fixed(per5000(on) / per5000(off), 3)} | ${fixed(on.seconds / off.seconds)} | ${fixed(on.rows / on.seconds / (off.rows / off.seconds))} | ${fixed(perPage(on, on.serverCpuMs) / perPage(off, off.serverCpuMs))} | ${fixed(perPage(on, on.clientCpuMs) / perPage(off, off.clientCpuMs))} |`,
      );
    }
  return lines.join("\n");
}

const verdict = (ok) => (ok === null ? "N/A " : ok ? "PASS" : "FAIL");

/** The issue's targets for one store, as lines `PASS|FAIL|N/A  what: measured (target)`. */
export function targetLines(storeResult) {
  const lines = [];
  const noisy = storeResult.runs.find((run) => run.noisy);
  const quiet = storeResult.runs.find((run) => !run.noisy);
  const line = (ok, text) => lines.push(`${verdict(ok)}  ${storeResult.store}: ${text}`);
  /** A ratio's line against a floor or a ceiling; a ratio of null (not measured) is N/A. */
  const atLeast = (ratio, target, what) =>
    line(ratio === null ? null : ratio >= target, `${what} ${fixed(ratio)}× (≥ ${target})`);
  const atMost = (ratio, target, what) =>
    line(ratio === null ? null : ratio <= target, `${what} ${fixed(ratio)}× (≤ ${target})`);
  if (noisy) {
    for (const name of CHEAP_CLASSES) {
      const p99 = noisy.summary.classes[name]?.p99;
      line(
        p99 === undefined ? null : p99 <= TARGETS.cheapP99Ms,
        `${name} p99 beside the noisy tenant ${ms(p99)} ms (≤ ${TARGETS.cheapP99Ms})`,
      );
      // The service's own: its p99 is within 50 ms exactly when 99 % of its answers are.
      const inside = noisy.serverClasses?.[name];
      line(
        inside === undefined ? null : inside.within50 >= 0.99,
        `${name} server-side beside the noisy tenant: ${inside ? `${fixed(inside.within50 * 100, 1)} % within ${TARGETS.cheapP99Ms} ms, p99 ≤ ${inside.p99UpperMs ?? "> 10000"} ms` : "–"} (p99 ≤ ${TARGETS.cheapP99Ms}: ≥ 99 % within)`,
      );
    }
  }
  for (const run of [noisy, quiet].filter(Boolean)) {
    const ratio = run.summary.slowdown.maxOverMedian;
    atMost(
      ratio,
      TARGETS.slowdownVsMedian,
      `noisy ${run.noisy ? "on" : "off"}: largest slowdown ÷ median slowdown`,
    );
  }
  if (noisy && quiet) {
    const ratio = noisy.summary.completionSeconds / quiet.summary.completionSeconds;
    atMost(ratio, TARGETS.noisyCompletion, "herd completion with ÷ without the noisy tenant");
  }
  for (const run of [noisy, quiet].filter(Boolean)) {
    const ratio = run.coldWalk ? run.summary.rowsPerBusySecond / run.coldWalk.rowsPerSecond : null;
    atLeast(
      ratio,
      TARGETS.throughputVsColdWalk,
      `noisy ${run.noisy ? "on" : "off"}: herd rows/s (busy time) ÷ 8-client cold walk`,
    );
    const alone = run.aloneThroughput;
    atLeast(
      alone?.rowsPerSecond ? run.summary.rowsPerBusySecond / alone.rowsPerSecond : null,
      TARGETS.throughputVsAlone,
      `noisy ${run.noisy ? "on" : "off"}: herd rows/s (busy time) ÷ the same brands back to back alone (${alone?.brands ?? 0} brands${alone && alone.brands < run.summary.brands ? ` of ${run.summary.brands}` : ""}), no collapse`,
    );
    const { counts, limited, withRetryAfter, retryAfterChecked, retryAfterHonoured } = run.summary.statuses;
    const other5xx = Object.entries(counts)
      .filter(([status]) => /^5\d\d$/.test(status) && status !== "503")
      .reduce((sum, [, n]) => sum + n, 0);
    const shed = (counts[503] ?? 0) / run.summary.requests;
    line(
      other5xx === 0 &&
        shed < TARGETS.shedShare &&
        withRetryAfter === limited &&
        retryAfterHonoured === retryAfterChecked &&
        run.summary.failed.length === 0,
      `noisy ${run.noisy ? "on" : "off"}: ${other5xx} 5xx other than 503, 503 ${fixed(shed * 100)} % of requests (< 1 %), ${withRetryAfter}/${limited} 429/503 with Retry-After, honoured ${retryAfterHonoured}/${retryAfterChecked}, ${run.summary.failed.length} brands failed`,
    );
  }
  const peak = Math.max(...storeResult.instancesPeakRssMb);
  line(
    peak <= TARGETS.peakRssMb,
    `peak RSS of the largest instance ${Math.round(peak)} MB (≤ ${TARGETS.peakRssMb})`,
  );
  const compression = storeResult.compression;
  if (compression) {
    // Read on the SDK's walks: what a brand's sync pays.
    const find = (link, mode) => walkOf(compression, link, "sdk", mode);
    const wanOn = find("wan", "on");
    const wanOff = find("wan", "off");
    const loopOn = find("loopback", "on");
    const loopOff = find("loopback", "off");
    // Per row (a walk's last page is shorter); the bytes are the link's whichever it is.
    const bytesOn = wanOn ?? loopOn;
    const bytesOff = wanOff ?? loopOff;
    if (bytesOn && bytesOff) {
      const pageRatio = bytesOff.wireDown / bytesOff.rows / (bytesOn.wireDown / bytesOn.rows);
      atLeast(pageRatio, TARGETS.pageBytesRatio, "a 5000-row page's wire bytes (SDK), off ÷ on");
    }
    if (wanOn && wanOff) {
      atLeast(
        wanOff.seconds / wanOn.seconds,
        TARGETS.wanWalkSpeedup,
        "90-day walk over the WAN (SDK), off ÷ on time",
      );
    }
    if (loopOn && loopOff) {
      const ratio = loopOn.rows / loopOn.seconds / (loopOff.rows / loopOff.seconds);
      atLeast(ratio, TARGETS.loopbackThroughput, "loopback rows/s (SDK), on ÷ off");
    }
  }
  return lines;
}
