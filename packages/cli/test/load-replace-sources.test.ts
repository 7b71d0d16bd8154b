/**
 * `mdq load --replace sources` as processes against `mdq serve` (issue 12): platforms restated on
 * their own schedules keep each other's rows; `--replace days` (the default) replaces whole days.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runMdq, type ServeProcess, startServe } from "@mdq/test-support";

const HEADER =
  "record_id,date,market,data_source,channel,campaign_id,campaign_name,impressions,clicks,spend,conversions,revenue,currency";

describe("mdq load --replace sources", () => {
  let work: string;
  let serve: ServeProcess;

  async function mdq(args: string[]): Promise<string> {
    const result = await runMdq([...args, "--data", serve.dataDir]);
    assert.equal(result.code, 0, result.stderr);
    return result.stdout;
  }

  /** The brand's stored rows, from `mdq status --json`. */
  async function rows(): Promise<number> {
    const status = JSON.parse(await mdq(["status", "--json"])) as {
      brands: { brandId: string; rows: number }[];
    };
    return status.brands.find((brand) => brand.brandId === "brand-multi")!.rows;
  }

  async function load(name: string, lines: string[], replace?: string): Promise<void> {
    const path = join(work, `${name}.csv`);
    await writeFile(path, `${HEADER}\n${lines.join("\n")}\n`);
    await mdq(["load", path, "--brand", "brand-multi", ...(replace ? ["--replace", replace] : [])]);
  }

  const google = (day: string, n: number) =>
    `g-${day}-${n},${day},GB,google_ads,search,c-g${n},Google,100,5,10.00,1,20.00,GBP`;
  const meta = (day: string, n: number, tag = "") =>
    `m-${day}-${n}${tag},${day},GB,meta_ads,social,c-m${n},Meta,200,8,12.00,2,30.00,GBP`;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "mdq-replace-sources-"));
    serve = await startServe(join(work, "data"), {});
    await mdq(["brand", "create", "--id", "brand-multi", "--name", "Multi"]);
  });
  after(async () => {
    await serve.stop();
    await rm(work, { recursive: true, force: true });
  });

  it("keeps Google's rows when Meta's file of the same days is loaded, and restates Meta alone", async () => {
    const days = ["2026-03-01", "2026-03-02"];
    await load(
      "google",
      days.flatMap((day) => [google(day, 1), google(day, 2), google(day, 3)]),
      "sources",
    );
    assert.equal(await rows(), 6);
    await load(
      "meta",
      days.flatMap((day) => [meta(day, 1), meta(day, 2)]),
      "sources",
    );
    assert.equal(await rows(), 10);
    // Meta restates the first day with one row: Google's 3 rows of that day stay.
    await load("meta-restated", [meta(days[0]!, 1, "-r")], "sources");
    assert.equal(await rows(), 9);
  });

  it("replaces whole days by default, as documented", async () => {
    await load("whole-day", [meta("2026-03-02", 9)]);
    // 2026-03-02 held 3 Google + 2 Meta rows; now only the loaded one.
    assert.equal(await rows(), 5);
  });

  it("refuses a record id that names a row the load leaves alone, and changes nothing", async () => {
    const path = join(work, "clash.csv");
    // g-2026-03-01-1 is Google's row on 2026-03-01, which a Meta-only load leaves alone.
    await writeFile(
      path,
      `${HEADER}\ng-2026-03-01-1,2026-03-01,GB,meta_ads,social,c-x,Clash,1,1,1.00,0,1.00,GBP\n`,
    );
    const result = await runMdq([
      "load",
      path,
      "--brand",
      "brand-multi",
      "--replace",
      "sources",
      "--data",
      serve.dataDir,
    ]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /g-2026-03-01-1/);
    assert.equal(await rows(), 5);
  });

  it("refuses an unknown --replace scope with a usage error", async () => {
    const result = await runMdq([
      "load",
      join(work, "meta.csv"),
      "--brand",
      "brand-multi",
      "--replace",
      "everything",
    ]);
    assert.equal(result.code, 2, result.stderr);
    assert.match(
      result.stderr,
      /--replace <scope>.*everything.*days, sources|Allowed choices are days, sources/,
    );
  });
});
