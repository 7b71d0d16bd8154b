/**
 * Reading marketing records files for `mdq load` (CONTRACT §4, docs/load-format.md): CSV, NDJSON
 * and Parquet files round-trip exactly (amounts as bigint ten-thousandths).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { describe, it } from "node:test";
import { readRecordsFile } from "../src/load/records-file.js";
import type { StoredRecord } from "../src/store/model/store.js";
import * as fixtures from "./records-file-fixtures.js";

describe("readRecordsFile", () => {
  fixtures.useFixtureDir();

  describe("good files", () => {
    it("reads a CSV file in file order with exact ten-thousandth amounts", async () => {
      const path = await fixtures.write(
        "csv",
        [
          fixtures.HEADER,
          fixtures.csvLine(),
          fixtures.csvLine({
            record_id: "r-2",
            date: "2026-02-28",
            market: "JP",
            campaign_id: "c-2",
            campaign_name: 'Quote "and", comma\nand a new line',
            impressions: "2147483647",
            clicks: "2147483647",
            spend: "100000000000000",
            conversions: "0.0001",
            revenue: "1.50000000",
            currency: "JPY",
          }),
          fixtures.csvLine({
            record_id: "r-3",
            campaign_id: "c-3",
            impressions: "0",
            clicks: "7",
            spend: "0",
            conversions: "007.10",
            revenue: "12.3456",
          }),
          // Amounts of 10^10 and more: their ten-thousandths overflow a DECIMAL(18,4) (records-reader.ts `tenThousandths`).
          fixtures.csvLine({
            record_id: "r-4",
            campaign_id: "c-4",
            impressions: "12.000",
            spend: "10000000000",
            conversions: "99999999999999.9999",
            revenue: "0012345678901.2340000",
          }),
          "",
        ].join("\n"),
      );
      const { file, records } = await fixtures.readAll(path);
      assert.equal(file.format, "csv");
      assert.equal(file.rowCount, 4);
      assert.deepEqual(file.days, ["2026-02-28", "2026-03-01"]);
      assert.deepEqual(records, [
        fixtures.EXPECTED_GOOD,
        {
          recordId: "r-2",
          date: "2026-02-28",
          market: "JP",
          dataSource: "google_ads",
          channel: "search",
          campaignId: "c-2",
          campaignName: 'Quote "and", comma\nand a new line',
          impressions: 2147483647,
          clicks: 2147483647,
          spendE4: 1_000_000_000_000_000_000n,
          conversionsE4: 1n,
          revenueE4: 15000n,
          currency: "JPY",
        },
        {
          ...fixtures.EXPECTED_GOOD,
          recordId: "r-3",
          campaignId: "c-3",
          impressions: 0,
          clicks: 7,
          spendE4: 0n,
          conversionsE4: 71000n,
          revenueE4: 123456n,
        },
        {
          ...fixtures.EXPECTED_GOOD,
          recordId: "r-4",
          campaignId: "c-4",
          impressions: 12,
          spendE4: 100_000_000_000_000n,
          conversionsE4: 999_999_999_999_999_999n,
          revenueE4: 123_456_789_012_340n,
        },
      ]);
    });

    it("lets records be iterated twice", async () => {
      const path = await fixtures.write("csv", `${fixtures.HEADER}\n${fixtures.csvLine()}\n`);
      const file = await readRecordsFile(path);
      try {
        const first: StoredRecord[] = [];
        for await (const record of file.records()) first.push(record);
        const second: StoredRecord[] = [];
        for await (const record of file.records()) second.push(record);
        assert.deepEqual(first, [fixtures.EXPECTED_GOOD]);
        assert.deepEqual(second, [fixtures.EXPECTED_GOOD]);
      } finally {
        file.close();
      }
    });

    it("reads CRLF line endings and a UTF-8 byte order mark", async () => {
      const path = await fixtures.write(
        "csv",
        Buffer.from(`\uFEFF${fixtures.HEADER}\r\n${fixtures.csvLine()}\r\n`, "utf8"),
      );
      const { records } = await fixtures.readAll(path);
      assert.deepEqual(records, [fixtures.EXPECTED_GOOD]);
    });

    it("derives a stable record id from the natural key when record_id is absent", async () => {
      const columns = fixtures.HEADER.split(",").slice(1);
      const content = `${columns.join(",")}\n${fixtures.csvLine({}, columns)}\n${fixtures.csvLine({ campaign_id: "c-2" }, columns)}\n`;
      const first = await fixtures.readAll(await fixtures.write("csv", content));
      const again = await fixtures.readAll(await fixtures.write("csv", content));
      const expectedId = (campaignId: string) =>
        createHash("sha256").update(`2026-03-01|GB|google_ads|${campaignId}`).digest("hex").slice(0, 24);
      assert.deepEqual(
        first.records.map((record) => record.recordId),
        [expectedId("c-1"), expectedId("c-2")],
      );
      assert.deepEqual(again.records, first.records);
    });

    it("accepts clicks above impressions (view-through) and decimals in zero-minor-unit currencies", async () => {
      const path = await fixtures.write(
        "csv",
        `${fixtures.HEADER}\n${fixtures.csvLine({ impressions: "1", clicks: "5", currency: "JPY", spend: "1234.5678" })}\n`,
      );
      const { records } = await fixtures.readAll(path);
      assert.deepEqual(records, [
        { ...fixtures.EXPECTED_GOOD, impressions: 1, clicks: 5, currency: "JPY", spendE4: 12345678n },
      ]);
    });

    it("maps other column names (ignoring case) to the canonical layout", async () => {
      const path = await fixtures.write(
        "csv",
        "ID,Day,Country,Source,Channel,Campaign,Campaign Name,Impr,Clicks,Cost,Conv,Revenue,Currency,Extra\n" +
          "r-1,2026-03-01,GB,google_ads,search,c-1,Spring sale,1000,50,12.34,2.5,99.9999,GBP,ignored\n",
      );
      const { records } = await fixtures.readAll(path, {
        mapping: {
          record_id: "id",
          date: "Day",
          market: "Country",
          data_source: "Source",
          campaign_id: "Campaign",
          campaign_name: "Campaign Name",
          impressions: "Impr",
          spend: "Cost",
          conversions: "Conv",
        },
      });
      assert.deepEqual(records, [fixtures.EXPECTED_GOOD]);
    });

    it("reads NDJSON with amounts as JSON numbers or strings, skipping blank lines", async () => {
      const line = (overrides: Record<string, unknown>) =>
        JSON.stringify({ ...fixtures.GOOD, impressions: 1000, clicks: 50, spend: 12.34, ...overrides });
      const path = await fixtures.write(
        "ndjson",
        [
          line({}),
          "",
          line({ record_id: "r-2", campaign_id: "c-2", spend: "123456789012.3456", revenue: 5 }),
          "",
        ].join("\n"),
      );
      const { file, records } = await fixtures.readAll(path);
      assert.equal(file.format, "ndjson");
      assert.equal(file.rowCount, 2);
      assert.deepEqual(records, [
        fixtures.EXPECTED_GOOD,
        {
          ...fixtures.EXPECTED_GOOD,
          recordId: "r-2",
          campaignId: "c-2",
          spendE4: 1234567890123456n,
          revenueE4: 50000n,
        },
      ]);
    });

    it("reads .jsonl as NDJSON and a format given explicitly whatever the extension", async () => {
      const content = `${JSON.stringify(fixtures.GOOD)}\n`;
      assert.deepEqual((await fixtures.readAll(await fixtures.write("jsonl", content))).records, [
        fixtures.EXPECTED_GOOD,
      ]);
      assert.deepEqual(
        (await fixtures.readAll(await fixtures.write("txt", content), { format: "ndjson" })).records,
        [fixtures.EXPECTED_GOOD],
      );
    });

    it("reads Parquet with typed columns (DATE, BIGINT, DECIMAL, DOUBLE) exactly", async () => {
      const path = join(fixtures.dir, "typed.parquet");
      await fixtures.duckdb(`COPY (SELECT 'r-' || i AS record_id, DATE '2026-03-01' + CAST(i AS INTEGER) AS date,
          'GB' AS market, 'google_ads' AS data_source, 'search' AS channel, 'c-' || i AS campaign_id,
          'Spring sale' AS campaign_name, CAST(1000 * i AS BIGINT) AS impressions, CAST(i AS INTEGER) AS clicks,
          CAST(12.34 * i AS DECIMAL(18, 4)) AS spend, CAST(2.5 AS DOUBLE) AS conversions,
          CAST(99999999999999.9999 AS DECIMAL(38, 10)) AS revenue, 'EUR' AS currency
        FROM range(1, 4) t(i)) TO '${path}' (FORMAT parquet)`);
      const { file, records } = await fixtures.readAll(path);
      assert.equal(file.format, "parquet");
      assert.deepEqual(file.days, ["2026-03-02", "2026-03-03", "2026-03-04"]);
      assert.deepEqual(
        records,
        [1, 2, 3].map((i) => ({
          recordId: `r-${i}`,
          date: `2026-03-0${i + 1}`,
          market: "GB",
          dataSource: "google_ads",
          channel: "search",
          campaignId: `c-${i}`,
          campaignName: "Spring sale",
          impressions: 1000 * i,
          clicks: i,
          spendE4: 123400n * BigInt(i),
          conversionsE4: 25000n,
          revenueE4: 999_999_999_999_999_999n,
          currency: "EUR",
        })),
      );
    });

    it("derives record ids from a Parquet DATE as from the same day written as text", async () => {
      // The fast path reads a DATE column as a date (record-stagers.ts `typedColumns`); `readAll`
      // checks that it stages exactly the rows, derived ids included, of the exact read's text.
      const path = join(fixtures.dir, "typed-date-derived-ids.parquet");
      await fixtures.duckdb(`COPY (SELECT DATE '2026-03-01' + CAST(i AS INTEGER) AS date, 'GB' AS market,
          'google_ads' AS data_source, 'search' AS channel, 'c-' || i AS campaign_id, 'n' AS campaign_name,
          1 AS impressions, 1 AS clicks, 1 AS spend, 1 AS conversions, 1 AS revenue, 'EUR' AS currency
        FROM range(0, 3) t(i)) TO '${path}' (FORMAT parquet)`);
      const { file, records } = await fixtures.readAll(path);
      assert.deepEqual(file.days, ["2026-03-01", "2026-03-02", "2026-03-03"]);
      const derived = (date: string, campaignId: string) =>
        createHash("sha256").update(`${date}|GB|google_ads|${campaignId}`).digest("hex").slice(0, 24);
      assert.deepEqual(
        records.map((record) => record.recordId),
        [0, 1, 2].map((i) => derived(`2026-03-0${i + 1}`, `c-${i}`)),
      );
    });

    it("reads counts and amounts of every numeric Parquet type that holds them, up to their bounds", async () => {
      // The fast path reads these as numbers (record-stagers.ts `typedColumns`); `readAll`
      // checks that it stages exactly the rows of the exact read, which reads them as text.
      const path = join(fixtures.dir, "typed-bounds.parquet");
      await fixtures.duckdb(`COPY (SELECT 'r-' || i AS record_id, DATE '2026-03-01' AS date, 'GB' AS market,
          'google_ads' AS data_source, 'search' AS channel, 'c-' || i AS campaign_id, 'n' AS campaign_name,
          CAST(CASE WHEN i = 1 THEN 2147483647 ELSE i END AS INTEGER) AS impressions,
          CAST(i - 1 AS UTINYINT) AS clicks,
          CAST(CASE WHEN i = 1 THEN 100000000000000 ELSE 0.0001 * i END AS DECIMAL(19, 4)) AS spend,
          CAST(CASE WHEN i = 1 THEN 100000000000000 ELSE i END AS HUGEINT) AS conversions,
          CAST(12.5 * i AS DECIMAL(9, 1)) AS revenue, 'EUR' AS currency
        FROM range(1, 4) t(i)) TO '${path}' (FORMAT parquet)`);
      const { records } = await fixtures.readAll(path);
      assert.deepEqual(
        records.map(({ impressions, clicks, spendE4, conversionsE4, revenueE4 }) => ({
          impressions,
          clicks,
          spendE4,
          conversionsE4,
          revenueE4,
        })),
        [
          {
            impressions: 2147483647,
            clicks: 0,
            spendE4: 1_000_000_000_000_000_000n,
            conversionsE4: 1_000_000_000_000_000_000n,
            revenueE4: 125000n,
          },
          { impressions: 2, clicks: 1, spendE4: 2n, conversionsE4: 20000n, revenueE4: 250000n },
          { impressions: 3, clicks: 2, spendE4: 3n, conversionsE4: 30000n, revenueE4: 375000n },
        ],
      );
    });

    it("reads NDJSON written by DuckDB itself", async () => {
      const path = join(fixtures.dir, "duckdb.ndjson");
      await fixtures.duckdb(`COPY (SELECT 'r-1' AS record_id, DATE '2026-03-01' AS date, 'GB' AS market,
          'google_ads' AS data_source, 'search' AS channel, 'c-1' AS campaign_id, 'Spring sale' AS campaign_name,
          1000 AS impressions, 50 AS clicks, CAST(12.34 AS DECIMAL(18, 4)) AS spend, 2.5 AS conversions,
          CAST(99.9999 AS DECIMAL(18, 4)) AS revenue, 'GBP' AS currency) TO '${path}' (FORMAT json)`);
      assert.deepEqual((await fixtures.readAll(path)).records, [fixtures.EXPECTED_GOOD]);
    });
  });
});
