// The cold walk (issue 11): what a brand's daily sync does. W concurrent clients, each walking
// every page of a distinct (app, 90-day window, currency) that no contender process was asked
// before in the run, so that no answer cache helps. Walks are numbered in sets: set 0 is checked
// against MDQ on DuckDB before anything is timed, then each server walks one untimed set of its
// own (its JIT warmed, its caches not), then each (round, page size) takes a fresh set. The
// in-memory limit replays the answers of sets it was asked once before timing (that is what it
// measures: the same answers from memory).
import { addDays, CURRENCY_CODES } from "../../packages/server/dist/src/index.js";
import { cpuMs, runJsonProcess } from "./processes.mjs";
import { recordsBody } from "./queries.mjs";
import { median } from "./stats.mjs";
import { rowsIn, walkPages } from "./walk.mjs";

const WALKER = new URL("./walk.mjs", import.meta.url).pathname;
const WINDOW_DAYS = 90;

/** Contenders of the cold walk, in table order; the in-memory limit is the baseline. */
export const WALK_CONTENDERS = [
  "mdq-duckdb",
  "mdq-postgres",
  "bare-memory",
  "bare-sql",
  "yoga",
  "postgraphile",
];

/** PostGraphile's own walk: its connection's `first`/`after` cursors, the way its users page. */
const POSTGRAPHILE_WALK = `query($b: String!, $from: Date!, $to: Date!, $m: [String], $s: [String], $first: Int!, $after: Cursor) {
  benchRecordsPage(brand: $b, dayFrom: $from, dayTo: $to, markets: $m, sources: $s, first: $first, after: $after) {
    totalCount pageInfo { hasNextPage endCursor } nodes { recordId date market dataSource channel campaignId campaignName impressions clicks spendE4 conversionsE4 revenueE4 currency }
  }
}`;

/**
 * The `clients` walk keys of set `set`: apps vary fastest, then currency, then how many days
 * before yesterday the window ends, so that no two keys of a run ask the same question.
 */
export function walkKeys(context, set, clients) {
  const apps = context.credentials.duckdb.apps;
  const keys = [];
  for (let index = set * clients; index < (set + 1) * clients; index += 1) {
    const app = apps[index % apps.length];
    const rest = Math.floor(index / apps.length);
    const currency = CURRENCY_CODES[rest % CURRENCY_CODES.length];
    // Timed sets end a day earlier or more: the warm-up questions of the other scenarios (the
    // window ending yesterday) never meet them.
    const shift = Math.floor(rest / CURRENCY_CODES.length) + (set === 0 ? 0 : 1);
    const to = addDays(context.question.to, -shift);
    keys.push({ app, currency, from: addDays(to, -(WINDOW_DAYS - 1)), to });
  }
  return keys;
}

/** One walk of `key` at `pageSize` as `contender` is asked it (see walk.mjs for the placeholders). */
export function walkOf(contender, context, key, pageSize) {
  if (contender === "postgraphile") {
    return {
      mode: "cursor",
      path: "/graphql",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        query: POSTGRAPHILE_WALK,
        variables: {
          b: key.app.brandClientId,
          from: key.from,
          to: key.to,
          m: key.app.markets,
          s: key.app.dataSources,
          first: pageSize,
          after: "__AFTER__",
        },
      }),
    };
  }
  const store = contender.startsWith("mdq-postgres") ? "postgres" : "duckdb";
  const token = context.tokens[store][key.app.appClientId];
  return {
    mode: "page",
    path: "/graphql",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: recordsBody({
      brandId: key.app.brandClientId,
      from: key.from,
      to: key.to,
      currency: key.currency,
      page: "__PAGE__",
      pageSize,
    }),
  };
}

class WalkDisagreement extends Error {
  constructor(contender, message) {
    super(`cold-walk: ${contender} walks differently from MDQ (DuckDB): ${message}`);
    this.name = "WalkDisagreement";
  }
}

/** Every page's answer text of one walk, in order; throws on a failed page. */
async function answersOf(url, walk, contender) {
  const texts = [];
  const result = await walkPages(url, walk, (_index, text) => texts.push(text));
  if (result.failed) throw new WalkDisagreement(contender, result.failed);
  return texts;
}

/**
 * Walks key 0 of set 0 at `pageSize` on `contender` and on MDQ on DuckDB and compares: the same
 * bytes page by page (yoga, the bare routes), the same `data` (MDQ on PostgreSQL), the same record
 * ids in the same order over the whole walk and the same totalCount (PostGraphile's cursor walk).
 */
