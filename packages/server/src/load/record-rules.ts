/**
 * The rule catalogue of a records file (CONTRACT §4, docs/load-format.md): the canonical columns,
 * the vocabularies they draw from and, per column, the rules a value must pass. A rule runs either
 * as SQL over every row or in TypeScript once per distinct value (`record-checks.ts` runs them).
 */
import {
  CURRENCY_CODES,
  DATA_SOURCE_PATTERN,
  isCalendarDate,
  isCurrencyCode,
  MARKET_CODES,
  RECORD_COLUMNS,
  type RecordColumn,
} from "@mdq/contract";
import { quoteValue } from "./load-errors.js";

export { MARKET_CODES, RECORD_COLUMNS, type RecordColumn };

/** A data source or channel id (the contract's pattern). */
export const ID_PATTERN = DATA_SOURCE_PATTERN;
const MAX_COUNT = "2147483647";
const MAX_AMOUNT = "100000000000000";

/** A rule run in SQL over every row: `bad(x)` is true for a bad non-empty value `x`. */
export interface SqlRule {
  kind: "sql";
  bad: (value: string) => string;
  message: (value: string) => string;
  /**
   * When set, a non-empty value passes the rule exactly when the whole of it matches this regular
   * expression (RE2), which matches neither an empty value nor U+001F: a load's fast path tests
   * several columns' patterns, and their values' presence, in one match over the values joined
   * by U+001F (record-staging.ts `badRow`).
   */
  wholeValue?: string;
  /**
   * When set, a value that passes the column's other rules breaks this one exactly when its
   * stored value (load/records-reader.ts `storedColumns`, NULL when it does not fit) is NULL or
   * above this: a load's fast path compares the number it stored instead of the text.
   */
  storedAtMost?: string;
}

/** A rule run in TypeScript once per distinct value of the column. */
export interface ValueRule {
  kind: "value";
  valid: (value: string) => boolean;
  message: (value: string) => string;
}

/** A rule of a column. */
export type Rule = SqlRule | ValueRule;

const intPart = (x: string) => `ltrim(split_part(${x}, '.', 1), '0')`;

/**
 * `test`, evaluated only for the rows where the cheap `guard` holds, false elsewhere. An AND would
 * read the same, but in a SELECT list DuckDB evaluates both sides of an AND for every row, and a
 * load's fast path computes its rules there (record-staging.ts): the bounds of counts and
 * amounts, split and trimmed for every row, cost a 1 M-row CSV load 0.6 s (issue 19). A CASE
 * evaluates its THEN only for the rows its WHEN selects.
 */
const onlyWhen = (guard: string, test: string) => `CASE WHEN ${guard} THEN (${test}) ELSE false END`;

const maxLength = (limit: number): SqlRule => ({
  kind: "sql",
  bad: (x) => `length(${x}) > ${limit}`,
  message: (value) => `longer than ${limit} characters (${value.length})`,
});

/** Control characters other than tab, line feed and carriage return (U+0000–U+001F). */
const noControlCharacters: SqlRule = {
  kind: "sql",
  bad: (x) => `regexp_matches(${x}, '[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f]')`,
  wholeValue: "[^\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f]+",
  message: (value) => {
    const code = [...value]
      .map((char) => char.codePointAt(0)!)
      .find((point) => point < 0x20 && ![9, 10, 13].includes(point));
    return `contains a control character (U+${(code ?? 0).toString(16).toUpperCase().padStart(4, "0")})`;
  },
};

const idRule = (what: string): ValueRule => ({
  kind: "value",
  valid: (value) => ID_PATTERN.test(value),
  message: (value) =>
    `${quoteValue(value)} is not a ${what} id: lower-case letters, digits, "_", "." and "-", ` +
    "starting with a letter or digit, at most 64 characters",
});

/** A rule that the whole value matches `pattern` (`SqlRule.wholeValue`). */
const matching = (pattern: string, message: (value: string) => string): SqlRule => ({
  kind: "sql",
  bad: (x) => `NOT regexp_full_match(${x}, '${pattern}')`,
  message,
  wholeValue: pattern,
});

