/**
 * Loads keep every reader whole (issue 57, CONTRACT §3 rule 7): a load refuses a row whose
 * currency has no FX rate on or before its day, naming the line, the currency and the day, and
 * changes nothing; rows an older release let in are reported when the service starts and by
 * `GET /admin/status`; an FX change only adds or replaces rates, so it never leaves a stored day
 * without one. On both stores, through the admin API.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { after, before, describe, it } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { loadConfig } from "../src/config.js";
import { buildService, type Service } from "../src/server.js";
import { openDuckDbStore } from "../src/store/duckdb/duckdb-store.js";
import type { Store, StoredRecord } from "../src/store/model/store.js";
import { adminInject } from "./admin-harness.js";
import { postgresEngine } from "./changes-harness.js";
import { ownCampaignRecord } from "./stored-records.js";

const HEADER =
  "record_id,date,market,data_source,channel,campaign_id,campaign_name,impressions,clicks,spend,conversions,revenue,currency";
/** A brand whose rows an older release loaded without rates. */
const OLD = "brand-old";
/** A brand whose rows all have rates. */
const FINE = "brand-fine";

function stored(recordId: string, date: string, currency: StoredRecord["currency"]): StoredRecord {
  return ownCampaignRecord(recordId, date, "Spring", {
    impressions: 10,
    clicks: 1,
    spendE4: 12_3400n,
    revenueE4: 20_0000n,
    currency,
  });
}

function csvLine(recordId: string, date: string, currency: string): string {
  return `${recordId},${date},GB,google_ads,search,c-${recordId},Spring,10,1,12.34,0,20,${currency}`;
}

const LOAD_ADVICE = "load the rates first (mdq fx load), then this file";

