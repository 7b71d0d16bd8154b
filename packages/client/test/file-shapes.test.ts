/**
 * One file shape per format, whichever command writes it (CONTRACT §7, last line): `export`,
 * `sync` and `mirror` run as processes against a real service write the same range into
 * byte-identical CSV and NDJSON and into Parquet files of one schema; a run refused before its
 * first byte leaves nothing on disk; on a pipe every command logs by one rule (progress.ts).
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  type CliRun,
  cliEnv,
  mirrorFiles,
  type RunningService,
  runCli,
  startService,
} from "@mdq/test-support";
import { parquetMetadataAsync, parquetReadObjects, parquetSchema } from "hyparquet";

const DAYS = 40;
const LOAD_HEADER =
  "record_id,date,market,data_source,channel,campaign_id,campaign_name,impressions,clicks,spend,conversions,revenue,currency";

/** A Parquet file's columns: name, physical and logical types, as a reader sees them. */
async function parquetColumns(path: string) {
  const bytes = await readFile(path);
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const metadata = await parquetMetadataAsync(file);
  return {
    columns: parquetSchema(metadata).children.map(({ element }) => ({
      name: element.name,
      type: element.type,
      repetition: element.repetition_type,
      convertedType: element.converted_type,
      logicalType: element.logical_type,
      precision: element.precision,
      scale: element.scale,
    })),
    rows: await parquetReadObjects({ file }),
  };
}

/** The mirror's day files of one format as one file: CSV's header once, then every day's rows. */
function joinedDays(files: Map<string, Buffer>, format: "csv" | "ndjson"): Buffer {
  const parts: Buffer[] = [];
  for (const [name, bytes] of files) {
    if (!name.endsWith(`records.${format}`)) continue;
    if (format === "ndjson" || parts.length === 0) parts.push(bytes);
    else parts.push(bytes.subarray(bytes.indexOf("\r\n") + 2));
  }
  return Buffer.concat(parts);
}

