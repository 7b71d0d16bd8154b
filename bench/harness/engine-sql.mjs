// The engine's own answer to each question of the growth bench (bench/scale.mjs): a SELECT written
// here by hand — the records, the brand's grants, the range, the FX conversion join — run by the
// bench process itself against the same data MDQ serves (DuckDB: a read-only copy of the file;
// PostgreSQL: the same database), so that MDQ's first answer can be set beside what the engine
// needs for the same numbers. It never calls MDQ's planner: what MDQ computes is what is checked.
//
// Money follows CONTRACT §3 rule 7 exactly as MDQ must: an amount is stored in ten-thousandths
// of its source currency, rates in millionths per EUR (EUR's is 1). A record's amount in T is
// amount × rate(T) ÷ rate(source), rounded half-even to T's minor unit; an aggregate converts its
// rows to 10⁻⁸ (half-even) — rows of one source currency and day share a rate, so their sum is
// converted at once — sums, and rounds the sum half-even to T's minor unit. A day's rate is the
// latest on or before it.
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import pg from "pg";
import { CURRENCIES, DUCKDB_FILE, POSTGRES_SESSION_OPTIONS } from "../../packages/server/dist/src/index.js";

/** n ÷ d rounded half to even (d > 0; a negative n is rounded by magnitude), as each engine spells it. */
const HALF_EVEN_BODY = {
  duckdb: `CASE WHEN n >= 0
    THEN (n // d) + CASE WHEN 2 * (n % d) > d OR (2 * (n % d) = d AND (n // d) % 2 = 1) THEN 1 ELSE 0 END
    ELSE -((-n // d) + CASE WHEN 2 * (-n % d) > d OR (2 * (-n % d) = d AND (-n // d) % 2 = 1) THEN 1 ELSE 0 END)
  END`,
  postgres: `SELECT CASE WHEN n >= 0
    THEN div(n, d) + CASE WHEN 2 * mod(n, d) > d OR (2 * mod(n, d) = d AND mod(div(n, d), 2) = 1) THEN 1 ELSE 0 END
    ELSE -(div(-n, d) + CASE WHEN 2 * mod(-n, d) > d OR (2 * mod(-n, d) = d AND mod(div(-n, d), 2) = 1) THEN 1 ELSE 0 END)
  END`,
  // PostgreSQL's bigint overload (integer `/` and `%` truncate toward zero, as `div` and `mod` do).
  postgresBigint: `SELECT CASE WHEN n >= 0
    THEN n / d + CASE WHEN 2 * (n % d) > d OR (2 * (n % d) = d AND (n / d) % 2 = 1) THEN 1 ELSE 0 END
    ELSE -((-n) / d + CASE WHEN 2 * ((-n) % d) > d OR (2 * ((-n) % d) = d AND ((-n) / d) % 2 = 1) THEN 1 ELSE 0 END)
  END`,
};

/** What the two engines spell differently in the SQL below. */
const DIALECTS = {
  duckdb: {
    placeholder: () => "?",
    day: (expression) => `strftime(${expression}, '%Y-%m-%d')`,
    week: (expression) => `CAST(date_trunc('week', ${expression}) AS DATE)`,
    month: (expression) => `CAST(date_trunc('month', ${expression}) AS DATE)`,
    wide: "HUGEINT",
    double: "DOUBLE",
    // Each currency's rate on each day of the range: an ASOF join finds the latest on or before it.
    rates: (bind, from, to, currencies) => `
      SELECT c.currency, d.day, CASE WHEN c.currency = 'EUR' THEN 1000000 ELSE f.rate_e6 END AS rate_e6
      FROM (SELECT CAST(unnest(generate_series(CAST(${bind(from)} AS DATE), CAST(${bind(to)} AS DATE), INTERVAL 1 DAY)) AS DATE) AS day) d
      CROSS JOIN (SELECT unnest([${currencies.join(", ")}]) AS currency) c
      ASOF LEFT JOIN fx_rates f ON f.currency = c.currency AND d.day >= f.date`,
  },
  postgres: {
    placeholder: (position) => `$${position}`,
    day: (expression) => `to_char(${expression}, 'YYYY-MM-DD')`,
    week: (expression) => `CAST(date_trunc('week', CAST(${expression} AS timestamp)) AS date)`,
    month: (expression) => `CAST(date_trunc('month', CAST(${expression} AS timestamp)) AS date)`,
    wide: "numeric",
    double: "double precision",
    // Each currency's rate on each day of the range: one probe of the primary key per (currency, day).
    rates: (bind, from, to, currencies) => `
      SELECT c.currency, d.day, CASE WHEN c.currency = 'EUR' THEN 1000000 ELSE
          (SELECT f.rate_e6 FROM fx_rates f WHERE f.currency = c.currency AND f.date <= d.day
            ORDER BY f.date DESC LIMIT 1) END AS rate_e6
      FROM (VALUES ${currencies.map((code) => `(${code})`).join(", ")}) AS c(currency)
      CROSS JOIN (SELECT CAST(${bind(from)} AS date) + g.n AS day
        FROM generate_series(0, CAST(${bind(to)} AS date) - CAST(${bind(from)} AS date)) AS g(n)) d`,
  },
};

