/**
 * `mdq-client sync` as a process against a real service: every record exactly once (checked
 * against the service's own counts and totals), atomic output, and a resume after SIGKILL that
 * ends byte-identical to an uninterrupted run, also when the data was reloaded in between.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { appendFile, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { RECORD_FIELDS } from "@mdq/contract";
import type { StoredRecord } from "@mdq/server";
import {
  addDays,
  type CliRun,
  cliEnv,
  killWhen,
  type RunningService,
  runCli,
  serviceQuery,
  startCli,
  startFaultProxy,
  startService,
} from "@mdq/test-support";
import { parquetReadObjects } from "hyparquet";
import type { SyncCheckpoint } from "../src/cli/checkpoint.js";

/** RFC 4180 lines into rows of strings (quoted fields may hold commas, quotes and newlines). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index]!;
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        field += '"';
        index += 1;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ",") {
      row.push(field);
      field = "";
    } else if (char === "\r" && text[index + 1] === "\n") {
      // RFC 4180's CRLF ends a row; a bare CR or LF is only ever inside quotes.
      index += 1;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += char;
  }
  assert.equal(field, "", "the file ends with CRLF");
  return rows;
}

interface Totals {
  rows: number;
  impressions: number;
  /** Spend per market in cents. */
  spendCents: Map<string, number>;
  rowsByMarket: Map<string, number>;
}

function totalsOf(records: { market: string; impressions: number; spend: number }[]): Totals {
  const totals: Totals = { rows: 0, impressions: 0, spendCents: new Map(), rowsByMarket: new Map() };
  for (const record of records) {
    totals.rows += 1;
    totals.impressions += record.impressions;
    totals.spendCents.set(
      record.market,
      (totals.spendCents.get(record.market) ?? 0) + Math.round(record.spend * 100),
    );
    totals.rowsByMarket.set(record.market, (totals.rowsByMarket.get(record.market) ?? 0) + 1);
  }
  return totals;
}

/** The service's own numbers for `from..to` (≤ 90 days): record count, impressions, spend by market. */
async function serviceTotals(region: RunningService, from: string, to: string) {
  const answer = await serviceQuery(
    region,
    `query($c: ID!, $r: DateRangeInput!) {
      marketingRecords(clientId: $c, dateRange: $r) { recordId }
      marketingAggregate(clientId: $c, dateRange: $r, metrics: [IMPRESSIONS, SPEND], groupBy: [MARKET]) {
        MARKET TOTAL_IMPRESSIONS TOTAL_SPEND
      }
    }`,
    { c: region.credentials.apps[0]!.brandClientId, r: { from, to } },
  );
  const rows = answer.extensions!.pageInfo!["marketingRecords"]!.totalCount;
  const byMarket = answer.data["marketingAggregate"] as {
    MARKET: string;
    TOTAL_IMPRESSIONS: number;
    TOTAL_SPEND: number;
  }[];
  return { rows, byMarket };
}

/** Records of the NDJSON file at `path`. */
async function ndjsonRecords(path: string) {
  const text = await readFile(path, "utf8");
  return text
    .trimEnd()
    .split("\n")
    .map(
      (line) => JSON.parse(line) as { recordId: string; market: string; impressions: number; spend: number },
    );
}

/** The service's numbers for `from..to`, window by window (≤ 90 days each), added up. */
async function serviceTotalsOver(region: RunningService, windows: [string, string][]) {
  let rows = 0;
  const byMarket = new Map<string, { impressions: number; spend: number }>();
  for (const [from, to] of windows) {
    const totals = await serviceTotals(region, from, to);
    rows += totals.rows;
    for (const row of totals.byMarket) {
      const sum = byMarket.get(row.MARKET) ?? { impressions: 0, spend: 0 };
      byMarket.set(row.MARKET, {
        impressions: sum.impressions + row.TOTAL_IMPRESSIONS,
        spend: sum.spend + Math.round(row.TOTAL_SPEND * 100),
      });
    }
  }
  return { rows, byMarket };
}

