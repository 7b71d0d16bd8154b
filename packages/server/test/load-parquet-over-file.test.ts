/**
 * A Parquet load on the DuckDB store staged as a view over its file (load/record-staging.ts
 * `StagingOptions.overFile`): the file's rows are read again by each statement of the load rather
 * than written into a table first, so a file that changes, or goes, between the checks and the
 * final transaction must load nothing and say why; and the view's rows load as a table's would:
 * days interleaved in the file, a path holding quotes and SQL.
 */
import assert from "node:assert/strict";
import { copyFileSync, unlinkSync } from "node:fs";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { RecordsFileError } from "../src/load/load-errors.js";
import { type LoadPhase, LoadProgressReporter } from "../src/load/load-progress.js";
import { checkRecordsRequest } from "../src/load/records-file.js";
import { loadRecordsFile } from "../src/load/records-load.js";
import { type DuckDbStore, openDuckDbStore } from "../src/store/duckdb/duckdb-store.js";

const HEADER =
  "record_id,date,market,data_source,channel,campaign_id,campaign_name,impressions,clicks,spend,conversions,revenue,currency";

/** CSV lines of `rows` records over `days` days from 2025-03-01, the days interleaved row by row. */
function recordLines(name: string, rows: number, days: number, firstDay = 1): string[] {
  return Array.from({ length: rows }, (_, index) => {
    const day = `2025-03-${String(firstDay + (index % days)).padStart(2, "0")}`;
    return `${name}-${index},${day},GB,google_ads,search,c-${index},${name},10,1,2.50,0.5,4.00,EUR`;
  });
}

async function writeCsv(path: string, lines: string[]): Promise<string> {
  await writeFile(path, `${[HEADER, ...lines].join("\n")}\n`);
  return path;
}

/** The same records as Parquet, written by DuckDB's own COPY from a CSV beside it. */
async function writeParquet(path: string, lines: string[]): Promise<string> {
  const source = await writeCsv(`${path}.csv`, lines);
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    await connection.run(
      `COPY (SELECT * FROM read_csv('${source.replaceAll("'", "''")}', all_varchar = true))
        TO '${path.replaceAll("'", "''")}' (FORMAT parquet)`,
    );
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  return path;
}

describe("a Parquet load staged over its file (DuckDB)", () => {
  let work: string;
  let store: DuckDbStore;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "mdq-parquet-over-file-"));
    store = await openDuckDbStore(join(work, "data"));
  });
  after(async () => {
    await store.close();
    await rm(work, { recursive: true, force: true });
  });

  /** Loads `path` for `brandId`; `onPhase` runs when the load reaches each phase. */
  async function load(brandId: string, path: string, onPhase: (phase: LoadPhase) => void = () => {}) {
    const progress = new LoadProgressReporter((report) => onPhase(report.phase), (await stat(path)).size);
    return loadRecordsFile(
      store,
      brandId,
      await checkRecordsRequest(path),
      { processingDate: "2025-04-01", source: path },
      { progress },
    );
  }

  /** A brand holding 300 records of 2025-03-01..03 (a CSV load): what a failed load must leave. */
  async function brandWithData(brandId: string) {
    await store.createBrand({ brandId, name: brandId, createdAt: new Date() });
    await load(brandId, await writeCsv(join(work, `${brandId}-previous.csv`), recordLines("old", 300, 3)));
    const status = await store.brandDataStatus(brandId);
    assert.deepEqual([status.rows, status.firstDay, status.lastDay], [300, "2025-03-01", "2025-03-03"]);
    return status;
  }

  it("loads the file's rows, its days interleaved, replacing the days it holds", async () => {
    await brandWithData("brand-a");
    const path = await writeParquet(join(work, "a.parquet"), recordLines("new", 500, 5));
    const summary = await load("brand-a", path);
    assert.deepEqual(
      [summary.rows, summary.days, summary.from, summary.to],
      [500, 5, "2025-03-01", "2025-03-05"],
    );
    const status = await store.brandDataStatus("brand-a");
    assert.deepEqual([status.rows, status.firstDay, status.lastDay], [500, "2025-03-01", "2025-03-05"]);
  });

  it("loads a file whose path holds quotes and SQL: the path is a quoted literal of the view", async () => {
    await brandWithData("brand-q");
    const path = await writeParquet(
      join(work, "it's'); DROP TABLE records; --.parquet"),
      recordLines("q", 40, 2),
    );
    assert.equal((await load("brand-q", path)).rows, 40);
    // 2025-03-03 is not in the file: its 100 previous records stay.
    assert.equal((await store.brandDataStatus("brand-q")).rows, 140);
  });

  it("loads nothing from a file rewritten after its checks, says why, and loads it once it is written", async () => {
    const previous = await brandWithData("brand-r");
    const path = await writeParquet(join(work, "r.parquet"), recordLines("checked", 500, 5));
    const rewrite = await writeParquet(join(work, "r-rewrite.parquet"), recordLines("unchecked", 50, 1, 9));
    let rewritten = false;
    await assert.rejects(
      load("brand-r", path, (phase) => {
        if (phase !== "replacing" || rewritten) return;
        rewritten = true;
        // In place, as `cp` rewrites a file: same inode, new bytes.
        copyFileSync(rewrite, path);
      }),
      (error: unknown) =>
        error instanceof RecordsFileError &&
        error.errors[0]?.line === 0 &&
        /the file changed while it was loaded/.test(error.errors[0]?.message ?? ""),
    );
    assert.ok(rewritten, "the load never reached its final transaction");
    assert.deepEqual(await store.brandDataStatus("brand-r"), previous);
    // Written and left alone, the same path loads.
    assert.equal((await load("brand-r", path)).rows, 50);
    assert.equal((await store.brandDataStatus("brand-r")).rows, 350);
  });

  it("loads nothing from a file removed after its checks, and says why", async () => {
    const previous = await brandWithData("brand-g");
    const path = await writeParquet(join(work, "g.parquet"), recordLines("gone", 500, 5));
    await assert.rejects(
      load("brand-g", path, (phase) => {
        if (phase === "replacing") unlinkSync(path);
      }),
      (error: unknown) =>
        error instanceof RecordsFileError && /the file changed while it was loaded/.test(error.message),
    );
    assert.deepEqual(await store.brandDataStatus("brand-g"), previous);
  });
});
