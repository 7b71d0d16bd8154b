/**
 * A file load that runs out of DuckDB's memory answers 503 `UNAVAILABLE` with a message that says
 * so, on both stores, and changes nothing: not 500 `INTERNAL`, and not 422 `INVALID_FILE` for a
 * file that is fine (the fast path no longer takes the failure for a problem of the file and reads
 * it again). In service a load runs out of memory when reads hold what it would spill with; here
 * the load's limit is set to 24 MB, below the configuration's floor (64 MB), where DuckDB cannot
 * read a 20 MB CSV at all (its reader wants a buffer of the file's size, up to 32 MB).
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { loadConfig } from "../src/config.js";
import { buildService, type Service } from "../src/server.js";
import { openDuckDbStore } from "../src/store/duckdb/duckdb-store.js";
import type { Store } from "../src/store/model/store.js";
import { adminInject } from "./admin-harness.js";
import { postgresEngine } from "./changes-harness.js";

/** The load's DuckDB limit: past the configuration's floor, set on the store and the config. */
const LOAD_MEMORY_MB = 24;
const BRAND = "brand-oom";

/** `rows` valid records, one per (day, campaign), as a load CSV at `path`, written by DuckDB. */
async function writeRecordsCsv(path: string, rows: number): Promise<void> {
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    await connection.run(
      `COPY (SELECT 'r-' || i AS record_id, DATE '2020-03-01' + CAST(i % 20 AS INTEGER) AS date, 'DE' AS market,
          'google_ads' AS data_source, 'search' AS channel, 'c-' || (i // 20) AS campaign_id,
          'A campaign named at some length, as they are' AS campaign_name, 1000 + i % 7 AS impressions,
          10 AS clicks, 12.5 AS spend, 1 AS conversions, 30.25 AS revenue, 'EUR' AS currency
        FROM range(${rows}) t(i)) TO '${path}' (HEADER)`,
    );
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

for (const engine of ["duckdb", "postgres"] as const) {
  describe(`a load out of memory (${engine})`, () => {
    const postgres = postgresEngine("load_oom");
    let work: string;
    let store: Store;
    let service: Service;
    let adminToken: string;

    const admin = (method: "GET" | "POST", url: string, body?: unknown) =>
      adminInject(service, `Bearer ${adminToken}`, method, url, body);
    const storedRows = async () =>
      (
        (await admin("GET", "/admin/status")).json() as { brands: { brandId: string; rows: number }[] }
      ).brands.find((brand) => brand.brandId === BRAND)?.rows;

    before(async () => {
      work = await mkdtemp(join(tmpdir(), "mdq-load-oom-"));
      const dataDir = join(work, "data");
      store =
        engine === "duckdb"
          ? await openDuckDbStore(dataDir, { loadMemoryMb: LOAD_MEMORY_MB })
          : await postgres.open();
      const config = loadConfig(
        {},
        {
          dataDir,
          logLevel: "silent",
          ...(engine === "postgres" ? { databaseUrl: postgres.databaseUrl() } : {}),
        },
      );
      service = await buildService({ ...config, loadMemoryMb: LOAD_MEMORY_MB }, { store });
      adminToken = (await readFile(join(dataDir, "admin-token"), "utf8")).trim();
      assert.equal((await admin("POST", "/admin/brands", { brandId: BRAND, name: "OOM" })).statusCode, 201);
      // One record, loaded from JavaScript (no DuckDB load on the way).
      await store.replaceRecords(BRAND, [
        {
          recordId: "r-kept",
          date: "2020-03-01",
          market: "DE",
          dataSource: "google_ads",
          channel: "search",
          campaignId: "c-1",
          campaignName: "Kept",
          impressions: 10,
          clicks: 1,
          spendE4: 25_000n,
          conversionsE4: 0n,
          revenueE4: 30_000n,
          currency: "EUR",
        },
      ]);
    });
    after(async () => {
      await service?.app.close();
      await store?.close();
      await postgres.cleanup();
      await rm(work, { recursive: true, force: true });
    });

    it("answers 503 UNAVAILABLE naming MDQ_LOAD_MEMORY_MB for a file it has no memory to read, and changes nothing", async () => {
      const path = join(work, "large.csv");
      await writeRecordsCsv(path, 200_000);
      const answer = await admin("POST", "/admin/loads", { brandId: BRAND, path });
      assert.equal(answer.statusCode, 503, answer.body);
      assert.deepEqual(answer.json(), {
        error: {
          code: "UNAVAILABLE",
          message:
            `the load ran out of memory: DuckDB needed more than MDQ_LOAD_MEMORY_MB (${LOAD_MEMORY_MB} MB) leaves ` +
            "it beside what reads hold meanwhile; nothing was changed: load again when fewer reads run, or " +
            "raise MDQ_LOAD_MEMORY_MB",
        },
      });
      assert.equal(await storedRows(), 1);
    });
  });
}
