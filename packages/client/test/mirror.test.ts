/**
 * `mdq-client mirror` as a process against a real service (CONTRACT §6): the first run copies
 * every day, later runs only the days that changed; after restatements, FX changes, grant and
 * narrowing changes and SIGKILLs, the copy's files are byte-identical to a fresh mirror's.
 */
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  addDays,
  assertSameMirrorFiles,
  type CliRun,
  cliEnv,
  mirrorFiles,
  type RunningService,
  runCli,
  serviceQuery,
  startCli,
  startService,
} from "@mdq/test-support";
import { parquetReadObjects } from "hyparquet";
import type { MirrorSummary } from "../src/index.js";

const DAYS = 60;
const HEADER =
  "record_id,date,market,data_source,channel,campaign_id,campaign_name,impressions,clicks,spend,conversions,revenue,currency";

/** Sends SIGKILL once `days` day files exist in `dir`; false if the process ended first. */
async function killWhenDays(child: ChildProcess, dir: string, days: number): Promise<boolean> {
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  while (!exited) {
    const folders = await readdir(dir).catch(() => [] as string[]);
    const written = folders.filter((name) => existsSync(join(dir, name, "records.ndjson"))).length;
    if (written >= days) {
      child.kill("SIGKILL");
      return true;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  return false;
}

describe("mdq-client mirror as a process", () => {
  let region: RunningService;
  let work: string;
  let env: NodeJS.ProcessEnv;
  let range: { from: string; to: string };
  let adminToken: string;
  const runs: CliRun[] = [];

  async function mirror(dir: string, extra: string[] = [], environment = env): Promise<MirrorSummary> {
    const result = await runCli(
      ["mirror", "--dir", dir, "--from", range.from, "--to", range.to, "--json", ...extra],
      environment,
    );
    runs.push(result);
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout) as MirrorSummary;
  }

  /** A fresh mirror of the same range into a new directory. */
  async function fresh(extra: string[] = [], environment = env): Promise<string> {
    const dir = await mkdtemp(join(work, "fresh-"));
    const summary = await mirror(dir, extra, environment);
    assert.equal(summary.fullResync, true);
    return dir;
  }

  async function admin(url: string, body: unknown): Promise<void> {
    const response = await region.service.adminApp.inject({
      method: "POST",
      url,
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      payload: JSON.stringify(body),
    });
    assert.equal(response.statusCode, 200, response.body);
  }

  async function restate(name: string, days: string[]): Promise<void> {
    const path = join(work, `${name}.csv`);
    const lines = days.flatMap((date) => [
      `${name}-${date}-1,${date},GB,google_ads,search,c-1,Restated "${name}",10,1,2.50,0.5,4.00,GBP`,
      `${name}-${date}-2,${date},DE,meta_ads,social,c-2,Restated,20,2,3.50,1,8.25,EUR`,
    ]);
    await writeFile(path, `${HEADER}\n${lines.join("\n")}\n`);
    await admin("/admin/loads", { brandId: "brand-acme", path });
  }

  async function changedDays(since: string): Promise<string[]> {
    const answer = await serviceQuery(
      region,
      `query($c: ID!, $r: DateRangeInput!, $s: String) {
        marketingDataChanges(clientId: $c, dateRange: $r, since: $s) { days { date } }
      }`,
      { c: "brand-acme", r: range, s: since },
    );
    return (answer.data["marketingDataChanges"] as { days: { date: string }[] }).days.map((day) => day.date);
  }

  before(async () => {
    region = await startService({ days: DAYS });
    work = await mkdtemp(join(tmpdir(), "mdq-mirror-"));
    env = cliEnv(region);
    range = { from: region.firstDay, to: region.lastDay };
    adminToken = (await readFile(join(region.service.config.dataDir, "admin-token"), "utf8")).trim();
  });
  after(async () => {
    await region.close();
    await rm(work, { recursive: true, force: true });
  });

  it("copies every day first, one Hive folder a day, rows ordered by recordId; a second run downloads nothing", async () => {
    const dir = join(work, "first");
    const first = await mirror(dir);
    assert.equal(first.daysChecked, DAYS);
    assert.equal(first.daysDownloaded, DAYS);
    assert.equal(first.fullResync, true);
    assert.match(first.dataVersion, /^uk\.\d+$/);
    const files = await mirrorFiles(dir);
    assert.equal(files.size, DAYS);
    let rows = 0;
    for (const [name, bytes] of files) {
      const [header, ...lines] = bytes.toString("utf8").trimEnd().split("\r\n");
      assert.equal(
        header,
        "recordId,date,market,dataSource,channel,campaignId,campaignName,impressions,clicks,spend,conversions,revenue,currency",
      );
      const ids = lines.map((line) => line.split(",")[0]!);
      assert.deepEqual(ids, [...ids].sort());
      assert.ok(lines.every((line) => line.split(",")[1] === name.slice(5, 15)));
      rows += lines.length;
    }
    assert.equal(rows, first.rows);
    const state = JSON.parse(await readFile(join(dir, "_mdq_mirror.json"), "utf8"));
    assert.equal(state.dataVersion, first.dataVersion);

    const second = await mirror(dir);
    assert.deepEqual(
      { ...second, seconds: 0 },
      {
        daysChecked: DAYS,
        daysDownloaded: 0,
        rows: 0,
        bytes: 0,
        seconds: 0,
        dataVersion: first.dataVersion,
        fullResync: false,
      },
    );
  });

  it("after restating 3 of 60 days downloads exactly those 3, and CSV and NDJSON match a fresh mirror byte for byte; Parquet holds the same rows", async () => {
    const csv = join(work, "restate-csv");
    const ndjson = join(work, "restate-ndjson");
    const parquet = join(work, "restate-parquet");
    const before = await mirror(csv);
    await mirror(ndjson, ["--format", "ndjson"]);
    await mirror(parquet, ["--format", "parquet"]);
    const days = [addDays(range.from, 3), addDays(range.from, 30), range.to];
    await restate("restate", days);
    assert.deepEqual(await changedDays(before.dataVersion), days);

    const after = await mirror(csv);
    assert.equal(after.daysDownloaded, 3);
    assert.equal(after.fullResync, false);
    assert.equal((await mirror(ndjson, ["--format", "ndjson"])).daysDownloaded, 3);
    assert.equal((await mirror(parquet, ["--format", "parquet"])).daysDownloaded, 3);
    await assertSameMirrorFiles(csv, await fresh());
    await assertSameMirrorFiles(ndjson, await fresh(["--format", "ndjson"]));
    const freshParquet = await fresh(["--format", "parquet"]);
    for (const day of days) {
      const read = async (dir: string) => {
        const bytes = await readFile(join(dir, `date=${day}`, "records.parquet"));
        return parquetReadObjects({
          file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
        });
      };
      const rows = await read(parquet);
      assert.equal(rows.length, 2, day);
      assert.deepEqual(rows, await read(freshParquet));
      assert.deepEqual(
        rows.map((row) => row["recordId"]),
        [`restate-${day}-1`, `restate-${day}-2`],
      );
    }
  });

  it("after an FX change of one GBP rate re-downloads that day and every later day, none before", async () => {
    const dir = join(work, "fx");
    await mirror(dir, ["--currency", "GBP"]);
    const changed = addDays(range.from, 50);
    const path = join(work, "fx.csv");
    await writeFile(path, `date,currency,rate\n${changed},GBP,0.91234\n`);
    await admin("/admin/fx", { path });
    const after = await mirror(dir, ["--currency", "GBP"]);
    assert.equal(after.daysDownloaded, DAYS - 50);
    await assertSameMirrorFiles(dir, await fresh(["--currency", "GBP"]));
  });

  it("after a grant removal copies everything again and holds no row of the removed market", async () => {
    const dir = join(work, "grants");
    await mirror(dir);
    await admin("/admin/grants/remove", { brandId: "brand-acme", markets: ["SE"] });
    const after = await mirror(dir);
    assert.equal(after.fullResync, true);
    assert.equal(after.daysDownloaded, DAYS);
    for (const bytes of (await mirrorFiles(dir)).values()) assert.doesNotMatch(bytes.toString(), /,SE,/);
    await assertSameMirrorFiles(dir, await fresh());
  });

  it("after the app is narrowed copies everything again with only what the app may read", async () => {
    const narrowed = region.credentials.apps.findIndex((app) => app.appClientId === "app-acme-uk");
    const appEnv = cliEnv(region, { appIndex: narrowed });
    const dir = join(work, "narrowed");
    await mirror(dir, [], appEnv);
    await admin("/admin/apps/app-acme-uk/narrow", { dataSources: ["google_ads"] });
    const after = await mirror(dir, [], appEnv);
    assert.equal(after.fullResync, true);
    for (const bytes of (await mirrorFiles(dir)).values())
      assert.doesNotMatch(bytes.toString(), /,meta_ads,/);
    await assertSameMirrorFiles(dir, await fresh([], appEnv));
  });

  it("removes a day a restatement emptied", async () => {
    const dir = join(work, "emptied");
    await mirror(dir);
    const day = addDays(range.from, 10);
    // Only a market outside the grants left on the day: nothing visible.
    const path = join(work, "emptied.csv");
    await writeFile(
      path,
      `${HEADER}\nhidden-${day},${day},ES,google_ads,search,c-1,Hidden,1,1,1.00,0,1.00,EUR\n`,
    );
    await admin("/admin/loads", { brandId: "brand-acme", path });
    await mirror(dir);
    assert.equal(existsSync(join(dir, `date=${day}`)), false);
    await assertSameMirrorFiles(dir, await fresh());
  });

  for (const seed of [3, 17, 41]) {
    it(`converges to a fresh mirror's bytes after a SIGKILL mid-run (seed ${seed})`, async () => {
      const dir = join(work, `killed-${seed}`);
      // Kill once `seed` day files exist: inside a batch (files written, state not yet) or between.
      const run = startCli(
        ["mirror", "--dir", dir, "--from", range.from, "--to", range.to, "--format", "ndjson", "--json"],
        env,
      );
      const killed = await killWhenDays(run.child, dir, seed);
      const result = await run.done;
      assert.ok(killed, "the run ended before it was killed");
      assert.equal(result.signal, "SIGKILL");
      await restate(`kill${seed}`, [addDays(range.from, seed % DAYS)]);
      const again = await mirror(dir, ["--format", "ndjson"]);
      assert.ok(again.daysDownloaded >= 1);
      await assertSameMirrorFiles(dir, await fresh(["--format", "ndjson"]));
      assert.deepEqual((await readdir(join(dir, `date=${addDays(range.from, seed % DAYS)}`))).sort(), [
        "records.ndjson",
      ]);
    });
  }

  it("never shows the secret in its output", () => {
    const secret = String(env["MDQ_APP_CLIENT_SECRET"]);
    for (const run of runs) assert.ok(!`${run.stdout}${run.stderr}`.includes(secret));
  });
});