describe("one file shape per format, whichever command writes it", () => {
  let region: RunningService;
  let work: string;
  let env: NodeJS.ProcessEnv;
  let range: string[];
  const runs: CliRun[] = [];
  const run = async (args: string[], environment = env) => {
    const result = await runCli(args, environment);
    runs.push(result);
    return result;
  };

  before(async () => {
    region = await startService({ days: DAYS });
    work = await mkdtemp(join(tmpdir(), "mdq-file-shapes-"));
    env = cliEnv(region);
    range = ["--from", region.firstDay, "--to", region.lastDay];
    // Cells that need RFC 4180 quoting and formula neutralising, on two days of the range.
    const day = region.lastDay;
    const path = join(work, "odd-cells.csv");
    await writeFile(
      path,
      `${LOAD_HEADER}\n` +
        `=odd-1,${day},GB,google_ads,search,"c,1","=HYPERLINK(""http://x""),1",10,1,2.50,0.5,4.00,GBP\n` +
        `odd-2,${day},DE,meta_ads,social,@c-2,"-1+1 ""quoted""",20,2,3.35,1,8.25,EUR\n`,
    );
    const adminToken = (await readFile(join(region.service.config.dataDir, "admin-token"), "utf8")).trim();
    const loaded = await region.service.adminApp.inject({
      method: "POST",
      url: "/admin/loads",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      payload: JSON.stringify({ brandId: "brand-acme", path }),
    });
    assert.equal(loaded.statusCode, 200, loaded.body);
  });
  after(async () => {
    await region.close();
    await rm(work, { recursive: true, force: true });
  });

  for (const format of ["csv", "ndjson"] as const) {
    it(`export, sync and mirror write byte-identical ${format.toUpperCase()} for the same range`, async () => {
      const exported = join(work, `export.${format}`);
      const synced = join(work, `sync.${format}`);
      const mirrored = join(work, `mirror-${format}`);
      for (const args of [
        ["export", ...range, "--format", format, "--out", exported],
        ["sync", ...range, "--format", format, "--out", synced, "--window-days", "7"],
        ["sync", ...range, "--format", format, "--out", `${synced}.walked`, "--page-walk"],
        ["mirror", ...range, "--format", format, "--dir", mirrored],
      ]) {
        const result = await run(args);
        assert.equal(result.code, 0, `${args[0]}: ${result.stderr}`);
      }
      const expected = await readFile(exported);
      if (format === "csv") {
        const text = expected.toString("utf8");
        assert.equal(text.split("\r\n").length - 1, text.split("\n").length - 1, "every line ends in CRLF");
        assert.match(text, /\r\n"'=odd-1",|\r\n'=odd-1,/);
        assert.match(text, /,"'=HYPERLINK\(""http:\/\/x""\),1",/);
        assert.match(text, /,'@c-2,"'-1\+1 ""quoted""",/);
      }
      assert.ok((await readFile(synced)).equals(expected), "sync's file differs from export's");
      assert.ok((await readFile(`${synced}.walked`)).equals(expected), "sync --page-walk's file differs");
      assert.ok(joinedDays(await mirrorFiles(mirrored), format).equals(expected), "mirror's days differ");
    });
  }

  for (const currency of ["EUR", "JPY"]) {
    it(`export, sync and mirror write Parquet of one schema in ${currency}: DATE, BIGINT counts, DECIMAL money of the minor unit`, async () => {
      const exported = join(work, `export-${currency}.parquet`);
      const synced = join(work, `sync-${currency}.parquet`);
      const mirrored = join(work, `mirror-${currency}`);
      const money = ["--currency", currency, "--format", "parquet"];
      for (const args of [
        ["export", ...range, ...money, "--out", exported],
        ["sync", ...range, ...money, "--out", synced],
        ["mirror", ...range, ...money, "--dir", mirrored, "--from", region.lastDay],
      ]) {
        const result = await run(args);
        assert.equal(result.code, 0, `${args[0]}: ${result.stderr}`);
      }
      const want = await parquetColumns(exported);
      const scale = currency === "JPY" ? 0 : 2;
      const byName = Object.fromEntries(want.columns.map((column) => [column.name, column]));
      assert.deepEqual([byName["date"]!.type, byName["date"]!.convertedType], ["INT32", "DATE"]);
      assert.equal(byName["impressions"]!.type, "INT64");
      assert.equal(byName["clicks"]!.type, "INT64");
      assert.deepEqual(
        [byName["spend"]!.convertedType, byName["spend"]!.precision, byName["spend"]!.scale],
        ["DECIMAL", 18, scale],
      );
      assert.equal(byName["revenue"]!.scale, scale);
      const sync = await parquetColumns(synced);
      assert.deepEqual(sync.columns, want.columns);
      assert.deepEqual(sync.rows, want.rows);
      const day = await parquetColumns(join(mirrored, `date=${region.lastDay}`, "records.parquet"));
      assert.deepEqual(day.columns, want.columns);
      assert.deepEqual(
        day.rows,
        want.rows.filter((row) => (row as { date: Date }).date.toISOString().startsWith(region.lastDay)),
      );
    });
  }

  it("export and sync of no rows write Parquet of that same schema", async () => {
    const none = ["--format", "parquet", "--campaign-ids", "no-such-campaign"];
    const full = join(work, "export-EUR.parquet");
    const exported = join(work, "export-none.parquet");
    const synced = join(work, "sync-none.parquet");
    for (const args of [
      ["export", ...range, ...none, "--out", exported],
      ["sync", ...range, ...none, "--out", synced],
    ]) {
      const result = await run(args);
      assert.equal(result.code, 0, `${args[0]}: ${result.stderr}`);
    }
    const want = (await parquetColumns(full)).columns;
    assert.deepEqual((await parquetColumns(exported)).columns, want);
    assert.deepEqual((await parquetColumns(synced)).columns, want);
  });

  it("a mirror written in the earlier file shape (LF CSV) is copied again whole, so it never mixes two shapes", async () => {
    const dir = join(work, "old-shape");
    const first = await run(["mirror", ...range, "--dir", dir, "--json"]);
    assert.equal(first.code, 0, first.stderr);
    const statePath = join(dir, "_mdq_mirror.json");
    const { fileShape, ...oldState } = JSON.parse(await readFile(statePath, "utf8")) as { fileShape: number };
    assert.equal(fileShape, 2);
    await writeFile(statePath, JSON.stringify(oldState));
    const again = await run(["mirror", ...range, "--dir", dir, "--json"]);
    assert.equal(again.code, 0, again.stderr);
    const summary = JSON.parse(again.stdout) as { fullResync: boolean; daysDownloaded: number };
    assert.deepEqual([summary.fullResync, summary.daysDownloaded], [true, DAYS]);
  });

  it("a run refused before its first byte (bad flags, 403, wrong secret) leaves nothing on disk", async () => {
    const dir = await mkdtemp(join(work, "refused-"));
    const wrongSecret = cliEnv(region, { overrides: { MDQ_APP_CLIENT_SECRET: "not-the-secret-0123456789" } });
    // app-acme-uk may read GB only.
    const narrowed = cliEnv(region, { appIndex: 1 });
    const cases: { args: string[]; environment: NodeJS.ProcessEnv; code: number }[] = [];
    for (const [command, target] of [
      ["export", "--out"],
      ["sync", "--out"],
      ["mirror", "--dir"],
    ] as const) {
      const out = join(dir, command === "mirror" ? "mirror" : `${command}.csv`);
      const base = [command, ...range, "--format", "csv", target, out];
      cases.push(
        {
          args: [command, "--from", "2026-02-30", "--to", region.lastDay, target, out],
          environment: env,
          code: 2,
        },
        { args: base, environment: wrongSecret, code: 4 },
        { args: [...base, "--currency", "XXX"], environment: env, code: 7 },
      );
      if (command !== "mirror")
        cases.push({ args: [...base, "--markets", "DE"], environment: narrowed, code: 5 });
    }
    for (const { args, environment, code } of cases) {
      const result = await run(args, environment);
      assert.equal(result.code, code, `${args.join(" ")}: ${result.stderr}`);
      assert.deepEqual(await readdir(dir), [], `${args.join(" ")} left files`);
    }
  });

  it("mirror and sync of many days on a pipe print a handful of lines and a summary, not a line per day", async () => {
    const mirrored = await run(["mirror", ...range, "--format", "ndjson", "--dir", join(work, "piped")]);
    assert.equal(mirrored.code, 0, mirrored.stderr);
    const lines = mirrored.stderr.split("\n").filter((line) => line !== "");
    assert.ok(lines.length <= 3, `${lines.length} lines for ${DAYS} days:\n${mirrored.stderr}`);
    assert.match(lines[0]!, new RegExp(`^mdq-client: ${DAYS} days checked, \\d+ to download, 0 to remove`));
    assert.match(
      mirrored.stdout,
      new RegExp(`^mirrored .* ${DAYS} of ${DAYS} days downloaded, [\\d,]+ rows`),
    );

    const synced = await run(["sync", ...range, "--out", join(work, "piped.csv"), "--window-days", "1"]);
    assert.equal(synced.code, 0, synced.stderr);
    const syncLines = synced.stderr.split("\n").filter((line) => line !== "");
    assert.ok(syncLines.length <= 3, `${syncLines.length} lines for ${DAYS} windows:\n${synced.stderr}`);
    assert.match(
      syncLines.at(-1)!,
      new RegExp(`^mdq-client: wrote [\\d,]+ rows \\([\\d,]+ pages, ${DAYS} windows\\)`),
    );

    const exported = await run(["export", ...range, "--out", join(work, "piped.ndjson")]);
    assert.equal(exported.code, 0, exported.stderr);
    assert.match(exported.stderr, /^mdq-client: exported [\d,]+ rows \([\d,]+ bytes, data version \S+\) to /);
    assert.doesNotMatch(exported.stderr, /window|page/);
    assert.equal(existsSync(join(work, "piped.ndjson.partial")), false);
  });
});