for (const engine of ["duckdb", "postgres"] as const) {
  describe(`loads and FX rates keep every reader whole (${engine})`, () => {
    const postgres = postgresEngine("fx_coverage");
    let work: string;
    let store: Store;
    let service: Service;
    let adminToken: string;
    let log = "";

    const admin = (method: "GET" | "POST", url: string, body?: unknown) =>
      adminInject(service, `Bearer ${adminToken}`, method, url, body);
    const statusOf = async (brandId: string) => {
      const answer = await admin("GET", "/admin/status");
      assert.equal(answer.statusCode, 200, answer.body);
      const { brands } = answer.json() as {
        brands: { brandId: string; rows: number; unreadableDays: unknown[] }[];
      };
      return brands.find((brand) => brand.brandId === brandId)!;
    };
    /** Loads `path` into FINE and expects it refused (422 INVALID_FILE) for exactly `details`. */
    const refusedLoad = async (path: string, details: Record<string, unknown>[]) => {
      const answer = await admin("POST", "/admin/loads", { brandId: FINE, path });
      assert.equal(answer.statusCode, 422, answer.body);
      assert.deepEqual(answer.json(), {
        error: {
          code: "INVALID_FILE",
          message: `${details.length} problem(s) in ${path}; nothing was changed`,
          details,
        },
      });
    };
    const write = async (name: string, lines: string[]) => {
      const path = join(work, name);
      await writeFile(path, `${lines.join("\n")}\n`);
      return path;
    };

    before(async () => {
      work = await mkdtemp(join(tmpdir(), "mdq-fx-coverage-"));
      const dataDir = join(work, "data");
      store = engine === "duckdb" ? await openDuckDbStore(dataDir) : await postgres.open();
      // GBP rates from 2026-03-02 on; no CHF rate at all.
      await store.upsertFxRates([
        { currency: "GBP", date: "2026-03-02", rateE6: 850_000n },
        { currency: "GBP", date: "2026-03-03", rateE6: 860_000n },
      ]);
      // As an older release's load let them in: straight into the store, past no check.
      await store.replaceRecords(OLD, [
        stored("o-1", "2026-03-01", "CHF"),
        stored("o-2", "2026-03-03", "CHF"),
        stored("o-3", "2026-03-01", "GBP"),
        stored("o-4", "2026-03-05", "GBP"),
        stored("o-5", "2026-03-01", "EUR"),
      ]);
      await store.replaceRecords(FINE, [
        stored("f-1", "2026-03-01", "EUR"),
        stored("f-2", "2026-03-02", "GBP"),
      ]);
      const logStream = new PassThrough();
      logStream.on("data", (chunk: Buffer) => {
        log += chunk.toString();
      });
      const config = loadConfig(
        {},
        {
          dataDir,
          logLevel: "warn",
          ...(engine === "postgres" ? { databaseUrl: postgres.databaseUrl() } : {}),
        },
      );
      service = await buildService(config, { store, logStream });
      adminToken = (await readFile(join(dataDir, "admin-token"), "utf8")).trim();
      for (const brandId of [OLD, FINE]) {
        const created = await admin("POST", "/admin/brands", { brandId, name: brandId });
        assert.equal(created.statusCode, 201, created.body);
      }
    });
    after(async () => {
      await service?.app.close();
      await store?.close();
      await postgres.cleanup();
      await rm(work, { recursive: true, force: true });
    });

    it("warns at start-up of every brand, currency and day that no read can convert", () => {
      const warnings = log
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line["level"] === 40);
      assert.equal(warnings.length, 1, log);
      const [warning] = warnings;
      assert.equal(
        warning!["msg"],
        "stored records have no FX rate on or before their day, so every read over those days fails for their brand (UNSUPPORTED_CURRENCY): " +
          "brand-old: CHF records on 2 days 2026-03-01..2026-03-03 (the region holds no CHF rates); " +
          "brand-old: GBP records on 1 day 2026-03-01 (GBP rates start on 2026-03-02); " +
          "load the missing rates with mdq fx load (mdq status lists these days)",
      );
      assert.deepEqual(warning!["brands"], [OLD]);
    });

    it("GET /admin/status lists the days each brand cannot read, per currency", async () => {
      assert.deepEqual((await statusOf(OLD)).unreadableDays, [
        { currency: "CHF", firstRate: null, from: "2026-03-01", to: "2026-03-03", days: 2 },
        { currency: "GBP", firstRate: "2026-03-02", from: "2026-03-01", to: "2026-03-01", days: 1 },
      ]);
      assert.deepEqual((await statusOf(FINE)).unreadableDays, []);
    });

    it("refuses a CSV row whose currency has no rate on or before its day, naming line, currency and day; nothing changes", async () => {
      const path = await write("no-rate.csv", [
        HEADER,
        csvLine("n-1", "2026-03-02", "GBP"),
        csvLine("n-2", "2026-03-01", "CHF"),
        csvLine("n-3", "2026-03-04", "EUR"),
        csvLine("n-4", "2026-03-01", "GBP"),
      ]);
      await refusedLoad(path, [
        {
          line: 3,
          position: "line",
          column: "currency",
          message: `no CHF reference rate on or before 2026-03-01 (the region holds no CHF rates): ${LOAD_ADVICE}`,
        },
        {
          line: 5,
          position: "line",
          column: "currency",
          message: `no GBP reference rate on or before 2026-03-01 (GBP rates start on 2026-03-02): ${LOAD_ADVICE}`,
        },
      ]);
      const status = await statusOf(FINE);
      assert.equal(status.rows, 2, "nothing was loaded");
      assert.deepEqual(status.unreadableDays, []);
    });

    it("refuses the same row in NDJSON and in Parquet (its row number)", async () => {
      const record = (recordId: string, date: string, currency: string) =>
        JSON.stringify({
          record_id: recordId,
          date,
          market: "GB",
          data_source: "google_ads",
          channel: "search",
          campaign_id: `c-${recordId}`,
          campaign_name: "Spring",
          impressions: 10,
          clicks: 1,
          spend: "12.34",
          conversions: "0",
          revenue: "20",
          currency,
        });
      const ndjson = await write("no-rate.ndjson", [
        record("j-1", "2026-03-02", "EUR"),
        record("j-2", "2026-02-28", "CHF"),
      ]);
      const parquet = join(work, "no-rate.parquet");
      const instance = await DuckDBInstance.create(":memory:");
      const connection = await instance.connect();
      try {
        await connection.run(
          `COPY (SELECT * FROM read_csv('${await write("for-parquet.csv", [
            HEADER,
            csvLine("p-1", "2026-03-02", "GBP"),
            csvLine("p-2", "2026-03-01", "GBP"),
          ])}', header = true, all_varchar = true)) TO '${parquet}' (FORMAT parquet)`,
        );
      } finally {
        connection.closeSync();
        instance.closeSync();
      }
      const cases = [
        {
          path: ndjson,
          detail: {
            line: 2,
            position: "line",
            column: "currency",
            message: `no CHF reference rate on or before 2026-02-28 (the region holds no CHF rates): ${LOAD_ADVICE}`,
          },
        },
        {
          path: parquet,
          detail: {
            line: 2,
            position: "row",
            column: "currency",
            message: `no GBP reference rate on or before 2026-03-01 (GBP rates start on 2026-03-02): ${LOAD_ADVICE}`,
          },
        },
      ];
      for (const { path, detail } of cases) {
        await refusedLoad(path, [detail]);
      }
      assert.equal((await statusOf(FINE)).rows, 2, "nothing was loaded");
    });

    it("accepts a row whose currency's latest rate is from an earlier day", async () => {
      const path = await write("rated.csv", [HEADER, csvLine("r-1", "2026-03-09", "GBP")]);
      const answer = await admin("POST", "/admin/loads", { brandId: FINE, path });
      assert.equal(answer.statusCode, 200, answer.body);
      assert.deepEqual((await statusOf(FINE)).unreadableDays, []);
    });

    it("an FX change only adds or replaces rates: the operator's CHF rates make the days readable and the file loadable", async () => {
      // New values for days that had rates: every covered day stays covered.
      const changed = await write("fx-changed.csv", ["date,currency,rate", "2026-03-02,GBP,0.9"]);
      assert.equal((await admin("POST", "/admin/fx", { path: changed })).statusCode, 200);
      assert.equal((await statusOf(OLD)).unreadableDays.length, 2);

      const fx = await write("fx-chf.csv", [
        "date,currency,rate",
        "2026-02-27,CHF,0.95",
        "2026-03-01,GBP,0.84",
      ]);
      const loaded = await admin("POST", "/admin/fx", { path: fx });
      assert.equal(loaded.statusCode, 200, loaded.body);
      assert.deepEqual((await statusOf(OLD)).unreadableDays, []);

      const path = await write("now-rated.csv", [HEADER, csvLine("c-1", "2026-03-01", "CHF")]);
      const answer = await admin("POST", "/admin/loads", { brandId: FINE, path });
      assert.equal(answer.statusCode, 200, answer.body);
    });
  });
}
