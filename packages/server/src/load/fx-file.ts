/**
 * Reading and checking an FX reference-rate file for `mdq fx load`: rates are units of a currency
 * per 1 EUR, by day, as the ECB publishes them (docs/load-format.md). Two CSV layouts:
 *
 * - wide, the ECB's own (`eurofxref-hist.csv`, `eurofxref.csv`): `Date,USD,JPY,…`, one row per
 *   day, "N/A" where a currency has no rate, often a trailing comma;
 * - long: `date,currency,rate`, one row per rate.
 *
 * FX files are small (the ECB's history since 1999 is about 7,000 rows), so rows are checked in
 * TypeScript after DuckDB has parsed the CSV.
 */
import {
  BASE_CURRENCY,
  CURRENCY_CODE_PATTERN,
  type CurrencyCode,
  isCalendarDate,
  isCurrencyCode,
} from "@mdq/contract";
import type { FxRate } from "../store/model/store.js";
import {
  checkLoadFile,
  csvFieldColumn,
  csvRecordLines,
  openScratch,
  readCsvHeader,
  readCsvRows,
} from "./file-staging.js";
import { FxFileError, type LoadProblem, quoteValue } from "./load-errors.js";

export { FxFileError } from "./load-errors.js";

/** Options of `readFxFile`. */
export interface ReadFxOptions {
  /** Skip currencies MDQ does not support (the ECB history lists retired ones) instead of failing. */
  ignoreUnknownCurrencies?: boolean;
}

/** A checked FX file. */
export interface FxFile {
  layout: "wide" | "long";
  /** Every rate, in file order. */
  rates: FxRate[];
  /** Distinct days with at least one rate, ascending. */
  days: string[];
  /** Distinct currencies with at least one rate, alphabetical. */
  currencies: CurrencyCode[];
  /** Unsupported currency codes that were skipped (`ignoreUnknownCurrencies`), alphabetical. */
  ignoredCurrencies: string[];
}

const MISSING_RATE = new Set(["", "N/A"]);
const RATE_PATTERN = /^(\d{1,12})(?:\.(\d{1,6})0*)?$/;
const ECB_DAY_PATTERN = /^(\d{1,2}) ([A-Za-z]+) (\d{4})$/;
const MONTHS = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
];

/**
 * Reads and checks an FX rate file; rejects with an `FxFileError` (first problems, with line
 * numbers) if any row is bad.
 *
 * @example
 * const { rates } = await readFxFile("eurofxref-hist.csv", { ignoreUnknownCurrencies: true });
 * await store.upsertFxRates(rates);
 */
export async function readFxFile(path: string, options: ReadFxOptions = {}): Promise<FxFile> {
  if (!/\.csv$/i.test(path)) {
    throw new FxFileError(path, [{ line: 0, message: "FX rates are read from a .csv file" }]);
  }
  const fileProblem = await checkLoadFile(path);
  if (fileProblem) throw new FxFileError(path, [fileProblem]);
  const header = await readCsvHeader(path);
  if (!Array.isArray(header)) throw new FxFileError(path, [header]);
  const names = header.map((name) => name.trim());
  const lowered = names.map((name) => name.toLowerCase());
  const isLong = ["date", "currency", "rate"].every((name) => lowered.includes(name));
  if (!isLong && !lowered.includes("date")) {
    throw new FxFileError(path, [
      {
        line: 1,
        message: 'the header needs a "Date" column and one column per currency, or "date,currency,rate"',
      },
    ]);
  }

  const scratch = await openScratch();
  let rows: (string | null)[][];
  try {
    const structural = await readCsvRows(scratch.connection, path, "file_rows", header.length);
    if (structural.length > 0) throw new FxFileError(path, structural);
    const fields = header.map((_, index) => csvFieldColumn(index)).join(", ");
    const reader = await scratch.connection.runAndReadAll(`SELECT ${fields} FROM file_rows`);
    rows = reader.getRowsJS() as (string | null)[][];
  } catch (error) {
    if (error instanceof FxFileError) throw error;
    throw new FxFileError(path, [{ line: 0, message: `cannot read the file as CSV: ${String(error)}` }]);
  } finally {
    scratch.close();
  }
  if (rows.length === 0) throw new FxFileError(path, [{ line: 0, message: "the file holds no rates" }]);
  const lines = await csvRecordLines(path);
  const read = isLong
    ? readLong(rows, lines, lowered, options)
    : readWide(rows, lines, names, lowered.indexOf("date"), options);
  if (read.problems.length > 0) {
    read.problems.sort((a, b) => a.line - b.line);
    throw new FxFileError(path, read.problems, { rowCount: rows.length });
  }
  if (read.rates.length === 0) {
    throw new FxFileError(path, [{ line: 0, message: "the file holds no rates" }], { rowCount: rows.length });
  }
  return {
    layout: isLong ? "long" : "wide",
    rates: read.rates,
    days: [...new Set(read.rates.map((rate) => rate.date))].sort(),
    currencies: [...new Set(read.rates.map((rate) => rate.currency))].sort(),
    ignoredCurrencies: [...read.ignored].sort(),
  };
}

interface Read {
  rates: FxRate[];
  problems: LoadProblem[];
  ignored: Set<string>;
}