/** A currency code as a SQL literal: only codes of the closed list ever reach the SQL text. */
function literal(code) {
  if (!Object.hasOwn(CURRENCIES, code)) throw new Error(`not a currency code: ${code}`);
  return `'${code}'`;
}

/** Parameters of one statement, in the order their placeholders appear. */
function statementOf(store) {
  const params = [];
  const dialect = DIALECTS[store];
  return {
    dialect,
    params,
    bind: (value) => {
      params.push(value);
      return dialect.placeholder(params.length);
    },
  };
}

/** The rows a question may read: the brand, the range, the app's markets and data sources. */
function scopeCondition(scope, bind) {
  return [
    `r.brand_id = ${bind(scope.brandId)}`,
    `r.date BETWEEN CAST(${bind(scope.from)} AS DATE) AND CAST(${bind(scope.to)} AS DATE)`,
    `r.market IN (${scope.markets.map(bind).join(", ")})`,
    `r.data_source IN (${scope.dataSources.map(bind).join(", ")})`,
  ].join(" AND ");
}

/** The rate table of the range for the target and every source currency of the brand. */
function ratesCte(statement, scope, currency, sourceCurrencies) {
  const codes = [...new Set([currency, ...sourceCurrencies])].map(literal);
  return `rates AS (${statement.dialect.rates(statement.bind, scope.from, scope.to, codes)})`;
}

/** Joins of the row `r` to its source currency's rate `s` and the target's `t` on its day. */
const RATE_JOINS = (currency) => `JOIN rates s ON s.currency = r.currency AND s.day = r.date
  JOIN rates t ON t.currency = ${literal(currency)} AND t.day = r.date`;

/**
 * Whether a row's conversion stays inside BIGINT: the amount × the target rate × `scale` under
 * 9 × 10¹⁸ (tested on doubles) and the source rate × 10⁴ under 4 × 10¹⁸. Where it does, both
 * engines divide on BIGINT, several times faster than on their wide type; MDQ does the same.
 */
function fitsBigint(column, scale, dialect) {
  return `abs(CAST(r.${column} AS ${dialect.double})) * t.rate_e6 < CAST(${9e18 / scale} AS ${dialect.double})
    AND s.rate_e6 < ${4e18 / 10_000}`;
}

/** A record's amount (`column`, ten-thousandths) in the target currency's minor units. */
function minorOf(column, currency, dialect) {
  const toMinor = 10 ** (4 - CURRENCIES[currency].minorUnits);
  return `CASE WHEN r.currency = ${literal(currency)} THEN bench_half_even(r.${column}, ${toMinor})
    WHEN ${fitsBigint(column, 1, dialect)} THEN bench_half_even(r.${column} * t.rate_e6, s.rate_e6 * ${toMinor})
    ELSE bench_half_even(CAST(r.${column} AS ${dialect.wide}) * t.rate_e6, CAST(s.rate_e6 AS ${dialect.wide}) * ${toMinor}) END`;
}

/** A (partial) sum's amount in the target currency in 10⁻⁸ units. */
function e8Of(column, currency, dialect) {
  return `CASE WHEN r.currency = ${literal(currency)} THEN CAST(r.${column} AS ${dialect.wide}) * 10000
    WHEN ${fitsBigint(column, 10_000, dialect)} THEN bench_half_even(r.${column} * t.rate_e6 * 10000, s.rate_e6)
    ELSE bench_half_even(CAST(r.${column} AS ${dialect.wide}) * t.rate_e6 * 10000, CAST(s.rate_e6 AS ${dialect.wide})) END`;
}

