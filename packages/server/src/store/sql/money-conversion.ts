/**
 * Money converted in SQL (CONTRACT §3 rule 7): the per-day rate table, the rate joins and the exact
 * half-even conversions of a stored amount to a target currency, shared by every plan that
 * converts (records sorted by money, aggregates, the export).
 */
import { BASE_CURRENCY, CURRENCIES, CURRENCY_CODES, type CurrencyCode } from "../../currencies.js";
import type { SqlDialect } from "../model/engine.js";
import type { RowScope } from "../model/query-request.js";
import { currencyLiteral } from "./sql-dialect.js";
import type { Statement } from "./statement.js";

export const MONEY_COLUMNS = { spend: "spend_e4", revenue: "revenue_e4" } as const;

/** The currency a plan converts to: checked once, before any of its SQL is written. */
export interface Target {
  code: CurrencyCode;
  /** The code as a SQL literal (sql-dialect.ts `currencyLiteral`, the one check). */
  literal: string;
  minorUnits: number;
}

export function targetOf(code: CurrencyCode): Target {
  const literal = currencyLiteral(code);
  return { code, literal, minorUnits: CURRENCIES[code].minorUnits };
}

/** Currencies quoted against the base: every supported one but EUR (whose rate is 1 by definition). */
export const RATED_CURRENCIES = CURRENCY_CODES.filter((code) => code !== BASE_CURRENCY);

/**
 * The per-day rate table for the range: every supported currency, each day carrying the latest
 * rate on or before it (NULL before its first), plus EUR at 1.
 */
export function dayRatesCte(scope: RowScope, statement: Statement): string {
  return `day_rates AS (${statement.dialect.dayRates(statement.bind, scope, BASE_CURRENCY, RATED_CURRENCIES)}
  )`;
}

/** Joins of each row to its source-currency rate (`s`) and the target currency's rate (`t`). */
export function rateJoins(target: Target, statement: Statement): string {
  return `LEFT JOIN day_rates s ON s.currency = r.currency AND s.day = r.date
    LEFT JOIN day_rates t ON t.currency = ${statement.bind(target.code)} AND t.day = r.date`;
}

/**
 * Whether a row's conversion of `column` stays inside BIGINT in `div_half_even(n, d)`: n, the
 * amount × the target rate × `scale`, under 9 × 10¹⁸ (judged from doubles, so the test itself
 * cannot overflow, with room for their rounding below 2⁶³), and d, the source rate × at most 10⁴,
 * under 4 × 10¹⁸ (the macro doubles a remainder below d). Rates are positive (schema); amounts are
 * too by the load rules, but the test does not rely on it.
 */
function fitsBigint(column: string, scale: number, dialect: SqlDialect): string {
  const double = dialect.double;
  return `abs(CAST(r.${column} AS ${double})) * t.rate_e6 < CAST(${9e18 / scale} AS ${double})
    AND s.rate_e6 < ${4e18 / 10_000}`;
}

/**
 * `div_half_even(n, d)` of a converted amount: on BIGINT where the row's values allow it
 * (`fitsBigint`: nearly every row), else on the dialect's wide integer, with the same
 * exact result. The wide types are several times slower a row: DuckDB's HUGEINT divides in
 * software (a 94,500-row export's SELECT took 375 ms on HUGEINT, 121 ms on BIGINT), PostgreSQL's
 * `numeric` is arbitrary precision (about 1.2 µs a row more).
 */
function convertedDivision(
  column: string,
  scale: number,
  n: (value: string, rate: string) => string,
  d: (rate: string) => string,
  dialect: SqlDialect,
): string {
  const wide = dialect.wideInteger;
  return `CASE WHEN ${fitsBigint(column, scale, dialect)}
      THEN div_half_even(${n(`r.${column}`, "t.rate_e6")}, ${d("s.rate_e6")})
      ELSE div_half_even(${n(`CAST(r.${column} AS ${wide})`, "t.rate_e6")}, ${d(`CAST(s.rate_e6 AS ${wide})`)}) END`;
}

/** The record's amount converted to the target currency, in minor units (exact, half-even). */
export function convertedMinor(column: string, target: Target, dialect: SqlDialect): string {
  const toMinor = 10 ** (4 - target.minorUnits);
  const converted = convertedDivision(
    column,
    1,
    (value, rate) => `${value} * ${rate}`,
    (rate) => `${rate} * ${toMinor}`,
    dialect,
  );
  // A stored amount (at most 10¹⁸ ten-thousandths) divides on BIGINT as it is.
  return `CASE WHEN r.currency = ${target.literal} THEN div_half_even(r.${column}, ${toMinor})
    ELSE ${converted} END`;
}

/** The record's amount converted to the target currency in 10⁻⁸ units (exact, half-even). */
export function convertedE8(column: string, target: Target, dialect: SqlDialect): string {
  const converted = convertedDivision(
    column,
    10_000,
    (value, rate) => `${value} * ${rate} * 10000`,
    (rate) => rate,
    dialect,
  );
  return `CASE WHEN r.currency = ${target.literal} THEN CAST(r.${column} AS ${dialect.wideInteger}) * 10000
    ELSE ${converted} END`;
}

/** Condition true for a row whose conversion lacks a rate. */
export function missingRate(target: Target): string {
  return `(r.currency <> ${target.literal} AND (s.rate_e6 IS NULL OR t.rate_e6 IS NULL))`;
}

export function money(minorExpression: string, target: Target, dialect: SqlDialect): string {
  const minorUnits = target.minorUnits;
  return `CAST(${minorExpression} AS ${dialect.double}) / ${10 ** minorUnits}`;
}
