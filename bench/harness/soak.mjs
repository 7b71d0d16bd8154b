// `npm run bench -- --soak M` (issue 11, item 4): M minutes of mixed daily-sync traffic on MDQ as
// shipped, per store — cold walks of fresh queries (never asked before), 90-day aggregates,
// readiness and tokens at once — with the server's resident memory and the p99 of every minute.
// RSS must settle (the last minute ≤ 1.1× the second) and stay ≤ 512 MB.
import { driveWalks, walkKeys, walkOf } from "./cold-walk.mjs";
import { driveLoad, statusKb } from "./processes.mjs";
import { SCENARIOS } from "./scenarios.mjs";

/** The MDQs a soak runs, one after the other. */
export const SOAK_CONTENDERS = ["mdq-duckdb", "mdq-postgres"];
/** Walk sets a soak takes its fresh queries from: far past those of the cold-walk scenario. */
const FIRST_SOAK_SET = 1000;
const RSS_LIMIT_MB = 512;

/** The mixed requests autocannon repeats beside the walks: readiness, an aggregate, a token. */
function mixedRequests(contender, context) {
  return [
    ...SCENARIOS["daily-sync"]
      .requests(contender, context)
      .filter((request) => !request.body.includes("marketingRecords")),
    ...SCENARIOS.token.requests(contender, context),
  ];
}

/**
 * Runs the soak on every running MDQ of `SOAK_CONTENDERS`: per minute, autocannon (4 connections)
 * on the mixed requests while 4 clients walk fresh queries at 1000-row pages; then the server's
 * VmRSS. Returns per contender the minutes and the verdict.
 */
export async function soak({ minutes, context, running, log }) {
  const results = {};
  let set = FIRST_SOAK_SET;
  for (const contender of SOAK_CONTENDERS) {
    const server = running.get(contender);
    if (!server) continue;
    const perMinute = [];
    for (let minute = 1; minute <= minutes; minute += 1) {
      const ends = Date.now() + 60_000;
      const mixed = driveLoad({
        url: server.url,
        connections: 4,
        duration: 60,
        warmup: 0,
        requests: mixedRequests(contender, context),
      });
      const walked = { pages: 0, p99: [] };
      while (Date.now() < ends - 5_000) {
        const walks = walkKeys(context, set, 4).map((key) => walkOf(contender, context, key, 1000));
        set += 1;
        const result = await driveWalks({ url: server.url, clients: 4, walks });
        walked.pages += result.pages;
        walked.p99.push(result.p99);
        if (result.failures.length > 0) throw new Error(`soak: ${contender}: ${result.failures[0]}`);
      }
      const load = await mixed;
      const rssMb = ((await statusKb(server.pid, "VmRSS")) ?? 0) / 1024;
      const entry = {
        minute,
        rssMb,
        mixedRps: load.rps,
        mixedP99: load.p99,
        failures: load.non2xx + load.errors + load.timeouts,
        walkPages: walked.pages,
        walkP99: Math.max(0, ...walked.p99),
      };
      perMinute.push(entry);
      log(
        `[soak] ${contender} minute ${minute}/${minutes}: RSS ${rssMb.toFixed(0)} MB, mixed ${load.rps.toFixed(0)} req/s p99 ${load.p99.toFixed(0)} ms, ${walked.pages} walk pages p99 ${entry.walkP99.toFixed(0)} ms` +
          (entry.failures > 0 ? `, ${entry.failures} failed` : ""),
      );
    }
    const second = perMinute[1]?.rssMb;
    const last = perMinute.at(-1)?.rssMb;
    // With fewer than 3 minutes the second minute is the last: nothing to compare.
    const settles = perMinute.length < 3 ? null : last <= 1.1 * second;
    results[contender] = {
      perMinute,
      settles,
      underLimit: Math.max(...perMinute.map((entry) => entry.rssMb)) <= RSS_LIMIT_MB,
    };
  }
  return results;
}

/** The soak as a markdown table, one row per contender and minute, and its verdicts. */
export function soakTable(soakResults, labels) {
  const lines = [
    "| soak | minute | RSS MB | mixed req/s | mixed p99 ms | walk pages | walk p99 ms | failed |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  const verdicts = [];
  for (const [contender, result] of Object.entries(soakResults)) {
    for (const entry of result.perMinute)
      lines.push(
        `| ${labels[contender] ?? contender} | ${entry.minute} | ${entry.rssMb.toFixed(0)} | ${entry.mixedRps.toFixed(0)} | ${entry.mixedP99.toFixed(0)} | ${entry.walkPages} | ${entry.walkP99.toFixed(0)} | ${entry.failures} |`,
      );
    const settles =
      result.settles === null ? "NOT MEASURED (needs ≥ 3 minutes)" : result.settles ? "MET" : "MISSED";
    verdicts.push(
      `soak ${contender}: last minute RSS ≤ 1.1× second minute: ${settles}; peak ≤ ${RSS_LIMIT_MB} MB: ${result.underLimit ? "MET" : "MISSED"}`,
    );
  }
  return `${lines.join("\n")}\n\n${verdicts.join("\n")}`;
}