const countRules: Rule[] = [
  matching("[0-9]+(\\.0+)?", (value) =>
    /^-\d/.test(value) ? `${quoteValue(value)} is negative` : `${quoteValue(value)} is not a whole number`,
  ),
  {
    kind: "sql",
    storedAtMost: MAX_COUNT,
    // Only long values need the exact test: a CASE, not an AND, which DuckDB evaluates whole for
    // every row of a SELECT list (`onlyWhen`).
    bad: (x) =>
      onlyWhen(
        `length(${x}) >= 10`,
        `length(${intPart(x)}) > 10 OR (length(${intPart(x)}) = 10 AND ${intPart(x)} > '${MAX_COUNT}')`,
      ),
    message: (value) => `${quoteValue(value)} is greater than ${MAX_COUNT}`,
  },
];

const amountRules: Rule[] = [
  // Digits beyond the fourth decimal place are accepted only when they are zeros.
  matching("[0-9]+(\\.[0-9]{1,4}0*)?", (value) => {
    if (/^-\d/.test(value)) return `${quoteValue(value)} is negative`;
    if (/^\d+\.\d+$/.test(value)) return `${quoteValue(value)} has more than 4 decimal places`;
    return `${quoteValue(value)} is not a decimal number (digits, optionally "." and up to 4 decimals)`;
  }),
  {
    kind: "sql",
    storedAtMost: `${MAX_AMOUNT}0000`,
    // An integer part of 15 digits or more needs at least 15 characters (`onlyWhen`).
    bad: (x) =>
      onlyWhen(
        `length(${x}) >= 15`,
        `strpos(${x} || '.', '.') > 15 AND (length(${intPart(x)}) > 15
          OR (length(${intPart(x)}) = 15 AND (${intPart(x)} > '${MAX_AMOUNT}'
            OR rtrim(split_part(${x}, '.', 2), '0') <> '')))`,
      ),
    message: (value) => `${quoteValue(value)} is greater than ${MAX_AMOUNT} (10^14)`,
  },
];

/** The rules of each column, after "the value is present". */
export const COLUMN_RULES: Record<RecordColumn, Rule[]> = {
  record_id: [maxLength(128), noControlCharacters],
  date: [
    {
      kind: "value",
      valid: isCalendarDate,
      message: (value) => `${quoteValue(value)} is not a calendar day written YYYY-MM-DD`,
    },
  ],
  market: [
    {
      kind: "value",
      valid: (value) => MARKET_CODES.has(value),
      message: (value) =>
        `${quoteValue(value)} is not an ISO 3166-1 alpha-2 country code (upper case, e.g. "GB")`,
    },
  ],
  data_source: [idRule("data source")],
  channel: [idRule("channel")],
  campaign_id: [maxLength(128), noControlCharacters],
  campaign_name: [maxLength(256), noControlCharacters],
  impressions: countRules,
  clicks: countRules,
  spend: amountRules,
  conversions: amountRules,
  revenue: amountRules,
  currency: [
    {
      kind: "value",
      valid: isCurrencyCode,
      message: (value) => `${quoteValue(value)} is not a supported currency (${CURRENCY_CODES.join(", ")})`,
    },
  ],
};

/** The columns holding decimal amounts. */
export const AMOUNT_COLUMNS = new Set<RecordColumn>(["spend", "conversions", "revenue"]);

/** The columns holding whole counts. */
export const COUNT_COLUMNS = new Set<RecordColumn>(["impressions", "clicks"]);

/**
 * The SQL flag of a bad value `x` of a count or amount column read with a numeric type that holds
 * it exactly (`typedColumns`): the bounds its text rules check, as numbers. A value of such
 * a type is a whole number (counts) or has at most 4 decimals (amounts) by its type, so the
 * bounds are all that is left of the rules.
 */
export function typedNumberBad(column: RecordColumn, x: string): string {
  return `${x} < 0 OR ${x} > ${COUNT_COLUMNS.has(column) ? MAX_COUNT : MAX_AMOUNT}`;
}

/**
 * Amounts read from binary floating point (JSON numbers, Parquet DOUBLE) must fit in 15 digits.
 * Only a value longer than 15 characters can have more: the rest skip the test (`onlyWhen`; a
 * 1 M-row NDJSON file of JSON numbers spent 190 ms of its load in it, issue 19).
 */
export const floatPrecisionRule = (isFloat: string): SqlRule => ({
  kind: "sql",
  bad: (x) => onlyWhen(`${isFloat} AND length(${x}) > 15`, `length(trim(replace(${x}, '.', ''), '0')) > 15`),
  message: (value) =>
    `${quoteValue(value)} has more than 15 significant digits, more than a binary floating-point ` +
    "number holds exactly; write it as a string",
});

/** The columns that identify a record when the file gives no record id. */
export const NATURAL_KEY: RecordColumn[] = ["date", "market", "data_source", "campaign_id"];
