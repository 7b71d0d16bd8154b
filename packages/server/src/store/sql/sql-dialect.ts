/**
 * What differs between the SQL of DuckDB and of PostgreSQL, as far as the plans (reads/) and the
 * writes care (the interface: model/engine.ts `SqlDialect`): placeholders, date formatting and truncation, the wide
 * integer type of money products, the per-day rate table, how an instant column is read, and the
 * definition of `div_half_even`. Everything else the planner emits is
 * SQL both engines read the same way, so one planner serves both stores.
 */

import { CURRENCIES } from "@mdq/contract";
import type { SqlDialect } from "../model/engine.js";

/**
 * DuckDB's `fxRates`: the latest rate on or before `from` found by a `max(date)` per currency,
 * in one scan of the rates before `from`. With ECB's history since 1999 (25
 * years of 29 currencies, 279 k rows) a DuckDB statement with the day rates took 81–111 ms over
 * the whole of `fx_rates` against 25–27 ms through this, and 20–25 ms over the demo's one year.
 */
function duckDbFxRates(bind: (value: string) => string, { from, to }: { from: string; to: string }): string {
  const since = `SELECT currency, max(date) AS since FROM fx_rates WHERE date <= CAST(${bind(from)} AS DATE) GROUP BY currency`;
  const until = `r.date <= CAST(${bind(to)} AS DATE)`;
  return `SELECT r.currency, r.date, r.rate_e6 FROM fx_rates r LEFT JOIN (${since}) s ON s.currency = r.currency
    WHERE ${until} AND r.date >= coalesce(s.since, CAST(${bind(from)} AS DATE))`;
}

/** The longest list DuckDB's `oneOf` matches with `list_contains` rather than `IN`. */
export const DUCKDB_SHORT_LIST = 8;

/**
 * DuckDB's `oneOf`: a short list by `list_contains`, a longer one by `IN`. DuckDB guesses that an
 * `IN` list keeps a fifth of the rows, and under that guess its optimizer sorts the whole window
 * for a page past its first 5,000 rows (`TopN::CanOptimize` declines a Top-N whose LIMIT + OFFSET
 * is over 0.7% of the rows it expects): page 20 of 1,000 rows by SPEND at scale 600 (1.13 M rows
 * in the window) took 1,003 ms sorted whole, 348 ms as a Top-N. `list_contains` leaves the guess
 * alone, but tests each value in turn where `IN` becomes one hash join: over those 1.13 M rows a
 * filter of 5 values took 152 ms against 120, of 500 campaign ids 4,400 ms against 135. So a list
 * of more than `DUCKDB_SHORT_LIST` values (a filter of many campaigns, a grant of many markets)
 * keeps `IN` and its full sort.
 */
function duckDbOneOf(column: string, placeholders: readonly string[]): string {
  const list = placeholders.join(", ");
  return placeholders.length <= DUCKDB_SHORT_LIST
    ? `list_contains([${list}], ${column})`
    : `${column} IN (${list})`;
}

/** DuckDB: `?` placeholders, dates cast to text, HUGEINT, and an ASOF join for the rate of each day. */
export const DUCKDB_DIALECT: SqlDialect = {
  engine: "duckdb",
  placeholder: () => "?",
  // The same text as strftime '%Y-%m-%d' for every date a load accepts (years 1 to 9999), for
  // less: a 10,000-row packed page's statement 11.9 → 11.2 ms of CPU (issue 17, twelfth pass).
  formatDate: (expression) => `CAST(${expression} AS VARCHAR)`,
  weekStart: (expression) => `CAST(date_trunc('week', ${expression}) AS DATE)`,
  monthStart: (expression) => `CAST(date_trunc('month', ${expression}) AS DATE)`,
  wideInteger: "HUGEINT",
  double: "DOUBLE",
  // Epoch milliseconds: the driver's own timestamp values would need converting one by one.
  instant: (expression) => `epoch_ms(${expression})`,
  utf8: (expression) => `encode(${expression})`,
  // The order is said again: DuckDB aggregates the rows in parallel, in no set order.
  aggregateInOrder: (value, separator, orderBy) => `string_agg(${value}, ${separator} ORDER BY ${orderBy})`,
  // Not a constant, so not a Top-N (`TopN::CanOptimize`): DuckDB sorts the span and cuts it, which
  // costs less when the limit is most of the span, as a walk's is. Scale 150, one thread, CPU
  // (2026-11-29): a walk's first page, 5,000 rows over 6,300, 11.6–12.4 → 10.2–10.3 ms; 10,000
  // over 12,600, 17.7–20.4 → 13.1–14.6, over 25,200, 29.0–30.8 → 23.0–23.5. After a boundary
  // DuckDB sorted the span whole already (its filter lowers the estimate): 18.7 either way.
  spanLimit: (rows) => `(SELECT ${rows})`,
  oneOf: duckDbOneOf,
  // The codes present in fx_rates stand in for `currencies`: the same table as far as the rate
  // joins can tell (a code without rates gives NULL either way; FX files hold only supported
  // codes, never EUR), and DuckDB plans its ASOF join over a DISTINCT 2.5× faster than over VALUES.
  dayRates: (bind, { from, to }, base) => `
    SELECT c.currency, d.day, f.rate_e6
    FROM (SELECT CAST(unnest(generate_series(CAST(${bind(from)} AS DATE), CAST(${bind(to)} AS DATE), INTERVAL 1 DAY)) AS DATE) AS day) d
    CROSS JOIN (SELECT DISTINCT currency FROM fx_rates WHERE currency <> ${currencyLiteral(base)}) c
    ASOF LEFT JOIN (${duckDbFxRates(bind, { from, to })}) f ON f.currency = c.currency AND d.day >= f.date
    UNION ALL
    SELECT CAST(${bind(base)} AS VARCHAR), CAST(unnest(generate_series(CAST(${bind(from)} AS DATE), CAST(${bind(to)} AS DATE), INTERVAL 1 DAY)) AS DATE), 1000000`,
  fxRates: duckDbFxRates,
};