/** The sort key of a records sort field, on stored columns or the converted amount. */
function recordSortKey(field, currency, dialect) {
  const keys = {
    DATE_DAY: "r.date",
    IMPRESSIONS: "r.impressions",
    CLICKS: "r.clicks",
    CONVERSIONS: "r.conversions_e4",
    SPEND: minorOf("spend_e4", currency, dialect),
    REVENUE: minorOf("revenue_e4", currency, dialect),
  };
  if (!(field in keys)) throw new Error(`the growth bench has no engine SQL for a sort by ${field}`);
  return keys[field];
}

/**
 * A records page as the engine answers it: the page cut first (Top-N over the scope on the sort
 * key, ties by record id), then its rows converted. `after` (a row's day and id) continues a walk
 * of the day sort past that row instead of an offset. Columns are named as MDQ's fields.
 */
export function recordsSql(store, { scope, currency, sort, page, pageSize, after, sourceCurrencies }) {
  const statement = statementOf(store);
  const { dialect, bind } = statement;
  const minor = CURRENCIES[currency].minorUnits;
  const rates = ratesCte(statement, scope, currency, sourceCurrencies);
  const moneyKey = sort.field === "SPEND" || sort.field === "REVENUE";
  let where = scopeCondition(scope, bind);
  if (after) {
    if (sort.field !== "DATE_DAY" || sort.direction !== "DESC") throw new Error("walks follow the day sort");
    where += ` AND (r.date < CAST(${bind(after.date)} AS DATE) OR (r.date = CAST(${bind(after.date)} AS DATE) AND r.record_id > ${bind(after.recordId)}))`;
  }
  const offset = after ? 0 : (page - 1) * pageSize;
  const sql = `WITH ${rates},
    page AS (SELECT r.*, ${recordSortKey(sort.field, currency, dialect)} AS k FROM records r ${moneyKey ? RATE_JOINS(currency) : ""}
      WHERE ${where} ORDER BY k ${sort.direction}, r.record_id LIMIT ${pageSize} OFFSET ${offset})
    SELECT r.record_id AS "recordId", ${dialect.day("r.date")} AS "date", r.market AS "market",
      r.data_source AS "dataSource", r.channel AS "channel", r.campaign_id AS "campaignId",
      r.campaign_name AS "campaignName", CAST(r.impressions AS ${dialect.double}) AS "impressions",
      CAST(r.clicks AS ${dialect.double}) AS "clicks",
      CAST(${minorOf("spend_e4", currency, dialect)} AS ${dialect.double}) / ${10 ** minor} AS "spend",
      CAST(r.conversions_e4 AS ${dialect.double}) / 10000 AS "conversions",
      CAST(${minorOf("revenue_e4", currency, dialect)} AS ${dialect.double}) / ${10 ** minor} AS "revenue",
      ${literal(currency)} AS "currency"
    FROM page r ${RATE_JOINS(currency)} ORDER BY r.k ${sort.direction}, r.record_id`;
  return { sql, params: statement.params };
}

/**
 * An aggregate page as the engine answers it: sums per group, source currency and day; each
 * partial converted to 10⁻⁸; summed per group and rounded half-even. `groupBy` as MDQ's
 * dimensions, `sort` MDQ's sort entries (their default when empty: a date dimension descending,
 * then the groups ascending). Every metric; columns named as MDQ's fields.
 */
