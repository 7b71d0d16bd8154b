/**
 * Reading FX reference-rate files for `mdq fx load` (docs/load-format.md): the ECB's wide layout
 * (history and daily file, "N/A", trailing commas), the long `date,currency,rate` layout, rates
 * exact in millionths, and every rejection with its exact line, column and message.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { FxFileError, type ReadFxOptions, readFxFile } from "../src/load/fx-file.js";
import type { LoadProblem } from "../src/load/load-errors.js";

let dir: string;
let fileNumber = 0;

async function write(content: string | Buffer, extension = "csv"): Promise<string> {
  fileNumber += 1;
  const path = join(dir, `rates-${fileNumber}.${extension}`);
  await writeFile(path, content);
  return path;
}

async function problemsOf(path: string, options?: ReadFxOptions): Promise<LoadProblem[]> {
  try {
    await readFxFile(path, options);
  } catch (error) {
    assert.ok(error instanceof FxFileError, `expected an FxFileError, got ${String(error)}`);
    return error.errors;
  }
  assert.fail(`${path} was accepted`);
}

/** The start of the ECB's eurofxref-hist.csv, as published: retired currencies, N/A, a trailing comma. */
const ECB_HISTORY = [
  "Date,USD,JPY,BGN,CYP,CZK,GBP,IDR,",
  "2024-11-22,1.0412,160.84,1.9558,N/A,25.265,0.83313,16634.94,",
  "2024-11-21,1.0470,161.50,1.9558,N/A,25.305,0.8333,16679.30,",
  "1999-01-04,1.1789,133.73,N/A,0.58231,35.107,0.7111,N/A,",
  "",
].join("\n");