export async function verifyWalk({ contender, url, referenceUrl, context, pageSize, reference }) {
  const key = walkKeys(context, 0, 1)[0];
  const expected =
    reference ?? (await answersOf(referenceUrl, walkOf("mdq-duckdb", context, key, pageSize), "mdq-duckdb"));
  const rows = expected.reduce((sum, text) => sum + rowsIn(text), 0);
  if (contender === "mdq-duckdb")
    return { note: `reference (${expected.length} pages, ${rows} rows)`, expected };
  const answers = await answersOf(url, walkOf(contender, context, key, pageSize), contender);
  const parsedExpected = expected.map((text) => JSON.parse(text));
  if (contender === "postgraphile") {
    const pages = answers.map((text) => JSON.parse(text).data?.benchRecordsPage);
    if (pages.some((page) => !page))
      throw new WalkDisagreement(contender, answers.find((t) => !JSON.parse(t).data)?.slice(0, 300));
    const ids = pages.flatMap((page) => page.nodes.map((node) => node.recordId)).join(",");
    const expectedIds = parsedExpected
      .flatMap((body) => body.data.marketingRecords.map((row) => row.recordId))
      .join(",");
    if (ids !== expectedIds)
      throw new WalkDisagreement(contender, "different record ids or order over the walk");
    const total = parsedExpected[0].extensions.pageInfo.marketingRecords.totalCount;
    if (pages[0].totalCount !== total)
      throw new WalkDisagreement(contender, `totalCount ${pages[0].totalCount}, MDQ ${total}`);
    return {
      note: `same record ids, order and totalCount over a ${pages.length}-page cursor walk (${rows} rows)`,
    };
  }
  if (answers.length !== expected.length)
    throw new WalkDisagreement(contender, `${answers.length} pages, MDQ ${expected.length}`);
  for (let index = 0; index < answers.length; index += 1) {
    const same = contender.startsWith("mdq-postgres")
      ? JSON.stringify(JSON.parse(answers[index]).data) === JSON.stringify(parsedExpected[index].data)
      : answers[index] === expected[index];
    if (!same)
      throw new WalkDisagreement(contender, `page ${index + 1} differs: ${answers[index].slice(0, 200)}`);
  }
  return {
    note: `${contender.startsWith("mdq-postgres") ? "same data" : "same bytes"} on every page of a ${answers.length}-page walk (${rows} rows)`,
  };
}

/** Runs `walks` in the walker process against `url`; resolves to its summary. */
export function driveWalks({ url, clients, walks }) {
  return runJsonProcess(WALKER, { url, clients, walks });
}

/**
 * The set a (round, page size) walks — fresh for every server, the first timed sets for the
 * limit — and, with `solo`, the set whose first key one client then walks alone.
 */
export function setOf(contender, round, sizeIndex, sizes, solo = false) {
  const timed = contender === "bare-memory" ? sizeIndex : round * sizes + sizeIndex;
  return 1 + 2 * timed + (solo && contender !== "bare-memory" ? 1 : 0);
}

/** The set a server walks untimed at a page size before its timed rounds: past every timed set. */
export function warmUpSetOf(sizeIndex, sizes, rounds) {
  return 1 + 2 * rounds * sizes + sizeIndex;
}

/**
 * The cold-walk scenario: one results entry per page size (`cold-walk-1000`, `cold-walk-5000`),
 * each contender's medians over rounds of rows/s, pages/s, p50/p99 per page and last-vs-first.
 */