/**
 * A currency code as a SQL literal, checked against the closed list of currencies: the one way a
 * code enters SQL text (literals let the engines plan the rate joins per currency).
 */
export function currencyLiteral(code: string): string {
  if (!Object.hasOwn(CURRENCIES, code)) throw new Error(`not a supported currency code: ${code}`);
  return `'${code}'`;
}

/**
 * `(VALUES ('AUD' COLLATE "C"), ...)` of currency codes, in PostgreSQL: byte order like the
 * columns they meet, so sorting and joining them never pays for a locale's collation.
 */
function postgresCurrencyValues(currencies: readonly string[]): string {
  return `(VALUES ${currencies.map((code) => `(${currencyLiteral(code)} COLLATE "C")`).join(", ")})`;
}

/**
 * PostgreSQL: each of `currencies`' latest rate on or before `first` (a date expression), as
 * (currency, date, rate_e6) with that rate's own date: one probe of fx_rates' primary key per
 * currency, however long the FX history.
 */
function postgresLatestRates(currencies: readonly string[], first: string): string {
  return `SELECT b.currency, l.date, l.rate_e6 FROM ${postgresCurrencyValues(currencies)} AS b(currency)
      CROSS JOIN LATERAL (SELECT fx_rates.date, fx_rates.rate_e6 FROM fx_rates
        WHERE fx_rates.currency = b.currency AND fx_rates.date <= ${first}
        ORDER BY fx_rates.date DESC LIMIT 1) l`;
}

/** PostgreSQL: `fx_rates`' rows inside (first, last], two date expressions. */
function postgresRatesAfter(first: string, last: string): string {
  return `SELECT fx_rates.currency, fx_rates.date, fx_rates.rate_e6 FROM fx_rates
      WHERE fx_rates.date > ${first} AND fx_rates.date <= ${last}`;
}

/**
 * PostgreSQL: `$n` placeholders, numeric. A date is written as its own text, `YYYY-MM-DD` under
 * the ISO output style every session of a store sets (postgres-pool.ts): a third of `to_char`'s
 * cost, which converts the date to a timestamp and formats it field by field. Dates are truncated
 * as `timestamp` (without time zone) and days generated as date + integer, so the session's
 * TimeZone cannot move a day.
 *
 * The per-day rates carry each currency's rate forward with two window passes over the
 * (currency, day) grid: the grid is joined to the rates published inside the range (a range scan
 * of the date index) and to each currency's latest rate on or before its first day (one probe of
 * the primary key per currency); `known` counts the rates seen so far, so the days sharing a
 * `known` value share the rate that started them. That costs about a tenth of probing the latest
 * rate for every currency and day, and does not grow with the length of the FX history.
 */