/** The ECB layout: a date column, then one column per currency. */
function readWide(
  rows: (string | null)[][],
  lines: number[],
  names: string[],
  dateIndex: number,
  options: ReadFxOptions,
): Read {
  const read: Read = { rates: [], problems: [], ignored: new Set() };
  const currencyColumns: { index: number; currency: CurrencyCode }[] = [];
  const seen = new Set<string>();
  names.forEach((name, index) => {
    // The ECB's files end every line with a comma: an unnamed, empty last column.
    if (index === dateIndex || name === "") return;
    const problem = checkCurrency(name, options, read.ignored);
    if (problem) read.problems.push({ line: 1, column: name, message: problem });
    else if (seen.has(name))
      read.problems.push({ line: 1, column: name, message: "the currency appears twice" });
    else if (isCurrencyCode(name)) currencyColumns.push({ index, currency: name });
    seen.add(name);
  });
  const firstLineOfDay = new Map<string, number>();
  rows.forEach((row, rowIndex) => {
    const line = lines[rowIndex] ?? rowIndex + 2;
    const dateColumn = names[dateIndex]!;
    const date = parseDay(row[dateIndex]);
    if (date === undefined) {
      read.problems.push({ line, column: dateColumn, message: describeBadDay(row[dateIndex]) });
      return;
    }
    const first = firstLineOfDay.get(date);
    if (first !== undefined) {
      read.problems.push({
        line,
        column: dateColumn,
        message: `duplicate date ${date}, first on line ${first}`,
      });
      return;
    }
    firstLineOfDay.set(date, line);
    for (const { index, currency } of currencyColumns) {
      const text = (row[index] ?? "").trim();
      if (MISSING_RATE.has(text)) continue;
      const rateE6 = parseRate(text);
      if (rateE6 === undefined)
        read.problems.push({ line, column: names[index]!, message: describeBadRate(text) });
      else read.rates.push({ currency, date, rateE6 });
    }
  });
  return read;
}

/** One rate per row: `date,currency,rate`. */
function readLong(
  rows: (string | null)[][],
  lines: number[],
  lowered: string[],
  options: ReadFxOptions,
): Read {
  const read: Read = { rates: [], problems: [], ignored: new Set() };
  const [dateIndex, currencyIndex, rateIndex] = ["date", "currency", "rate"].map((name) =>
    lowered.indexOf(name),
  );
  const firstLineOfRate = new Map<string, number>();
  rows.forEach((row, rowIndex) => {
    const line = lines[rowIndex] ?? rowIndex + 2;
    const date = parseDay(row[dateIndex!]);
    const currency = (row[currencyIndex!] ?? "").trim();
    const rateText = (row[rateIndex!] ?? "").trim();
    const problems: LoadProblem[] = [];
    if (date === undefined) problems.push({ line, column: "date", message: describeBadDay(row[dateIndex!]) });
    const currencyProblem = checkCurrency(currency, options, read.ignored);
    if (currencyProblem) problems.push({ line, column: "currency", message: currencyProblem });
    if (!isCurrencyCode(currency) || currency === BASE_CURRENCY) {
      read.problems.push(...problems);
      return;
    }
    const rateE6 = parseRate(rateText);
    if (rateE6 === undefined) problems.push({ line, column: "rate", message: describeBadRate(rateText) });
    if (problems.length > 0 || date === undefined || rateE6 === undefined) {
      read.problems.push(...problems);
      return;
    }
    const key = `${currency} ${date}`;
    const first = firstLineOfRate.get(key);
    if (first !== undefined) {
      read.problems.push({
        line,
        message: `duplicate rate for ${currency} on ${date}, first on line ${first}`,
      });
      return;
    }
    firstLineOfRate.set(key, line);
    read.rates.push({ currency, date, rateE6 });
  });
  return read;
}

/** Why `code` cannot be loaded, or undefined when it can (or is skipped, recorded in `ignored`). */
function checkCurrency(code: string, options: ReadFxOptions, ignored: Set<string>): string | undefined {
  if (code === BASE_CURRENCY) return "EUR is the base currency: its rate is 1 by definition";
  if (!CURRENCY_CODE_PATTERN.test(code)) return `${quoteValue(code)} is not an ISO 4217 currency code`;
  if (isCurrencyCode(code)) return undefined;
  if (options.ignoreUnknownCurrencies) {
    ignored.add(code);
    return undefined;
  }
  return `${quoteValue(code)} is not a supported currency`;
}

/** A day as `YYYY-MM-DD`, from `YYYY-MM-DD` or the ECB daily file's `21 November 2025`. */
function parseDay(text: string | null | undefined): string | undefined {
  const value = (text ?? "").trim();
  if (isCalendarDate(value)) return value;
  const match = ECB_DAY_PATTERN.exec(value);
  if (!match) return undefined;
  const month = MONTHS.indexOf(match[2]!.toLowerCase()) + 1;
  if (month === 0) return undefined;
  const day = `${match[3]}-${String(month).padStart(2, "0")}-${match[1]!.padStart(2, "0")}`;
  return isCalendarDate(day) ? day : undefined;
}

function describeBadDay(text: string | null | undefined): string {
  const value = (text ?? "").trim();
  return value === "" ? "missing date" : `${quoteValue(value)} is not a calendar day written YYYY-MM-DD`;
}

/** A rate in millionths, exactly (no floating point), or undefined unless positive with ≤ 6 decimals. */
function parseRate(text: string): bigint | undefined {
  const match = RATE_PATTERN.exec(text);
  if (!match) return undefined;
  const rateE6 = BigInt(match[1]!) * 1_000_000n + BigInt((match[2] ?? "").padEnd(6, "0"));
  return rateE6 > 0n ? rateE6 : undefined;
}

function describeBadRate(text: string): string {
  if (text === "") return "missing rate";
  if (/^\d+\.\d{7,}$/.test(text)) return `${quoteValue(text)} has more than 6 decimal places`;
  if (/^0*(\.0*)?$/.test(text)) return `${quoteValue(text)} is not positive`;
  return `${quoteValue(text)} is not a positive decimal (units per 1 EUR, at most 6 decimal places)`;
}
