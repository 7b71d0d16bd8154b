/**
 * Rejected records files for `mdq load` (CONTRACT §4, docs/load-format.md): every validation rule
 * rejects the file with the exact line and message, and file-level problems (format, columns,
 * emptiness, encoding) are reported before any row is read.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { MARKET_CODES } from "../src/load/records-file.js";
import * as fixtures from "./records-file-fixtures.js";

describe("readRecordsFile", () => {
  fixtures.useFixtureDir();

  describe("row rules", () => {
    const cases: { column: string; value: string; message: string }[] = [
      { column: "record_id", value: "r".repeat(129), message: "longer than 128 characters (129)" },
      {
        column: "date",
        value: "2026-02-30",
        message: '"2026-02-30" is not a calendar day written YYYY-MM-DD',
      },
      { column: "date", value: "2026-3-1", message: '"2026-3-1" is not a calendar day written YYYY-MM-DD' },
      { column: "date", value: "", message: "missing value" },
      {
        column: "market",
        value: "UK",
        message: '"UK" is not an ISO 3166-1 alpha-2 country code (upper case, e.g. "GB")',
      },
      {
        column: "market",
        value: "gb",
        message: '"gb" is not an ISO 3166-1 alpha-2 country code (upper case, e.g. "GB")',
      },
      {
        column: "data_source",
        value: "Google",
        message:
          '"Google" is not a data source id: lower-case letters, digits, "_", "." and "-", starting with a letter or digit, at most 64 characters',
      },
      {
        column: "data_source",
        value: "a".repeat(65),
        message: `"${"a".repeat(57)}..." is not a data source id: lower-case letters, digits, "_", "." and "-", starting with a letter or digit, at most 64 characters`,
      },
      {
        column: "channel",
        value: "_search",
        message:
          '"_search" is not a channel id: lower-case letters, digits, "_", "." and "-", starting with a letter or digit, at most 64 characters',
      },
      { column: "campaign_id", value: "c".repeat(129), message: "longer than 128 characters (129)" },
      { column: "campaign_name", value: "n".repeat(257), message: "longer than 256 characters (257)" },
      { column: "campaign_name", value: "", message: "missing value" },
      {
        column: "campaign_name",
        value: "tab\tok but not\u001f",
        message: "contains a control character (U+001F)",
      },
      { column: "record_id", value: "r\u0000", message: "contains a control character (U+0000)" },
      { column: "impressions", value: "-1", message: '"-1" is negative' },
      { column: "impressions", value: "1.5", message: '"1.5" is not a whole number' },
      { column: "impressions", value: "2147483648", message: '"2147483648" is greater than 2147483647' },
      { column: "clicks", value: "12abc", message: '"12abc" is not a whole number' },
      {
        column: "clicks",
        value: "00000000002147483648",
        message: '"00000000002147483648" is greater than 2147483647',
      },
      { column: "spend", value: "-0.01", message: '"-0.01" is negative' },
      { column: "spend", value: "12.34567", message: '"12.34567" has more than 4 decimal places' },
      {
        column: "spend",
        value: "1e3",
        message: '"1e3" is not a decimal number (digits, optionally "." and up to 4 decimals)',
      },
      {
        column: "conversions",
        value: "100000000000000.0001",
        message: '"100000000000000.0001" is greater than 100000000000000 (10^14)',
      },
      {
        column: "revenue",
        value: "1000000000000000",
        message: '"1000000000000000" is greater than 100000000000000 (10^14)',
      },
      {
        column: "currency",
        value: "XYZ",
        message:
          '"XYZ" is not a supported currency (EUR, AUD, BRL, CAD, CHF, CNY, CZK, DKK, GBP, HKD, HUF, IDR, ILS, INR, ISK, JPY, KRW, MXN, MYR, NOK, NZD, PHP, PLN, RON, SEK, SGD, THB, TRY, USD, ZAR)',
      },
    ];
    for (const { column, value, message } of cases) {
      it(`rejects ${column} ${JSON.stringify(value.length > 20 ? `${value.slice(0, 20)}…` : value)} on its line`, async () => {
        const path = await fixtures.write(
          "csv",
          `${fixtures.HEADER}\n${fixtures.csvLine()}\n${fixtures.csvLine({ record_id: "r-2", campaign_id: "c-2", [column]: value })}\n`,
        );
        const error = await fixtures.rejection(path);
        assert.deepEqual(error.errors, [{ line: 3, column, message }]);
        assert.equal(error.rowCount, 2);
        assert.equal(error.errorCount, 1);
      });
    }

    it("knows the 249 assigned ISO 3166-1 alpha-2 codes", () => {
      assert.equal(MARKET_CODES.size, 249);
      for (const code of ["GB", "US", "DE", "JP", "SS"]) assert.ok(MARKET_CODES.has(code), code);
      for (const code of ["UK", "EU", "XK", "ZZ"]) assert.ok(!MARKET_CODES.has(code), code);
    });

    it("reports every bad column of a row, in layout order, and each row on its own line", async () => {
      const path = await fixtures.write(
        "csv",
        [
          fixtures.HEADER,
          fixtures.csvLine({ currency: "usd", market: "XX", spend: "" }),
          fixtures.csvLine({ record_id: "r-2", campaign_id: "c-2" }),
          fixtures.csvLine({ record_id: "r-3", campaign_id: "c-3", clicks: "-2" }),
        ].join("\n"),
      );
      assert.deepEqual(await fixtures.problemsOf(path), [
        {
          line: 2,
          column: "market",
          message: '"XX" is not an ISO 3166-1 alpha-2 country code (upper case, e.g. "GB")',
        },
        { line: 2, column: "spend", message: "missing value" },
        {
          line: 2,
          column: "currency",
          message:
            '"usd" is not a supported currency (EUR, AUD, BRL, CAD, CHF, CNY, CZK, DKK, GBP, HKD, HUF, IDR, ILS, INR, ISK, JPY, KRW, MXN, MYR, NOK, NZD, PHP, PLN, RON, SEK, SGD, THB, TRY, USD, ZAR)',
        },
        { line: 4, column: "clicks", message: '"-2" is negative' },
      ]);
    });

    it("numbers lines of the file, counting quoted new lines and blank lines", async () => {
      const path = await fixtures.write(
        "csv",
        [
          fixtures.HEADER,
          fixtures.csvLine({ campaign_name: "two\r\nlines" }),
          "",
          fixtures.csvLine({ record_id: "r-2", campaign_id: "c-2", campaign_name: "three\nlines\nhere" }),
          "",
          "",
          fixtures.csvLine({ record_id: "r-3", campaign_id: "c-3", market: "ZZ" }),
        ].join("\r\n"),
      );
      assert.deepEqual(await fixtures.problemsOf(path), [
        {
          line: 10,
          column: "market",
          message: '"ZZ" is not an ISO 3166-1 alpha-2 country code (upper case, e.g. "GB")',
        },
      ]);
    });

    it("reports the first 20 problems, counts them all, and says how many more there are", async () => {
      const lines = [fixtures.HEADER];
      for (let i = 0; i < 30; i += 1) {
        lines.push(fixtures.csvLine({ record_id: `r-${i}`, campaign_id: `c-${i}`, clicks: "x" }));
      }
      const error = await fixtures.rejection(await fixtures.write("csv", lines.join("\n")));
      assert.equal(error.errors.length, 20);
      assert.deepEqual(error.errors[19], {
        line: 21,
        column: "clicks",
        message: '"x" is not a whole number',
      });
      assert.equal(error.errorCount, 30);
      assert.equal(error.rowCount, 30);
      assert.equal(error.position, "line");
      const text = error.message.split("\n");
      assert.equal(text[0], `${error.path}: rejected, nothing loaded (30 problems)`);
      assert.equal(text[1], '  line 2, clicks: "x" is not a whole number');
      assert.equal(text.at(-1), "  ... and 10 more");
    });
  });

  describe("duplicate keys", () => {
    it("rejects a repeated record_id, naming the line of the first", async () => {
      const path = await fixtures.write(
        "csv",
        [
          fixtures.HEADER,
          fixtures.csvLine(),
          fixtures.csvLine({ record_id: "r-2", campaign_id: "c-2" }),
          fixtures.csvLine({ campaign_id: "c-3" }),
          fixtures.csvLine({ campaign_id: "c-4" }),
        ].join("\n"),
      );
      assert.deepEqual(await fixtures.problemsOf(path), [
        { line: 4, column: "record_id", message: 'duplicate record_id "r-1", first on line 2' },
        { line: 5, column: "record_id", message: 'duplicate record_id "r-1", first on line 2' },
      ]);
      // The load's fast path (record-staging.ts `keysUnique`) sends the file to this exact read.
      assert.equal(await fixtures.fastPath(path), "not clean");
    });

    it("rejects a repeated (date, market, data_source, campaign_id) even with different record ids", async () => {
      const path = await fixtures.write(
        "csv",
        [
          fixtures.HEADER,
          fixtures.csvLine(),
          fixtures.csvLine({ record_id: "r-2", market: "FR" }),
          fixtures.csvLine({ record_id: "r-3", channel: "display", campaign_name: "Other" }),
        ].join("\n"),
      );
      assert.deepEqual(await fixtures.problemsOf(path), [
        {
          line: 4,
          message:
            'duplicate (date, market, data_source, campaign_id) = ("2026-03-01", "GB", "google_ads", "c-1"), first on line 2',
        },
      ]);
      assert.equal(await fixtures.fastPath(path), "not clean");
    });

    it("rejects a repeated natural key when record ids are derived", async () => {
      const columns = fixtures.HEADER.split(",").slice(1);
      const path = await fixtures.write(
        "csv",
        [columns.join(","), fixtures.csvLine({}, columns), fixtures.csvLine({ spend: "1" }, columns)].join(
          "\n",
        ),
      );
      assert.deepEqual(await fixtures.problemsOf(path), [
        {
          line: 3,
          message:
            'duplicate (date, market, data_source, campaign_id) = ("2026-03-01", "GB", "google_ads", "c-1"), first on line 2',
        },
      ]);
      assert.equal(await fixtures.fastPath(path), "not clean");
    });
  });

  describe("file problems", () => {
    it("names each missing required column on the header line", async () => {
      const columns = fixtures.HEADER.split(",").filter((column) => !["spend", "currency"].includes(column));
      const path = await fixtures.write("csv", `${columns.join(",")}\n${fixtures.csvLine({}, columns)}\n`);
      assert.deepEqual(await fixtures.problemsOf(path), [
        { line: 1, column: "spend", message: 'missing column "spend"' },
        { line: 1, column: "currency", message: 'missing column "currency"' },
      ]);
    });

    it("names the file's column when a mapped column is missing, and refuses unknown mapping keys", async () => {
      const path = await fixtures.write("csv", `${fixtures.HEADER}\n${fixtures.csvLine()}\n`);
      assert.deepEqual(await fixtures.problemsOf(path, { mapping: { spend: "Cost" } }), [
        { line: 1, column: "spend", message: 'missing column "Cost" (mapped to spend)' },
      ]);
      assert.deepEqual(await fixtures.problemsOf(path, { mapping: { cost: "spend" } }), [
        { line: 0, message: 'the mapping names "cost", which is not a column of the layout' },
      ]);
    });

    it("rejects an empty file, a header without rows, and a missing file", async () => {
      assert.deepEqual(await fixtures.problemsOf(await fixtures.write("csv", "")), [
        { line: 0, message: "the file is empty" },
      ]);
      assert.deepEqual(await fixtures.problemsOf(await fixtures.write("csv", `${fixtures.HEADER}\n`)), [
        { line: 0, message: "the file holds no records" },
      ]);
      const missing = join(fixtures.dir, "missing.csv");
      assert.deepEqual(await fixtures.problemsOf(missing), [
        { line: 0, message: `no such file: ${missing}` },
      ]);
    });

    it("rejects a file whose extension says no known format, or an unknown format", async () => {
      const path = await fixtures.write("xlsx", `${fixtures.HEADER}\n${fixtures.csvLine()}\n`);
      assert.deepEqual(await fixtures.problemsOf(path), [
        {
          line: 0,
          message:
            "cannot tell the format from the file name: use .csv, .ndjson, .jsonl or .parquet, or give the format",
        },
      ]);
      assert.deepEqual(await fixtures.problemsOf(path, { format: "xlsx" as "csv" }), [
        { line: 0, message: 'unknown format "xlsx" (csv, ndjson or parquet)' },
      ]);
    });

    it("rejects a CSV that is not UTF-8 on the line of the first bad byte", async () => {
      const text = `${fixtures.HEADER}\n${fixtures.csvLine()}\n${fixtures.csvLine({ record_id: "r-2", campaign_id: "c-2", campaign_name: "Café" })}\n`;
      const path = await fixtures.write("csv", Buffer.from(text, "latin1"));
      assert.deepEqual(await fixtures.problemsOf(path), [
        { line: 3, message: "not valid UTF-8 (save the file as UTF-8)" },
      ]);
    });

    it("says so when a CSV is not comma-separated", async () => {
      const path = await fixtures.write(
        "csv",
        `${fixtures.HEADER.replaceAll(",", ";")}\n${fixtures.csvLine().replaceAll(",", ";")}\n`,
      );
      assert.deepEqual(await fixtures.problemsOf(path), [
        { line: 1, message: "the header has a single column: fields must be separated by commas" },
      ]);
    });

    it("rejects CSV rows with the wrong number of fields, each on its line", async () => {
      const path = await fixtures.write(
        "csv",
        [
          fixtures.HEADER,
          fixtures.csvLine(),
          `${fixtures.csvLine({ record_id: "r-2" })},extra`,
          "r-3,2026-03-01,GB",
        ].join("\n"),
      );
      const error = await fixtures.rejection(path);
      assert.deepEqual(error.errors, [
        { line: 3, message: "expected 13 fields, found 14" },
        { line: 4, message: "expected 13 fields, found 3" },
      ]);
      assert.equal(error.rowCount, 3);
    });
  });

  describe("empty values", () => {
    it("rejects a text value written as an empty quoted CSV field or an empty JSON string, as missing", async () => {
      // An empty string, not a NULL: the fast path finds it by the row's match (record-staging.ts).
      const csv = await fixtures.write(
        "csv",
        `${fixtures.HEADER}\n${fixtures.csvLine()}\n${fixtures.csvLine({ record_id: "r-2", campaign_id: "c-2" }).replace("Spring sale", '""')}\n`,
      );
      const ndjson = await fixtures.write(
        "ndjson",
        `${JSON.stringify(fixtures.GOOD)}\n${JSON.stringify({ ...fixtures.GOOD, record_id: "r-2", campaign_id: "" })}\n`,
      );
      for (const [path, line, column] of [
        [csv, 3, "campaign_name"],
        [ndjson, 2, "campaign_id"],
      ] as const) {
        // `rejection` also checks that the fast path finds the file unclean.
        const error = await fixtures.rejection(path);
        assert.deepEqual(
          error.errors.map(({ line, column, message }) => ({ line, column, message })),
          [{ line, column, message: "missing value" }],
        );
      }
    });
  });

  describe("NDJSON problems", () => {
    it("numbers NDJSON lines including blank ones, and rejects lines that are not JSON objects", async () => {
      const path = await fixtures.write(
        "ndjson",
        [
          JSON.stringify(fixtures.GOOD),
          "",
          "[1, 2]",
          "{not json",
          JSON.stringify({
            ...fixtures.GOOD,
            record_id: "r-5",
            campaign_id: "c-5",
            clicks: -3,
            market: null,
          }),
        ].join("\n"),
      );
      assert.deepEqual(await fixtures.problemsOf(path), [
        { line: 3, message: "the line is not a JSON object" },
        { line: 4, message: "the line is not a JSON object" },
        { line: 5, column: "market", message: "missing value" },
        { line: 5, column: "clicks", message: '"-3" is negative' },
      ]);
    });

    it("rejects a JSON number amount with more digits than a float holds, but accepts it as a string", async () => {
      const base = `{"date":"2026-03-01","market":"GB","data_source":"google_ads","channel":"search","campaign_id":"c-1","campaign_name":"n","impressions":1,"clicks":1,"conversions":0,"revenue":0,"currency":"EUR"`;
      const path = await fixtures.write("ndjson", `${base},"spend":1234567890123.4567}\n`);
      assert.deepEqual(await fixtures.problemsOf(path), [
        {
          line: 1,
          column: "spend",
          message:
            '"1234567890123.4568" has more than 15 significant digits, more than a binary floating-point number holds exactly; write it as a string',
        },
      ]);
      const asString = await fixtures.readAll(
        await fixtures.write("ndjson", `${base},"spend":"1234567890123.4567"}\n`),
      );
      assert.equal(asString.records[0]!.spendE4, 12345678901234567n);
    });

    it("names a required key no record has", async () => {
      const { currency: _, ...withoutCurrency } = fixtures.GOOD;
      const path = await fixtures.write("ndjson", `${JSON.stringify(withoutCurrency)}\n`);
      assert.deepEqual(await fixtures.problemsOf(path, { mapping: { spend: "cost" } }), [
        { line: 0, column: "spend", message: 'no record has a value for "cost" (mapped to spend)' },
        { line: 0, column: "currency", message: 'no record has a value for "currency"' },
      ]);
    });
  });

  describe("Parquet problems", () => {
    it("rejects a Parquet DATE past year 9999 on its line", async () => {
      const path = join(fixtures.dir, "date-past-9999.parquet");
      await fixtures.duckdb(`COPY (SELECT 'r-' || i AS record_id,
          CASE WHEN i = 2 THEN DATE '10000-01-01' ELSE DATE '2026-03-01' END AS date, 'GB' AS market,
          'google_ads' AS data_source, 'search' AS channel, 'c-' || i AS campaign_id, 'n' AS campaign_name,
          1 AS impressions, 1 AS clicks, 1 AS spend, 1 AS conversions, 1 AS revenue, 'EUR' AS currency
        FROM range(1, 4) t(i)) TO '${path}' (FORMAT parquet)`);
      // `rejection` also checks that the fast path finds the file unclean.
      const error = await fixtures.rejection(path);
      assert.deepEqual(
        error.errors.map(({ line, column }) => ({ line, column })),
        [{ line: 2, column: "date" }],
      );
    });

    it("numbers Parquet problems by row and says so", async () => {
      const path = join(fixtures.dir, "bad.parquet");
      await fixtures.duckdb(`COPY (SELECT 'r-' || i AS record_id, '2026-03-01' AS date,
          CASE WHEN i = 3 THEN 'UK' ELSE 'GB' END AS market, 'google_ads' AS data_source, 'search' AS channel,
          'c-' || i AS campaign_id, 'n' AS campaign_name, 1 AS impressions, 1 AS clicks,
          CASE WHEN i = 2 THEN CAST(0.1 AS DOUBLE) + CAST(0.2 AS DOUBLE)
            WHEN i = 4 THEN CAST(1234567890123.4567 AS DOUBLE) ELSE 1.5 END AS spend,
          0 AS conversions, 0 AS revenue, 'EUR' AS currency
        FROM range(1, 5) t(i) ORDER BY i) TO '${path}' (FORMAT parquet)`);
      const error = await fixtures.rejection(path);
      assert.equal(error.position, "row");
      assert.deepEqual(error.errors, [
        { line: 2, column: "spend", message: '"0.30000000000000004" has more than 4 decimal places' },
        {
          line: 3,
          column: "market",
          message: '"UK" is not an ISO 3166-1 alpha-2 country code (upper case, e.g. "GB")',
        },
        {
          line: 4,
          column: "spend",
          message:
            '"1234567890123.4568" has more than 15 significant digits, more than a binary floating-point number holds exactly; write it as a string',
        },
      ]);
      assert.equal(
        error.message.split("\n")[1],
        '  row 2, spend: "0.30000000000000004" has more than 4 decimal places',
      );
    });

    it("refuses counts and amounts of numeric Parquet types past the rules' bounds, by row", async () => {
      // Read as numbers by the fast path (record-stagers.ts `typedColumns`), as text by the
      // exact read: `rejection` checks that both refuse each file, whose row 2 alone is bad.
      const good = {
        impressions: "CAST(1 AS INTEGER)",
        clicks: "CAST(2147483647 AS BIGINT)",
        spend: "CAST(0.01 AS DECIMAL(18, 2))",
        conversions: "CAST(100000000000000 AS DECIMAL(19, 4))",
        revenue: "CAST(0 AS BIGINT)",
      };
      const cases: [keyof typeof good, string, string][] = [
        ["impressions", "CAST(-1 AS INTEGER)", '"-1" is negative'],
        ["clicks", "CAST(2147483648 AS BIGINT)", '"2147483648" is greater than 2147483647'],
        ["spend", "CAST(-0.01 AS DECIMAL(18, 2))", '"-0.01" is negative'],
        [
          "conversions",
          "CAST(100000000000000.0001 AS DECIMAL(19, 4))",
          '"100000000000000.0001" is greater than 100000000000000 (10^14)',
        ],
        [
          "revenue",
          "CAST(100000000000001 AS BIGINT)",
          '"100000000000001" is greater than 100000000000000 (10^14)',
        ],
      ];
      for (const [column, bad, message] of cases) {
        const path = join(fixtures.dir, `typed-${column}.parquet`);
        const values = Object.entries(good).map(
          ([name, value]) =>
            `${name === column ? `CASE WHEN i = 2 THEN ${bad} ELSE ${value} END` : value} AS ${name}`,
        );
        await fixtures.duckdb(`COPY (SELECT 'r-' || i AS record_id, DATE '2026-03-01' AS date, 'GB' AS market,
            'google_ads' AS data_source, 'search' AS channel, 'c-' || i AS campaign_id, 'n' AS campaign_name,
            ${values.join(", ")}, 'EUR' AS currency
          FROM range(1, 4) t(i) ORDER BY i) TO '${path}' (FORMAT parquet)`);
        assert.deepEqual((await fixtures.rejection(path)).errors, [{ line: 2, column, message }], column);
      }
    });

    it("names missing Parquet columns and rejects a file that is not Parquet", async () => {
      const path = join(fixtures.dir, "narrow.parquet");
      await fixtures.duckdb(`COPY (SELECT 'GB' AS market) TO '${path}' (FORMAT parquet)`);
      const problems = await fixtures.problemsOf(path);
      // Every column of the header in its order, but market (in the file) and record_id (optional: derived ids).
      assert.deepEqual(
        problems.map((problem) => problem.column),
        fixtures.HEADER.split(",").filter((column) => column !== "record_id" && column !== "market"),
      );
      assert.deepEqual(problems[0], { line: 0, column: "date", message: 'missing column "date"' });
      const notParquet = await fixtures.problemsOf(
        await fixtures.write("parquet", `${fixtures.HEADER}\n${fixtures.csvLine()}\n`),
      );
      assert.equal(notParquet.length, 1);
      assert.equal(notParquet[0]!.line, 0);
      assert.match(notParquet[0]!.message, /^cannot read the file as parquet: /);
    });
  });
});
