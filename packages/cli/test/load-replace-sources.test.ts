/**
 * `mdq load --replace sources` as processes against `mdq serve` (issue 12): platforms restated on
 * their own schedules keep each other's rows; `--replace days` (the default) replaces whole days.
 * On both stores: PostgreSQL copies a checked file straight into `records` beside its rollup and
 * record ids (issue 19), DuckDB stages it; the record-id clash check runs only when a load leaves
 * rows of the brand, and a reload of every day leaves none.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  createTestDatabase,
  runMdq,
  type ServeProcess,
  startServe,
  type TestDatabase,
} from "@mdq/test-support";

const HEADER =
  "record_id,date,market,data_source,channel,campaign_id,campaign_name,impressions,clicks,spend,conversions,revenue,currency";

for (const store of ["duckdb", "postgres"] as const)
  describe(`mdq load --replace sources (${store})`, () => {
    let work: string;
    let serve: ServeProcess;
    let database: TestDatabase | undefined;
    let env: NodeJS.ProcessEnv = {};

    async function mdq(args: string[]): Promise<string> {
      const result = await runMdq([...args, "--data", serve.dataDir], env);
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
      if (store === "postgres") {
        database = await createTestDatabase("replace_sources");
        env = { MDQ_DATABASE_URL: database.url };
        const migrated = await runMdq(["migrate"], env);
        assert.equal(migrated.code, 0, migrated.stderr);
      }
      serve = await startServe(join(work, "data"), env);
      await mdq(["brand", "create", "--id", "brand-multi", "--name", "Multi"]);
      // The GBP rows need a GBP rate on or before their days (docs/load-format.md).
      const fx = join(work, "fx.csv");
      await writeFile(fx, "date,currency,rate\n2026-03-01,GBP,0.85\n");
      await mdq(["fx", "load", fx]);
    });
    after(async () => {
      await serve.stop();
      await database?.drop();
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
      const result = await runMdq(
        ["load", path, "--brand", "brand-multi", "--replace", "sources", "--data", serve.dataDir],
        env,
      );
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /g-2026-03-01-1/);
      assert.equal(await rows(), 5);
    });

    it("reloads every day of the brand with record ids moved between the days, leaving nothing to clash with", async () => {
      // The brand holds 2026-03-01 (3 Google, 1 Meta) and 2026-03-02 (1 Meta): a file of both days
      // replaces them all, so an id may move from one day to the other.
      await load("every-day", [
        google("2026-03-02", 1).replace("g-2026-03-02-1", "g-2026-03-01-1"),
        meta("2026-03-01", 9),
      ]);
      assert.equal(await rows(), 2);
      const result = await runMdq(
        ["load", join(work, "every-day.csv"), "--brand", "brand-multi", "--json", "--data", serve.dataDir],
        env,
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal((JSON.parse(result.stdout) as { rows: number }).rows, 2);
      assert.equal(await rows(), 2);
    });

    it("refuses an unknown --replace scope with a usage error", async () => {
      const result = await runMdq(
        ["load", join(work, "meta.csv"), "--brand", "brand-multi", "--replace", "everything"],
        env,
      );
      assert.equal(result.code, 2, result.stderr);
      assert.match(
        result.stderr,
        /--replace <scope>.*everything.*days, sources|Allowed choices are days, sources/,
      );
    });
  });
