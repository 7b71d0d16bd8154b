/**
 * Record loads through the admin API: all or nothing and idempotent (CONTRACT §4).
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { CURRENCY_CODES } from "@mdq/contract";
import * as harness from "./admin-harness.js";

describe("admin API", () => {
  harness.useAdminRegion();

  describe("loads", () => {
    let brand: Awaited<ReturnType<typeof harness.newBrand>>;
    /** What the brand holds after the first load: days 1–3. */
    const initial = harness.days(1, 3);

    before(async () => {
      brand = await harness.newBrand("brand-loads");
      harness.expectStatus(
        await harness.load(brand.brandId, await harness.writeRecords("initial.csv", initial)),
        200,
      );
    });

    it("answers a load with its summary, and GraphQL then returns exactly the loaded rows", async () => {
      const fresh = await harness.newBrand("brand-first-load");
      const records = harness.days(5, 2);
      const path = await harness.writeRecords("first-load.csv", records);
      const body = harness.expectStatus<Record<string, unknown>>(
        await harness.load(fresh.brandId, path, { processingDate: "2020-03-07" }),
        200,
      );
      assert.match(String(body["loadId"]), /^load_[0-9a-f]{16}$/);
      assert.deepEqual(
        { ...body, loadId: "" },
        { loadId: "", rows: 24, days: 2, from: "2020-03-05", to: "2020-03-06", processingDate: "2020-03-07" },
      );
      assert.deepEqual(await harness.readAll(fresh.brandId, fresh.token), harness.byRecordId(records));
      assert.equal(await harness.storedRows(fresh.brandId), 24);
    });

    it("reloading the same file leaves exactly the same rows, not doubled (idempotent)", async () => {
      const path = await harness.writeRecords("reload.csv", initial);
      const first = await harness.readAll(brand.brandId, brand.token);
      assert.deepEqual(first, harness.byRecordId(initial));
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const body = harness.expectStatus<{ rows: number; days: number }>(
          await harness.load(brand.brandId, path),
          200,
        );
        assert.equal(body.rows, initial.length);
        assert.deepEqual(await harness.readAll(brand.brandId, brand.token), first);
        assert.equal(await harness.storedRows(brand.brandId), initial.length);
      }
    });

    it("reloading one day with fewer, changed rows replaces that day exactly and leaves the other days alone", async () => {
      const before = await harness.readAll(brand.brandId, brand.token);
      const dayTwo = [
        harness.rec("2020-03-02", "DE", "meta_ads", "c-9", 7),
        harness.rec("2020-03-02", "GB", "google_ads", "c-1", 3),
      ];
      const body = harness.expectStatus<Record<string, unknown>>(
        await harness.load(brand.brandId, await harness.writeRecords("day-two.csv", dayTwo)),
        200,
      );
      assert.deepEqual(
        { rows: body["rows"], days: body["days"], from: body["from"], to: body["to"] },
        { rows: 2, days: 1, from: "2020-03-02", to: "2020-03-02" },
      );
      try {
        const expected = harness.byRecordId([
          ...before.filter((record) => record.date !== "2020-03-02"),
          ...dayTwo,
        ]);
        assert.deepEqual(await harness.readAll(brand.brandId, brand.token), expected);
        assert.equal(await harness.storedRows(brand.brandId), expected.length);
      } finally {
        // Back to the initial state for the other tests.
        harness.expectStatus(
          await harness.load(brand.brandId, await harness.writeRecords("restore.csv", initial)),
          200,
        );
      }
      assert.deepEqual(await harness.readAll(brand.brandId, brand.token), harness.byRecordId(initial));
    });

    /** Good rows that would change the brand's data (a changed day 1 and a new day 4), then `bad`. */
    const changes = [...harness.days(1, 1, 5), ...harness.days(4, 1, 5)];
    const goodLines = changes.map(harness.csvLine);
    const line = (fields: Partial<Record<string, string>>) => {
      const base: Record<string, string> = {
        record_id: "bad-1",
        date: "2020-03-04",
        market: "GB",
        data_source: "google_ads",
        channel: "search",
        campaign_id: "c-bad",
        campaign_name: "Bad row",
        impressions: "10",
        clicks: "1",
        spend: "1.00",
        conversions: "0",
        revenue: "2.00",
        currency: "EUR",
      };
      return harness.HEADER.split(",")
        .map((column) => fields[column] ?? base[column])
        .join(",");
    };
    const csv = (...bad: string[]) => [harness.HEADER, ...goodLines, ...bad].join("\n");
    /** The line of the first bad row: the header, then the good rows. */
    const firstBad = goodLines.length + 2;

    type Case = {
      name: string;
      file: string;
      content: () => Promise<string | Buffer> | string | Buffer;
      details: Record<string, unknown>[];
      extra?: Record<string, unknown>;
    };
    /** A case of one bad value in `column` of the first bad line, reported with `message`. */
    const badValue = (name: string, file: string, column: string, value: string, message: string): Case => ({
      name,
      file,
      content: () => csv(line({ [column]: value })),
      details: [{ line: firstBad, column, message }],
    });
    const unclosedQuote = {
      line: firstBad,
      message: 'a quoted field is not closed properly (a double quote inside a field is written "")',
    };
    const cases: Case[] = [
      badValue(
        "a market that is not an ISO 3166-1 code (UK)",
        "market.csv",
        "market",
        "UK",
        '"UK" is not an ISO 3166-1 alpha-2 country code (upper case, e.g. "GB")',
      ),
      badValue(
        "a day that does not exist (2020-02-30)",
        "date.csv",
        "date",
        "2020-02-30",
        '"2020-02-30" is not a calendar day written YYYY-MM-DD',
      ),
      badValue(
        "a data source that is not a lower-case id",
        "source.csv",
        "data_source",
        "Google Ads",
        '"Google Ads" is not a data source id: lower-case letters, digits, "_", "." and "-", starting with a letter or digit, at most 64 characters',
      ),
      {
        name: "a negative count and a fractional count",
        file: "counts.csv",
        content: () =>
          csv(
            line({ impressions: "-5" }),
            line({ record_id: "bad-2", campaign_id: "c-bad-2", clicks: "1.5" }),
          ),
        details: [
          { line: firstBad, column: "impressions", message: '"-5" is negative' },
          { line: firstBad + 1, column: "clicks", message: '"1.5" is not a whole number' },
        ],
      },
      badValue(
        "a spend with more than 4 decimal places",
        "spend.csv",
        "spend",
        "12.34567",
        '"12.34567" has more than 4 decimal places',
      ),
      badValue(
        "a currency MDQ holds no rates for",
        "currency.csv",
        "currency",
        "XYZ",
        `"XYZ" is not a supported currency (${CURRENCY_CODES.join(", ")})`,
      ),
      badValue("a missing value", "missing-value.csv", "campaign_name", "", "missing value"),
      badValue(
        "a control character in a text value",
        "control.csv",
        "campaign_name",
        "Bell\u0007",
        "contains a control character (U+0007)",
      ),
      {
        name: "a missing required column (line 1)",
        file: "no-spend.csv",
        content: () => [harness.HEADER.replace(",spend", ""), line({}).replace(",1.00,", ",")].join("\n"),
        details: [{ line: 1, column: "spend", message: 'missing column "spend"' }],
      },
      {
        name: "a row with the wrong number of fields",
        file: "fields.csv",
        content: () => csv(line({}).replace(/,EUR$/, "")),
        details: [{ line: firstBad, message: "expected 13 fields, found 12" }],
      },
      {
        name: "a quoted field that is not closed",
        file: "quote.csv",
        content: () =>
          csv(line({ campaign_name: '"Open quote' }), line({ record_id: "bad-2", campaign_id: "c-2" })),
        details: [unclosedQuote],
      },
      {
        name: "a quoted field that is not closed, before a line with a quoted field",
        file: "quote-then-quoted.csv",
        content: () =>
          csv(
            line({ campaign_name: '"Open quote' }),
            line({ record_id: "bad-2", campaign_id: "c-2", campaign_name: '"Quoted, ""x"""' }),
          ),
        details: [unclosedQuote],
      },
      {
        name: "text that is not UTF-8",
        file: "latin1.csv",
        content: () =>
          Buffer.concat([
            Buffer.from(`${csv()}\n`),
            Buffer.from(`${line({ campaign_name: "Caf\u00e9" })}\n`, "latin1"),
          ]),
        details: [{ line: firstBad, message: "not valid UTF-8 (save the file as UTF-8)" }],
      },
      {
        name: "a duplicate natural key, naming the first occurrence",
        file: "duplicate-key.csv",
        content: () =>
          csv(line({ record_id: "bad-dup", campaign_id: "c-1", date: "2020-03-01", market: "DE" })),
        details: [
          {
            line: firstBad,
            message: `duplicate (date, market, data_source, campaign_id) = ("2020-03-01", "DE", "google_ads", "c-1"), first on line 2`,
          },
        ],
      },
      badValue(
        "a duplicate record id, naming the first occurrence",
        "duplicate-id.csv",
        "record_id",
        changes[0]!.recordId,
        `duplicate record_id "${changes[0]!.recordId}", first on line 2`,
      ),
      {
        name: "more than 20 problems (the first 20 are reported, all are counted)",
        file: "many.csv",
        content: () =>
          csv(
            ...Array.from({ length: 25 }, (_, index) =>
              line({ record_id: `bad-${index}`, campaign_id: `c-bad-${index}`, market: "EU" }),
            ),
          ),
        details: Array.from({ length: 20 }, (_, index) => ({
          line: firstBad + index,
          column: "market",
          message: '"EU" is not an ISO 3166-1 alpha-2 country code (upper case, e.g. "GB")',
        })),
      },
      {
        name: "an empty file",
        file: "empty.csv",
        content: () => "",
        details: [{ line: 0, message: "the file is empty" }],
      },
      {
        name: "a header and no records",
        file: "header-only.csv",
        content: () => `${harness.HEADER}\n`,
        details: [{ line: 0, message: "the file holds no records" }],
      },
      {
        name: "a file name whose format is unknown",
        file: "records.txt",
        content: () => csv(),
        details: [
          {
            line: 0,
            message:
              "cannot tell the format from the file name: use .csv, .ndjson, .jsonl or .parquet, or give the format",
          },
        ],
      },
      {
        name: "an NDJSON line that is not an object",
        file: "records.ndjson",
        content: () =>
          [
            ...changes.map((record) =>
              JSON.stringify({
                record_id: record.recordId,
                date: record.date,
                market: record.market,
                data_source: record.dataSource,
                channel: record.channel,
                campaign_id: record.campaignId,
                campaign_name: record.campaignName,
                impressions: record.impressions,
                clicks: record.clicks,
                spend: record.spend.toFixed(2),
                conversions: record.conversions.toFixed(2),
                revenue: record.revenue.toFixed(2),
                currency: record.currency,
              }),
            ),
            "[1, 2, 3]",
          ].join("\n"),
        details: [{ line: changes.length + 1, message: "the line is not a JSON object" }],
      },
      {
        name: "a Parquet row with a bad market (numbered by row)",
        file: "records.parquet",
        content: async () => {
          const source = await harness.writeFileIn("parquet-source.csv", csv(line({ market: "XK" })));
          const target = join(harness.work, "records.parquet");
          const instance = await DuckDBInstance.create(":memory:");
          const connection = await instance.connect();
          await connection.run(
            `COPY (SELECT * FROM read_csv('${source}', all_varchar = true)) TO '${target}' (FORMAT parquet)`,
          );
          connection.closeSync();
          instance.closeSync();
          return readFile(target);
        },
        details: [
          {
            position: "row",
            line: changes.length + 1,
            column: "market",
            message: '"XK" is not an ISO 3166-1 alpha-2 country code (upper case, e.g. "GB")',
          },
        ],
      },
      {
        name: "a mapping key that is not a canonical column",
        file: "mapped.csv",
        content: () => csv(),
        extra: { mapping: { cost: "spend" } },
        details: [{ line: 0, message: 'the mapping names "cost", which is not a column of the layout' }],
      },
    ];

    for (const badFile of cases) {
      it(`rejects ${badFile.name} with 422 INVALID_FILE and line numbers, and changes nothing`, async () => {
        const before = await harness.readAll(brand.brandId, brand.token);
        const rows = await harness.storedRows(brand.brandId);
        const { metrics } = harness.region.service;
        const storeErrors = await metrics.value("mdq_store_errors_total", { kind: "other" });
        assert.ok(before.some((record) => record.date === "2020-03-01"));
        const path = await harness.writeFileIn(badFile.file, await badFile.content());
        const response = await harness.load(brand.brandId, path, badFile.extra);
        const count = badFile.details.length === 20 ? 25 : badFile.details.length;
        assert.deepEqual(
          harness.expectStatus(response, 422),
          harness.adminError(
            "INVALID_FILE",
            `${count} problem(s) in ${path}; nothing was changed`,
            badFile.details,
          ),
        );
        assert.deepEqual(await harness.readAll(brand.brandId, brand.token), before);
        assert.equal(await harness.storedRows(brand.brandId), rows);
        // A file's problems are the answer, not a failure of the store (docs/observability.md).
        assert.equal(await metrics.value("mdq_store_errors_total", { kind: "other" }), storeErrors);
      });
    }

    it("rejects a missing file with 422 INVALID_FILE on line 0, and changes nothing", async () => {
      const path = join(harness.work, "does-not-exist.csv");
      assert.deepEqual(
        harness.expectStatus(await harness.load(brand.brandId, path), 422),
        harness.adminError("INVALID_FILE", `1 problem(s) in ${path}; nothing was changed`, [
          { line: 0, message: `no such file: ${path}` },
        ]),
      );
      assert.deepEqual(await harness.readAll(brand.brandId, brand.token), harness.byRecordId(initial));
    });

    it("rejects a record id already used on a day the load leaves alone, and changes nothing", async () => {
      const clash = {
        ...harness.rec("2020-03-05", "GB", "google_ads", "c-7"),
        recordId: initial[0]!.recordId,
      };
      const path = await harness.writeRecords("clash.csv", [...harness.days(2, 1, 9), clash]);
      assert.deepEqual(
        harness.expectStatus(await harness.load(brand.brandId, path), 422),
        harness.adminError(
          "INVALID_FILE",
          `record_id already used on a day this load does not replace: ${clash.recordId} (2020-03-01); nothing was changed`,
          [
            {
              line: 0,
              column: "record_id",
              message: `${clash.recordId} is already the id of a record on 2020-03-01, which this load does not replace`,
            },
          ],
        ),
      );
      assert.deepEqual(await harness.readAll(brand.brandId, brand.token), harness.byRecordId(initial));
    });

    it("refuses a relative path, an unknown brand, a bad format or a bad processingDate without loading", async () => {
      const path = await harness.writeRecords("valid.csv", harness.days(9, 1));
      const refusals: [Record<string, unknown>, number, ReturnType<typeof harness.adminError>][] = [
        [
          { brandId: brand.brandId, path: "valid.csv" },
          400,
          harness.adminError("BAD_INPUT", "path must be an absolute path of a file on the service's machine"),
        ],
        [
          { brandId: "no-such-brand", path },
          404,
          harness.adminError("NOT_FOUND", 'no brand "no-such-brand"'),
        ],
        [
          { brandId: brand.brandId, path, format: "xlsx" },
          400,
          harness.adminError("BAD_INPUT", "format must be csv, ndjson or parquet"),
        ],
        [
          { brandId: brand.brandId, path, processingDate: "2020-02-30" },
          400,
          harness.adminError(
            "BAD_INPUT",
            'processingDate must be a real day written YYYY-MM-DD; got "2020-02-30"',
          ),
        ],
      ];
      for (const [body, status, error] of refusals) {
        assert.deepEqual(
          harness.expectStatus(await harness.admin("POST", "/admin/loads", body), status),
          error,
        );
      }
      assert.deepEqual(await harness.readAll(brand.brandId, brand.token), harness.byRecordId(initial));
    });
  });
});
