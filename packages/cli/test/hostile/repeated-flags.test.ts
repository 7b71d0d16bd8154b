/**
 * `mdq` flags given twice with different values (issue 20): a usage error (exit 2) for every
 * command, before any request, so `mdq load --replace sources --replace days` no longer takes
 * the last value silently and wipes rows. The same value twice, and `--map` (repeated on
 * purpose), still work.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runMdq, type ServeProcess, startServe } from "@mdq/test-support";

const HEADER =
  "record_id,date,market,data_source,channel,campaign_id,campaign_name,impressions,clicks,spend,conversions,revenue,currency";

describe("mdq flags given twice", () => {
  let work: string;
  let serve: ServeProcess;

  async function rows(): Promise<number> {
    const status = await runMdq(["status", "--json", "--data", serve.dataDir]);
    assert.equal(status.code, 0, status.stderr);
    const parsed = JSON.parse(status.stdout) as { brands: { brandId: string; rows: number }[] };
    return parsed.brands.find((brand) => brand.brandId === "brand-twice")!.rows;
  }

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "mdq-repeated-flags-"));
    serve = await startServe(join(work, "data"), {});
    const created = await runMdq([
      "brand",
      "create",
      "--id",
      "brand-twice",
      "--name",
      "Twice",
      "--data",
      serve.dataDir,
    ]);
    assert.equal(created.code, 0, created.stderr);
    // The GBP rows need a GBP rate on or before their day (docs/load-format.md).
    const fx = join(work, "fx.csv");
    await writeFile(fx, "date,currency,rate\n2026-03-01,GBP,0.85\n");
    const rated = await runMdq(["fx", "load", fx, "--data", serve.dataDir]);
    assert.equal(rated.code, 0, rated.stderr);
    const google = join(work, "google.csv");
    await writeFile(
      google,
      `${HEADER}\ng-1,2026-03-01,GB,google_ads,search,c-g,Google,100,5,10.00,1,20.00,GBP\ng-2,2026-03-01,GB,google_ads,search,c-g2,Google,100,5,10.00,1,20.00,GBP\n`,
    );
    const loaded = await runMdq(["load", google, "--brand", "brand-twice", "--data", serve.dataDir]);
    assert.equal(loaded.code, 0, loaded.stderr);
  });
  after(async () => {
    await serve.stop();
    await rm(work, { recursive: true, force: true });
  });

  it("refuses `load --replace sources --replace days` with exit 2 and changes nothing", async () => {
    const meta = join(work, "meta.csv");
    await writeFile(meta, `${HEADER}\nm-1,2026-03-01,GB,meta_ads,social,c-m,Meta,1,1,1.00,0,1.00,GBP\n`);
    for (const order of [
      ["sources", "days"],
      ["days", "sources"],
    ]) {
      const result = await runMdq([
        "load",
        meta,
        "--brand",
        "brand-twice",
        "--replace",
        order[0]!,
        "--replace",
        order[1]!,
        "--data",
        serve.dataDir,
      ]);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /--replace is given twice with different values/);
    }
    assert.equal(await rows(), 2);
  });

  it("refuses a flag repeated with another value on every command, and accepts the same value twice", async () => {
    for (const args of [
      ["brand", "create", "--id", "brand-a", "--id", "brand-b", "--name", "X"],
      ["grant", "add", "--brand", "brand-twice", "--brand", "brand-acme", "--markets", "GB"],
      ["status", "--data", serve.dataDir, "--data", work],
      ["publish", "--brand", "brand-twice", "--date", "2026-03-01", "--date", "2026-03-02"],
    ]) {
      const result = await runMdq([...args, ...(args.includes("--data") ? [] : ["--data", serve.dataDir])]);
      assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
      assert.match(result.stderr, /is given twice with different values/);
    }
    const same = await runMdq([
      "status",
      "--json",
      "--json",
      "--data",
      serve.dataDir,
      "--data",
      serve.dataDir,
    ]);
    assert.equal(same.code, 0, same.stderr);
  });
});