describe("readFxFile", () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "mdq-fx-file-"));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  describe("the ECB's wide layout", () => {
    it("reads eurofxref-hist.csv exactly, skipping N/A and the unnamed last column", async () => {
      const file = await readFxFile(await write(ECB_HISTORY), { ignoreUnknownCurrencies: true });
      assert.deepEqual(file, {
        layout: "wide",
        rates: [
          { currency: "USD", date: "2024-11-22", rateE6: 1_041_200n },
          { currency: "JPY", date: "2024-11-22", rateE6: 160_840_000n },
          { currency: "CZK", date: "2024-11-22", rateE6: 25_265_000n },
          { currency: "GBP", date: "2024-11-22", rateE6: 833_130n },
          { currency: "IDR", date: "2024-11-22", rateE6: 16_634_940_000n },
          { currency: "USD", date: "2024-11-21", rateE6: 1_047_000n },
          { currency: "JPY", date: "2024-11-21", rateE6: 161_500_000n },
          { currency: "CZK", date: "2024-11-21", rateE6: 25_305_000n },
          { currency: "GBP", date: "2024-11-21", rateE6: 833_300n },
          { currency: "IDR", date: "2024-11-21", rateE6: 16_679_300_000n },
          { currency: "USD", date: "1999-01-04", rateE6: 1_178_900n },
          { currency: "JPY", date: "1999-01-04", rateE6: 133_730_000n },
          { currency: "CZK", date: "1999-01-04", rateE6: 35_107_000n },
          { currency: "GBP", date: "1999-01-04", rateE6: 711_100n },
        ],
        days: ["1999-01-04", "2024-11-21", "2024-11-22"],
        currencies: ["CZK", "GBP", "IDR", "JPY", "USD"],
        ignoredCurrencies: ["BGN", "CYP"],
      });
    });

    it("rejects currencies MDQ does not support unless told to ignore them", async () => {
      assert.deepEqual(await problemsOf(await write(ECB_HISTORY)), [
        { line: 1, column: "BGN", message: '"BGN" is not a supported currency' },
        { line: 1, column: "CYP", message: '"CYP" is not a supported currency' },
      ]);
    });

    it("reads the ECB's daily eurofxref.csv (spaces after commas, '21 November 2025')", async () => {
      const path = await write(
        "Date, USD, JPY, BGN, GBP, \n21 November 2025, 1.1512, 181.08, 1.9558, 0.88050, \n",
      );
      const file = await readFxFile(path, { ignoreUnknownCurrencies: true });
      assert.deepEqual(file.rates, [
        { currency: "USD", date: "2025-11-21", rateE6: 1_151_200n },
        { currency: "JPY", date: "2025-11-21", rateE6: 181_080_000n },
        { currency: "GBP", date: "2025-11-21", rateE6: 880_500n },
      ]);
    });

    it("rejects an EUR column even when unknown currencies are ignored", async () => {
      const path = await write("Date,USD,EUR\n2024-11-22,1.0412,1\n");
      assert.deepEqual(await problemsOf(path, { ignoreUnknownCurrencies: true }), [
        { line: 1, column: "EUR", message: "EUR is the base currency: its rate is 1 by definition" },
      ]);
    });

    it("rejects bad rates and dates on their lines, and a repeated date", async () => {
      const path = await write(
        [
          "Date,USD,JPY,",
          "2024-11-22,1.0412,0,",
          "2024-02-30,1.0470,161.50,",
          "2024-11-20,-1.2,1.1234567,",
          "2024-11-22,1.05,abc,",
        ].join("\n"),
      );
      assert.deepEqual(await problemsOf(path), [
        { line: 2, column: "JPY", message: '"0" is not positive' },
        { line: 3, column: "Date", message: '"2024-02-30" is not a calendar day written YYYY-MM-DD' },
        {
          line: 4,
          column: "USD",
          message: '"-1.2" is not a positive decimal (units per 1 EUR, at most 6 decimal places)',
        },
        { line: 4, column: "JPY", message: '"1.1234567" has more than 6 decimal places' },
        { line: 5, column: "Date", message: "duplicate date 2024-11-22, first on line 2" },
      ]);
    });
  });

  describe("the long layout", () => {
    it("reads date,currency,rate rows exactly, in any column order and case", async () => {
      const path = await write(
        "Rate,Currency,Date\r\n1.123456,USD,2024-11-22\r\n16634.94,IDR,2024-11-22\r\n1.10000000,GBP,2024-11-21\r\n",
      );
      assert.deepEqual(await readFxFile(path), {
        layout: "long",
        rates: [
          { currency: "USD", date: "2024-11-22", rateE6: 1_123_456n },
          { currency: "IDR", date: "2024-11-22", rateE6: 16_634_940_000n },
          { currency: "GBP", date: "2024-11-21", rateE6: 1_100_000n },
        ],
        days: ["2024-11-21", "2024-11-22"],
        currencies: ["GBP", "IDR", "USD"],
        ignoredCurrencies: [],
      });
    });

    it("rejects bad rows on their lines and a repeated currency and date naming the first line", async () => {
      const path = await write(
        [
          "date,currency,rate",
          "2024-11-22,USD,1.0412",
          "2024-11-22,EUR,1",
          "2024-11-22,BGN,1.9558",
          "2024-11-22,usd,1.0412",
          "2024-11-22,JPY,",
          "2024-13-01,JPY,160.84",
          "2024-11-22,USD,1.05",
        ].join("\n"),
      );
      assert.deepEqual(await problemsOf(path), [
        { line: 3, column: "currency", message: "EUR is the base currency: its rate is 1 by definition" },
        { line: 4, column: "currency", message: '"BGN" is not a supported currency' },
        { line: 5, column: "currency", message: '"usd" is not an ISO 4217 currency code' },
        { line: 6, column: "rate", message: "missing rate" },
        { line: 7, column: "date", message: '"2024-13-01" is not a calendar day written YYYY-MM-DD' },
        { line: 8, message: "duplicate rate for USD on 2024-11-22, first on line 2" },
      ]);
    });

    it("skips rows of unsupported currencies when told to", async () => {
      const path = await write("date,currency,rate\n2024-11-22,BGN,1.9558\n2024-11-22,USD,1.0412\n");
      const file = await readFxFile(path, { ignoreUnknownCurrencies: true });
      assert.deepEqual(file.rates, [{ currency: "USD", date: "2024-11-22", rateE6: 1_041_200n }]);
      assert.deepEqual(file.ignoredCurrencies, ["BGN"]);
    });
  });

  describe("file problems", () => {
    it("rejects a file that is not .csv, an empty file, and a file without rates", async () => {
      assert.deepEqual(await problemsOf(await write("Date,USD\n2024-11-22,1\n", "txt")), [
        { line: 0, message: "FX rates are read from a .csv file" },
      ]);
      assert.deepEqual(await problemsOf(await write("")), [{ line: 0, message: "the file is empty" }]);
      assert.deepEqual(await problemsOf(await write("Date,USD,\n")), [
        { line: 0, message: "the file holds no rates" },
      ]);
      assert.deepEqual(await problemsOf(await write("Date,USD,\n2024-11-22,N/A,\n")), [
        { line: 0, message: "the file holds no rates" },
      ]);
    });

    it("rejects a header with neither a Date column nor date,currency,rate", async () => {
      assert.deepEqual(await problemsOf(await write("Day,USD\n2024-11-22,1.04\n")), [
        {
          line: 1,
          message: 'the header needs a "Date" column and one column per currency, or "date,currency,rate"',
        },
      ]);
    });

    it("rejects rows with the wrong number of fields and text that is not UTF-8", async () => {
      assert.deepEqual(
        await problemsOf(await write("Date,USD,JPY\n2024-11-22,1.04\n2024-11-21,1.04,160,1\n")),
        [
          { line: 2, message: "expected 3 fields, found 2" },
          { line: 3, message: "expected 3 fields, found 4" },
        ],
      );
      assert.deepEqual(
        await problemsOf(
          await write(Buffer.from("Date,USD\n2024-11-22,1.04\n2024-11-21,1.0\xe9\n", "latin1")),
        ),
        [{ line: 3, message: "not valid UTF-8 (save the file as UTF-8)" }],
      );
    });

    it("describes the rejection in its message with the line of each problem", async () => {
      const path = await write("Date,USD\n2024-11-22,x\n");
      await assert.rejects(readFxFile(path), {
        name: "FxFileError",
        message: `${path}: rejected, nothing loaded (1 problem)\n  line 2, USD: "x" is not a positive decimal (units per 1 EUR, at most 6 decimal places)`,
      });
    });
  });
});