export async function measureColdWalk({ scenario, options, context, running, skipped, log }) {
  const contenders = scenario.contenders.filter((id) => options.contenders.includes(id));
  const clients = options.walkClients;
  const sizes = options.pageSizes;
  const entries = sizes.map((pageSize) => ({
    id: `cold-walk-${pageSize}`,
    kind: "walk",
    title: `cold walk, ${pageSize}-row pages, ${clients} clients`,
    baseline: scenario.baseline,
    pageSize,
    results: [],
    skipped: [],
  }));
  const measured = [];
  const referenceUrl = running.get("mdq-duckdb").url;
  const references = new Map();
  for (const contender of contenders) {
    if (skipped.has(contender)) {
      for (const entry of entries) entry.skipped.push({ contender, reason: skipped.get(contender) });
      continue;
    }
    const url = running.get(contender).url;
    const notes = [];
    for (const pageSize of sizes) {
      const checked = await verifyWalk({
        contender,
        url,
        referenceUrl,
        context,
        pageSize,
        reference: references.get(pageSize),
      });
      if (checked.expected) references.set(pageSize, checked.expected);
      notes.push(checked.note);
      log(`[cold-walk ${pageSize}] ${contender}: ${checked.note}`);
    }
    // One untimed round first, as the timed ones walk it. The limit answers from memory: it is
    // asked every walk it will replay. A server walks keys that no timed round asks (its answer
    // caches stay cold): what it warms is its JIT, as a server that has run for a while has, so
    // that the first timed round does not measure the compiler (the first of three timed
    // rounds at scale 30 ran 5–16% slower than the next two: bench/README.md).
    for (const [sizeIndex, pageSize] of sizes.entries()) {
      const set =
        contender === "bare-memory"
          ? setOf(contender, 0, sizeIndex, sizes.length)
          : warmUpSetOf(sizeIndex, sizes.length, options.rounds);
      const walks = walkKeys(context, set, clients).map((key) => walkOf(contender, context, key, pageSize));
      await driveWalks({ url, clients, walks });
    }
    measured.push({ contender, url, pid: running.get(contender).pid, notes, rounds: sizes.map(() => []) });
  }
  for (let round = 0; round < options.rounds; round += 1) {
    for (const [sizeIndex, pageSize] of sizes.entries()) {
      for (const contender of measured) {
        const keys = walkKeys(context, setOf(contender.contender, round, sizeIndex, sizes.length), clients);
        const walks = keys.map((key) => walkOf(contender.contender, context, key, pageSize));
        const cpuBefore = await cpuMs(contender.pid);
        const mainBefore = await cpuMs(contender.pid, contender.pid);
        const result = await driveWalks({ url: contender.url, clients, walks });
        const cpuAfter = await cpuMs(contender.pid);
        const mainAfter = await cpuMs(contender.pid, contender.pid);
        // Of which the JavaScript thread (the rest: the store's threads, libuv's pool).
        result.serverMainCpuMsPerPage =
          mainBefore === undefined || mainAfter === undefined
            ? undefined
            : (mainAfter - mainBefore) / result.pages;
        // Server CPU (every thread: the store's too) per page: what the machine pays for a page.
        result.serverCpuMsPerPage =
          cpuBefore === undefined || cpuAfter === undefined
            ? undefined
            : (cpuAfter - cpuBefore) / result.pages;
        // Last pages against first of one client walking alone (a fresh query): with W clients,
        // the first pages meet W - 1 others and the last ones fewer, which would flatter depth.
        // The walk of the first app (the brand with the most rows in range): the longest walk.
        const soloKeys = walkKeys(
          context,
          setOf(contender.contender, round, sizeIndex, sizes.length, true),
          clients,
        );
        const firstApp = context.credentials.duckdb.apps[0];
        const soloKey = soloKeys.find((key) => key.app === firstApp) ?? soloKeys[0];
        const solo = await driveWalks({
          url: contender.url,
          clients: 1,
          walks: [walkOf(contender.contender, context, soloKey, pageSize)],
        });
        result.lastVsFirst = solo.lastVsFirst;
        result.soloPages = solo.pages;
        contender.rounds[sizeIndex].push(result);
        log(
          `[cold-walk ${pageSize}] round ${round + 1}/${options.rounds} ${contender.contender}: ${Math.round(result.rowsPerSecond)} rows/s, ${result.pagesPerSecond.toFixed(1)} pages/s, p50 ${result.p50.toFixed(0)} ms, p99 ${result.p99.toFixed(0)} ms, last/first ${result.lastVsFirst?.toFixed(2) ?? "–"}, server CPU ${result.serverCpuMsPerPage?.toFixed(1) ?? "–"} ms/page (main thread ${result.serverMainCpuMsPerPage?.toFixed(1) ?? "–"})` +
            (result.failures.length > 0 ? `, FAILED: ${result.failures[0]}` : ""),
        );
      }
    }
  }
  for (const contender of measured) {
    for (const [sizeIndex, entry] of entries.entries()) {
      const rounds = contender.rounds[sizeIndex];
      const failures = rounds.flatMap((round) => round.failures);
      const rowsPerSecond = median(rounds.map((round) => round.rowsPerSecond));
      entry.results.push({
        contender: contender.contender,
        rowsPerSecond,
        pagesPerSecond: median(rounds.map((round) => round.pagesPerSecond)),
        // The chart and the shared table read `rps`: here it is rows/s.
        rps: rowsPerSecond,
        p50: median(rounds.map((round) => round.p50)),
        p99: median(rounds.map((round) => round.p99)),
        lastVsFirst: median(rounds.map((round) => round.lastVsFirst)),
        serverCpuMsPerPage: median(rounds.map((round) => round.serverCpuMsPerPage ?? Number.NaN)),
        serverMainCpuMsPerPage: median(rounds.map((round) => round.serverMainCpuMsPerPage ?? Number.NaN)),
        pagesPerWalk: median(rounds.map((round) => round.pagesPerWalk)),
        failures: failures.length,
        verified:
          contender.notes[sizeIndex] +
          (failures.length > 0 ? `; ${failures.length} walks failed: ${failures[0]}` : ""),
        rounds,
      });
    }
  }
  return entries;
}