export const POSTGRES_DIALECT: SqlDialect = {
  engine: "postgres",
  placeholder: (position) => `$${position}`,
  formatDate: (expression) => `CAST(${expression} AS text)`,
  utf8: (expression) => expression,
  // A plain aggregate over one subquery reads its rows in the order the subquery returns them,
  // and nothing lies between them to reorder them. An ORDER BY in the aggregate would sort them
  // again (PostgreSQL 15 does not see that they come sorted): a tenth of a records page's
  // statement, its whole text copied into a sort.
  aggregateInOrder: (value, separator) => `string_agg(${value}, ${separator})`,
  // A constant: the index hands the span's rows in order, and the limit stops its scan.
  spanLimit: (rows) => rows,
  oneOf: (column, placeholders) => `${column} IN (${placeholders.join(", ")})`,
  weekStart: (expression) => `CAST(date_trunc('week', CAST(${expression} AS timestamp)) AS date)`,
  monthStart: (expression) => `CAST(date_trunc('month', CAST(${expression} AS timestamp)) AS date)`,
  wideInteger: "numeric",
  double: "double precision",
  instant: (expression) => expression,
  dayRates: (bind, { from, to }, base, currencies) => {
    const first = `CAST(${bind(from)} AS date)`;
    const last = `CAST(${bind(to)} AS date)`;
    const days = `SELECT ${first} + g.n AS day FROM generate_series(0, ${last} - ${first}) AS g(n)`;
    return `
    SELECT k.currency, k.day, max(k.rate_e6) OVER (PARTITION BY k.currency, k.known) AS rate_e6
    FROM (
      SELECT c.currency, d.day, f.rate_e6, count(f.rate_e6) OVER (PARTITION BY c.currency ORDER BY d.day) AS known
      FROM ${postgresCurrencyValues(currencies)} AS c(currency)
      CROSS JOIN (${days}) d
      LEFT JOIN (
        ${postgresRatesAfter(first, last)}
        UNION ALL
        SELECT latest.currency, ${first}, latest.rate_e6 FROM (${postgresLatestRates(currencies, first)}) latest
      ) f ON f.currency = c.currency AND f.date = d.day
    ) k
    UNION ALL
    SELECT CAST(${bind(base)} AS text), d.day, 1000000 FROM (${days}) d`;
  },
  // The latest rate on or before `from` by a probe per currency: the `max(date)` per currency
  // that DuckDB takes read every rate before `from` (5.7–10.8 ms over the demo's year of rates,
  // 2.9–3.4 ms probed), more with every year of history.
  fxRates: (bind, { from, to }, currencies) => {
    const first = `CAST(${bind(from)} AS date)`;
    const last = `CAST(${bind(to)} AS date)`;
    return `${postgresRatesAfter(first, last)}
    UNION ALL
    ${postgresLatestRates(currencies, first)}`;
  },
};

/**
 * `div_half_even(n, d)`: n ÷ d for d > 0, rounded half to even. Integer division and remainder
 * truncate toward zero, so a negative n (a refund) is rounded by magnitude and given its sign
 * back: -8.5085 → -9, -25.5 → -26, -8.5 → -8.
 */
export const DIV_HALF_EVEN_MACRO = `CREATE OR REPLACE MACRO div_half_even(n, d) AS
  CASE WHEN n >= 0
    THEN (n // d) + CASE WHEN 2 * (n % d) > d OR (2 * (n % d) = d AND (n // d) % 2 = 1) THEN 1 ELSE 0 END
    ELSE -((-n // d) + CASE WHEN 2 * (-n % d) > d OR (2 * (-n % d) = d AND (-n // d) % 2 = 1) THEN 1 ELSE 0 END)
  END`;

/**
 * The same function in PostgreSQL, over numeric (`div` and `mod` truncate toward zero like
 * DuckDB's `//` and `%`). A single-SELECT, IMMUTABLE, non-STRICT SQL function, so the planner
 * inlines it into the query instead of calling it per row.
 */
export const DIV_HALF_EVEN_FUNCTION = `CREATE OR REPLACE FUNCTION div_half_even(n numeric, d numeric)
  RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN n >= 0
    THEN div(n, d) + CASE WHEN 2 * mod(n, d) > d OR (2 * mod(n, d) = d AND mod(div(n, d), 2) = 1) THEN 1 ELSE 0 END
    ELSE -(div(-n, d) + CASE WHEN 2 * mod(-n, d) > d OR (2 * mod(-n, d) = d AND mod(div(-n, d), 2) = 1) THEN 1 ELSE 0 END)
  END
$$`;

/**
 * PostgreSQL's `div_half_even` over bigint (migration 6): the planner converts a row's money on
 * bigint where it fits (sql/money-conversion.ts `convertedDivision`), as DuckDB's macro does on BIGINT;
 * PostgreSQL picks this one for bigint operands (integer `/` and `%` truncate toward zero too).
 * Over `numeric` the same conversions cost about 1.2 µs a row more (a million rows: 1.27–1.63 s
 * against 0.23 s, psql, 2026-11-26).
 */
export const DIV_HALF_EVEN_BIGINT_FUNCTION = `CREATE OR REPLACE FUNCTION div_half_even(n bigint, d bigint)
  RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN n >= 0
    THEN n / d + CASE WHEN 2 * (n % d) > d OR (2 * (n % d) = d AND (n / d) % 2 = 1) THEN 1 ELSE 0 END
    ELSE -((-n) / d + CASE WHEN 2 * ((-n) % d) > d OR (2 * ((-n) % d) = d AND ((-n) / d) % 2 = 1) THEN 1 ELSE 0 END)
  END
$$`;