export function aggregateSql(store, { scope, currency, groupBy, sort, pageSize, sourceCurrencies }) {
  const statement = statementOf(store);
  const { dialect, bind } = statement;
  const minor = CURRENCIES[currency].minorUnits;
  const rates = ratesCte(statement, scope, currency, sourceCurrencies);
  const expressions = {
    DATE_DAY: "r.date",
    DATE_WEEK: dialect.week("r.date"),
    DATE_MONTH: dialect.month("r.date"),
    MARKET: "r.market",
    DATA_SOURCE: "r.data_source",
    CHANNEL: "r.channel",
    CAMPAIGN_ID: "r.campaign_id",
  };
  const groups = groupBy.map((dimension, index) => ({
    dimension,
    inner: expressions[dimension],
    name: `g${index}`,
  }));
  const partialKeys = [...groups.map((group) => `${group.inner} AS ${group.name}`), "r.currency", "r.date"];
  const partial = `partial AS (SELECT ${partialKeys.join(", ")}, sum(r.impressions) AS impressions,
      sum(r.clicks) AS clicks, sum(r.conversions_e4) AS conversions_e4, sum(r.spend_e4) AS spend_e4,
      sum(r.revenue_e4) AS revenue_e4
    FROM records r WHERE ${scopeCondition(scope, bind)}
    GROUP BY ${[...groups.map((group) => group.inner), "r.currency", "r.date"].join(", ")})`;
  const money = (column) =>
    `CAST(bench_half_even(coalesce(sum(${e8Of(column, currency, dialect)}), 0), ${10 ** (8 - minor)}) AS ${dialect.double}) / ${10 ** minor}`;
  const columns = [
    ...groups.map(
      (group) =>
        `${group.dimension.startsWith("DATE_") ? dialect.day(`r.${group.name}`) : `r.${group.name}`} AS "${group.dimension}"`,
    ),
    `CAST(coalesce(sum(r.impressions), 0) AS ${dialect.double}) AS "TOTAL_IMPRESSIONS"`,
    `CAST(coalesce(sum(r.clicks), 0) AS ${dialect.double}) AS "TOTAL_CLICKS"`,
    `${money("spend_e4")} AS "TOTAL_SPEND"`,
    `CAST(coalesce(sum(r.conversions_e4), 0) AS ${dialect.double}) / 10000 AS "TOTAL_CONVERSIONS"`,
    `${money("revenue_e4")} AS "TOTAL_REVENUE"`,
    `${literal(currency)} AS "currency"`,
  ];
  const sortKey = (field) => {
    if (field === "TOTAL_SPEND") return `sum(${e8Of("spend_e4", currency, dialect)})`;
    if (field === "TOTAL_REVENUE") return `sum(${e8Of("revenue_e4", currency, dialect)})`;
    if (field.startsWith("TOTAL_"))
      throw new Error(`the growth bench has no engine SQL for a sort by ${field}`);
    return `r.${groups.find((group) => group.dimension === field).name}`;
  };
  const order = [
    ...sort.map((entry) => `${sortKey(entry.field)} ${entry.direction}`),
    ...groups.map((group) => `r.${group.name} ASC`),
  ];
  const sql = `WITH ${rates}, ${partial}
    SELECT ${columns.join(", ")} FROM partial r ${RATE_JOINS(currency)}
    ${groups.length > 0 ? `GROUP BY ${groups.map((group) => `r.${group.name}`).join(", ")}` : ""}
    ${order.length > 0 ? `ORDER BY ${order.join(", ")}` : ""} LIMIT ${pageSize}`;
  return { sql, params: statement.params };
}

/**
 * The engine of `store` opened in this process: DuckDB on `dataDir`'s file, read-only (a copy of
 * the file MDQ serves: DuckDB lets one process write a file and no other open it), with `threads`
 * threads like the served store; PostgreSQL on `databaseUrl` with MDQ's session settings
 * (`POSTGRES_SESSION_OPTIONS`). `run(sql, params)` resolves to the rows as plain objects; `close()`.
 */
export async function openEngine({ store, dataDir, databaseUrl, threads }) {
  if (store === "duckdb") {
    const instance = await DuckDBInstance.create(join(dataDir, DUCKDB_FILE), {
      access_mode: "READ_ONLY",
      threads: String(threads),
    });
    const connection = await instance.connect();
    await connection.run(`CREATE OR REPLACE TEMP MACRO bench_half_even(n, d) AS ${HALF_EVEN_BODY.duckdb}`);
    return {
      run: async (sql, params) => (await connection.runAndReadAll(sql, params)).getRowObjectsJS(),
      close() {
        connection.closeSync();
        instance.closeSync();
      },
    };
  }
  const client = new pg.Client({ connectionString: databaseUrl, options: POSTGRES_SESSION_OPTIONS });
  // A connection ended by the server between statements fails the next statement, not the process.
  let lost = null;
  client.on("error", (error) => {
    lost = error;
  });
  await client.connect();
  await client.query(`CREATE OR REPLACE FUNCTION bench_half_even(n numeric, d numeric)
    RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ ${HALF_EVEN_BODY.postgres} $$`);
  await client.query(`CREATE OR REPLACE FUNCTION bench_half_even(n bigint, d bigint)
    RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ ${HALF_EVEN_BODY.postgresBigint} $$`);
  return {
    run: async (sql, params) => {
      if (lost) throw new Error(`the engine's PostgreSQL connection was lost: ${lost.message}`);
      return (await client.query(sql, params)).rows;
    },
    close: () => client.end().catch(() => {}),
  };
}

/** The source currencies of a brand's records (read once, untimed: what the SQL's author knows). */
export async function sourceCurrenciesOf(engine, store, brandId) {
  const statement = statementOf(store);
  const rows = await engine.run(
    `SELECT DISTINCT currency FROM records WHERE brand_id = ${statement.bind(brandId)} ORDER BY currency`,
    statement.params,
  );
  return rows.map((row) => row.currency);
}