// The tests write different files and read different brands' data: they run side by side.
describe("mdq-client sync", { concurrency: true }, () => {
  let region: RunningService;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let from: string;
  let to: string;
  /** Uninterrupted syncs of `from..to`, made once: CSV (default settings), NDJSON and Parquet. */
  const reference = { csv: "", ndjson: "", parquet: "" };
  const runs: Record<string, CliRun> = {};

  before(async () => {
    region = await startService({ days: 120, scale: 2 });
    dir = await mkdtemp(join(tmpdir(), "mdq-client-sync-"));
    env = cliEnv(region);
    from = region.firstDay;
    to = region.lastDay;
    reference.csv = join(dir, "reference.csv");
    reference.ndjson = join(dir, "reference.ndjson");
    reference.parquet = join(dir, "reference.parquet");
    const range = ["--from", from, "--to", to];
    [runs["csv"], runs["ndjson"], runs["parquet"]] = await Promise.all([
      runCli(["sync", ...range, "--out", reference.csv], env),
      runCli(
        ["sync", ...range, "--out", reference.ndjson, "--window-days", "90", "--page-size", "1000"],
        env,
      ),
      runCli(["sync", ...range, "--out", reference.parquet, "--window-days", "30"], env),
    ]);
  });
  after(async () => {
    await region.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Runs `mdq-client sync args --out out` and SIGKILLs it once its checkpoint satisfies `when`. */
  async function syncKilledWhen(
    args: string[],
    out: string,
    when: (checkpoint: SyncCheckpoint) => boolean,
    environment = env,
  ): Promise<{ killed: boolean; run: CliRun }> {
    const { child, done } = startCli(["sync", ...args, "--out", out], environment);
    const killed = await killWhen<SyncCheckpoint>(child, `${out}.checkpoint.json`, when);
    return { killed, run: await done };
  }

  it("writes CSV and NDJSON whose rows, impressions and spend match the service's own totals", async () => {
    const csvRun = runs["csv"]!;
    assert.equal(csvRun.code, 0, csvRun.stderr);
    assert.equal(runs["ndjson"]!.code, 0, runs["ndjson"]!.stderr);
    assert.equal(csvRun.stdout, "");

    const [header, ...lines] = parseCsv(await readFile(reference.csv, "utf8"));
    assert.deepEqual(header, RECORD_FIELDS);
    const fromCsv = lines.map((cells) => ({
      recordId: cells[0]!,
      date: cells[1]!,
      market: cells[2]!,
      impressions: Number(cells[7]),
      spend: Number(cells[9]),
    }));
    const fromNdjson = await ndjsonRecords(reference.ndjson);
    assert.deepEqual(
      fromNdjson.map((record) => record.recordId),
      fromCsv.map((record) => record.recordId),
    );

    // 120 days: the service answers at most 90 at a time.
    const expected = await serviceTotalsOver(region, [
      [from, addDays(from, 89)],
      [addDays(from, 90), to],
    ]);
    const got = totalsOf(fromCsv);
    assert.ok(expected.rows > 4000, `only ${expected.rows} rows`);
    assert.equal(got.rows, expected.rows);
    assert.equal(new Set(fromCsv.map((record) => record.recordId)).size, expected.rows, "no record twice");
    assert.equal(
      got.impressions,
      [...expected.byMarket.values()].reduce((sum, market) => sum + market.impressions, 0),
    );
    assert.deepEqual(totalsOf(fromNdjson), got);
    for (const [market, totals] of expected.byMarket) {
      const cents = got.spendCents.get(market)!;
      if (market === "DE" || market === "FR") {
        // EUR markets need no conversion: each record's spend is exact, so the sums are equal.
        assert.equal(cents, totals.spend, market);
      } else {
        // Converted markets: each record is rounded to the cent, each total only once (rule 7).
        assert.ok(Math.abs(cents - totals.spend) <= got.rowsByMarket.get(market)! / 2, market);
      }
    }
    const days = fromCsv.map((record) => record.date);
    assert.deepEqual([...days].sort(), days, "records come oldest day first");
    assert.equal(days[0], from);
    assert.equal(days.at(-1), to);
    for (const leftover of [".partial", ".checkpoint.json", ".lock"]) {
      assert.equal(existsSync(`${reference.csv}${leftover}`), false, `${leftover} removed`);
    }
    assert.match(csvRun.stderr, new RegExp(`wrote ${got.rows.toLocaleString("en-US")} rows`));
  });

  it("writes Parquet holding exactly the records of the NDJSON file", async () => {
    assert.equal(runs["parquet"]!.code, 0, runs["parquet"]!.stderr);
    const bytes = await readFile(reference.parquet);
    const rows = await parquetReadObjects({
      file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
    });
    const expected = (await readFile(reference.ndjson, "utf8"))
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.equal(rows.length, expected.length);
    // Counts are INT64 (read as BigInt), money DECIMAL(18,2) of EUR cents, which hyparquet reads
    // as cents × 0.01 (598.0600000000001): rounded back to the cent, they are the NDJSON's amounts.
    const cents = (value: unknown) => Number((value as number).toFixed(2));
    const asJson = rows.map((row) => ({
      ...row,
      date: (row["date"] as Date).toISOString().slice(0, 10),
      impressions: Number(row["impressions"]),
      clicks: Number(row["clicks"]),
      spend: cents(row["spend"]),
      revenue: cents(row["revenue"]),
    }));
    assert.deepEqual(asJson, expected);
  });

  it("resumes after SIGKILL in the middle of a window and ends byte-identical to an uninterrupted sync", async () => {
    const out = join(dir, "resumed.csv");
    const args = ["--from", from, "--to", to, "--page-size", "1000", "--window-days", "90"];

    // Killed while walking pages, resumed through the export: an export hands a window's pages
    // over in one burst, too quick for the poll to land mid-window on a busy machine (a CI run
    // failed so), while each walked page is a request of its own. The checkpoint is the same.
    // Each request of the walk is held back 300 ms by a proxy: a window is 3 pages of 1000 rows,
    // which once went by before the poll saw one (a CI run on Node 24). The resumed sync goes
    // through the same proxy (a checkpoint is for one service URL).
    const proxy = await startFaultProxy(region.url);
    proxy.script(
      "/graphql",
      Array.from({ length: 8 }, () => ({ delayMs: 300 })),
    );
    try {
      const slowed = cliEnv(region, { overrides: { MDQ_BASE_URL: proxy.url } });
      const { killed, run: interrupted } = await syncKilledWhen(
        [...args, "--page-walk"],
        out,
        (checkpoint) => checkpoint.current !== null && checkpoint.current.page >= 1,
        slowed,
      );
      assert.equal(killed, true, "the sync was still running mid-window");
      assert.equal(interrupted.signal, "SIGKILL");
      assert.equal(existsSync(out), false, "no output file before the sync completes");
      assert.equal(existsSync(`${out}.partial`), true);
      // A page written after the last checkpoint (the kill can land between the two) is cut off.
      await appendFile(`${out}.partial`, "torn-page,2099-01-01,XX\n");

      const resumed = await runCli(["sync", ...args, "--out", out], slowed);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(
        resumed.stderr,
        /resuming .*resumed\.csv\.partial: [\d,]+ rows in \d+ pages already written/,
      );
      assert.deepEqual(await readFile(out), await readFile(reference.csv));
      assert.equal(existsSync(`${out}.checkpoint.json`), false);
      assert.equal(existsSync(`${out}.partial`), false);
    } finally {
      await proxy.close();
    }
  });

  it("resumes a Parquet sync killed mid-way into a file identical to an uninterrupted one", async () => {
    const out = join(dir, "resumed.parquet");
    const args = ["--from", from, "--to", to, "--page-size", "1000", "--window-days", "30"];
    const { killed } = await syncKilledWhen(args, out, (checkpoint) => checkpoint.pages >= 1);
    assert.equal(killed, true);
    assert.equal(existsSync(out), false);
    const resumed = await runCli(["sync", ...args, "--out", out], env);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(await readFile(out), await readFile(reference.parquet));
  });

  it("rewrites the interrupted window when its data was reloaded before the resume, and never duplicates a row", async () => {
    // Another brand (globex): the reload must not change the data the other tests compare.
    const globex = cliEnv(region, { appIndex: 2 });
    const out = join(dir, "reloaded.ndjson");
    const args = ["--from", from, "--to", to, "--page-size", "1000", "--window-days", "90"];
    const seen: { window: SyncCheckpoint["current"] } = { window: null };
    // Killed mid-window while walking pages (see the test above), resumed through the export.
    const { killed } = await syncKilledWhen(
      [...args, "--page-walk"],
      out,
      (checkpoint) => {
        seen.window = checkpoint.current;
        return checkpoint.current !== null && checkpoint.current.page >= 1;
      },
      globex,
    );
    assert.equal(killed, true);
    const day = seen.window!.from;
    const reload: StoredRecord = {
      recordId: `reload-${day}`,
      date: day,
      market: "US",
      dataSource: "google_ads",
      channel: "search",
      campaignId: "cmp-reload",
      campaignName: "Reloaded",
      impressions: 7,
      clicks: 1,
      spendE4: 12_3400n,
      conversionsE4: 0n,
      revenueE4: 0n,
      currency: "USD",
    };
    const brand = region.credentials.apps[2]!.brandClientId;
    await region.service.store.replaceRecords(brand, [reload]);

    const resumed = await runCli(["sync", ...args, "--out", out], globex);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /was reloaded since the interrupted run; writing it again/);
    const fresh = join(dir, "fresh.ndjson");
    assert.equal((await runCli(["sync", ...args, "--out", fresh], globex)).code, 0);
    assert.deepEqual(await readFile(out), await readFile(fresh));
    const records = await ndjsonRecords(out);
    assert.equal(new Set(records.map((record) => record.recordId)).size, records.length);
    assert.equal(records.filter((record) => record.recordId.startsWith(`reload-${day}`)).length, 1);
  });

  it("starts afresh when the checkpoint is for another range, and refuses a second sync to the same file", async () => {
    const out = join(dir, "other.csv");
    await syncKilledWhen(["--from", from, "--to", to], out, (checkpoint) => checkpoint.pages >= 1);
    const last30 = addDays(to, -29);
    const other = await runCli(["sync", "--from", last30, "--to", to, "--out", out], env);
    assert.equal(other.code, 0, other.stderr);
    assert.match(other.stderr, /is for another sync .*; starting afresh/);
    const [, ...lines] = parseCsv(await readFile(out, "utf8"));
    assert.equal(lines.length, (await serviceTotals(region, last30, to)).rows);

    await appendFile(`${out}.lock`, `${process.pid}\n`);
    const locked = await runCli(["sync", "--from", last30, "--to", to, "--out", out], env);
    await rm(`${out}.lock`);
    assert.equal(locked.code, 1);
    assert.match(locked.stderr, new RegExp(`another sync to this file is running \\(pid ${process.pid}`));
  });
});
