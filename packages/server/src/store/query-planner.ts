/**
 * The query planner: turns a validated request into parameterised SQL. Values never enter the
 * SQL text; only identifiers and expressions chosen from closed lists here do.
 *
 * Money (CONTRACT §3 rule 7) is integer arithmetic so that every engine returns the same numbers:
 * amounts are stored in ten-thousandths (`*_e4`), rates in millionths per EUR (`rate_e6`).
 * - A record's amount in currency T is amount × rate(T) ÷ rate(source), rounded half-even to T's
 *   minor unit directly from the exact quotient.
 * - An aggregate converts each row exactly — rows of one source currency and day share a rate, so
 *   their sum is converted at once, to 10⁻⁸ (half-even) — sums, then rounds the sum half-even to
 *   T's minor unit.
 * The rate of a day is that day's rate, else the latest earlier one; EUR's rate is 1.
 */
import { BASE_CURRENCY, CURRENCIES, type CurrencyCode } from "../currencies.js";
import type {
  AggregateQuery,
  AggregateSortField,
  Dimension,
  Metric,
  RecordField,
  RecordSortField,
  RecordsQuery,
  RowScope,
  SortEntry,
} from "./query-request.js";

/** SQL text with its positional (`?`) parameters. */
export interface PlannedSql {
  sql: string;
  params: (string | number | bigint)[];
}

/** A planned page query: the SQL and, per result column, the GraphQL field it fills. */
export interface PlannedPage extends PlannedSql {
  fields: string[];
}

/** A planned count: `total` rows (or groups) and `missing_rate`, a sample currency/day lacking a rate. */
export type PlannedCount = PlannedSql;

const MONEY_COLUMNS = { spend: "spend_e4", revenue: "revenue_e4" } as const;
const METRIC_COLUMNS: Record<Metric, string> = {
  IMPRESSIONS: "impressions",
  CLICKS: "clicks",
  SPEND: "spend_e4",
  CONVERSIONS: "conversions_e4",
  REVENUE: "revenue_e4",
};
const MONEY_METRICS: ReadonlySet<Metric> = new Set(["SPEND", "REVENUE"]);

const DIMENSION_EXPRESSIONS: Record<Dimension, { group: string; output: string }> = {
  DATE_DAY: { group: "r.date", output: "strftime(r.date, '%Y-%m-%d')" },
  DATE_WEEK: {
    group: "CAST(date_trunc('week', r.date) AS DATE)",
    output: "strftime(CAST(date_trunc('week', r.date) AS DATE), '%Y-%m-%d')",
  },
  DATE_MONTH: {
    group: "CAST(date_trunc('month', r.date) AS DATE)",
    output: "strftime(CAST(date_trunc('month', r.date) AS DATE), '%Y-%m-%d')",
  },
  MARKET: { group: "r.market", output: "r.market" },
  DATA_SOURCE: { group: "r.data_source", output: "r.data_source" },
  CHANNEL: { group: "r.channel", output: "r.channel" },
  CAMPAIGN_ID: { group: "r.campaign_id", output: "r.campaign_id" },
};

/** Builds the WHERE clause restricting rows to the brand, the range, the grants and the filter. */
function whereClause(scope: RowScope, params: PlannedSql["params"]): string {
  const conditions = ["r.brand_id = ?", "r.date BETWEEN CAST(? AS DATE) AND CAST(? AS DATE)"];
  params.push(scope.brandId, scope.from, scope.to);
  const inList = (column: string, values: string[]) => {
    // No grants means no rows (rule 1), and `IN ()` is not SQL.
    if (values.length === 0) {
      conditions.push("FALSE");
      return;
    }
    conditions.push(`${column} IN (${values.map(() => "?").join(", ")})`);
    params.push(...values);
  };
  inList("r.market", scope.markets);
  inList("r.data_source", scope.dataSources);
  if (scope.channels) inList("r.channel", scope.channels);
  if (scope.campaignIds) inList("r.campaign_id", scope.campaignIds);
  return conditions.join(" AND ");
}

/**
 * The per-day rate table for the range: every currency with rates, plus EUR at 1, each day
 * carrying the latest rate on or before it (ASOF).
 */
function dayRatesCte(scope: RowScope, params: PlannedSql["params"]): string {
  params.push(scope.from, scope.to, BASE_CURRENCY, scope.from, scope.to);
  return `day_rates AS (
    SELECT c.currency, d.day, f.rate_e6
    FROM (SELECT CAST(unnest(generate_series(CAST(? AS DATE), CAST(? AS DATE), INTERVAL 1 DAY)) AS DATE) AS day) d
    CROSS JOIN (SELECT DISTINCT currency FROM fx_rates) c
    ASOF LEFT JOIN fx_rates f ON f.currency = c.currency AND d.day >= f.date
    UNION ALL
    SELECT ?, CAST(unnest(generate_series(CAST(? AS DATE), CAST(? AS DATE), INTERVAL 1 DAY)) AS DATE), 1000000
  )`;
}

/** Joins of each row to its source-currency rate (`s`) and the target currency's rate (`t`). */
function rateJoins(currency: CurrencyCode, params: PlannedSql["params"]): string {
  params.push(currency);
  return `LEFT JOIN day_rates s ON s.currency = r.currency AND s.day = r.date
    LEFT JOIN day_rates t ON t.currency = ? AND t.day = r.date`;
}

/** The record's amount converted to the target currency, in minor units (exact, half-even). */
function convertedMinor(column: string, currency: CurrencyCode): string {
  const minorUnits = CURRENCIES[currency].minorUnits;
  const toMinor = 10 ** (4 - minorUnits);
  return `CASE WHEN r.currency = '${currency}' THEN div_half_even(CAST(r.${column} AS HUGEINT), ${toMinor})
    ELSE div_half_even(CAST(r.${column} AS HUGEINT) * t.rate_e6, CAST(s.rate_e6 AS HUGEINT) * ${toMinor}) END`;
}

/** The record's amount converted to the target currency in 10⁻⁸ units (exact, half-even). */
function convertedE8(column: string, currency: CurrencyCode): string {
  return `CASE WHEN r.currency = '${currency}' THEN CAST(r.${column} AS HUGEINT) * 10000
    ELSE div_half_even(CAST(r.${column} AS HUGEINT) * t.rate_e6 * 10000, CAST(s.rate_e6 AS HUGEINT)) END`;
}

/** Condition true for a row whose conversion lacks a rate. */
function missingRate(currency: CurrencyCode): string {
  return `(r.currency <> '${currency}' AND (s.rate_e6 IS NULL OR t.rate_e6 IS NULL))`;
}

/** Sample of a missing rate: the currency lacking it and the day, as `CUR YYYY-MM-DD`. */
function missingRateSample(currency: CurrencyCode): string {
  return `min(CASE WHEN ${missingRate(currency)}
    THEN (CASE WHEN s.rate_e6 IS NULL THEN r.currency ELSE '${currency}' END) || ' ' || strftime(r.date, '%Y-%m-%d') END)`;
}

function money(minorExpression: string, currency: CurrencyCode): string {
  const minorUnits = CURRENCIES[currency].minorUnits;
  return `CAST(${minorExpression} AS DOUBLE) / ${10 ** minorUnits}`;
}

const RECORD_COLUMNS: Record<Exclude<RecordField, "spend" | "revenue" | "currency">, string> = {
  recordId: "r.record_id",
  date: "strftime(r.date, '%Y-%m-%d')",
  market: "r.market",
  dataSource: "r.data_source",
  channel: "r.channel",
  campaignId: "r.campaign_id",
  campaignName: "r.campaign_name",
  impressions: "CAST(r.impressions AS DOUBLE)",
  clicks: "CAST(r.clicks AS DOUBLE)",
  conversions: "CAST(r.conversions_e4 AS DOUBLE) / 10000",
};

const RECORD_SORT_KEYS: Record<RecordSortField, (currency: CurrencyCode) => string> = {
  DATE_DAY: () => "r.date",
  MARKET: () => "r.market",
  DATA_SOURCE: () => "r.data_source",
  CHANNEL: () => "r.channel",
  CAMPAIGN_ID: () => "r.campaign_id",
  IMPRESSIONS: () => "r.impressions",
  CLICKS: () => "r.clicks",
  CONVERSIONS: () => "r.conversions_e4",
  SPEND: (currency) => convertedMinor(MONEY_COLUMNS.spend, currency),
  REVENUE: (currency) => convertedMinor(MONEY_COLUMNS.revenue, currency),
};

function recordsNeedRates(query: RecordsQuery): boolean {
  return (
    query.fields.includes("spend") ||
    query.fields.includes("revenue") ||
    query.sort.some((entry) => entry.field === "SPEND" || entry.field === "REVENUE")
  );
}

/** Stored columns each record field reads (the page is cut before anything is computed). */
const RECORD_SOURCE_COLUMNS: Record<RecordField, readonly string[]> = {
  recordId: ["record_id"],
  date: ["date"],
  market: ["market"],
  dataSource: ["data_source"],
  channel: ["channel"],
  campaignId: ["campaign_id"],
  campaignName: ["campaign_name"],
  impressions: ["impressions"],
  clicks: ["clicks"],
  spend: ["spend_e4", "currency"],
  conversions: ["conversions_e4"],
  revenue: ["revenue_e4", "currency"],
  currency: [],
};

/**
 * Plans one page of `marketingRecords`: the inner query cuts the page (Top-N over the matching
 * rows, reading only the columns needed and the sort keys); the outer query formats and converts
 * just the page's rows. Converting before the cut cost ~9× on a 200k-row range.
 */
export function planRecordsPage(query: RecordsQuery): PlannedPage {
  const params: PlannedSql["params"] = [];
  const withRates = recordsNeedRates(query);
  const sortsByMoney = query.sort.some((entry) => entry.field === "SPEND" || entry.field === "REVENUE");
  const ctes: string[] = withRates ? [dayRatesCte(query.scope, params)] : [];
  const sourceColumns = new Set(["record_id", "date"]);
  for (const field of query.fields)
    for (const column of RECORD_SOURCE_COLUMNS[field]) sourceColumns.add(column);
  const sortKeys = query.sort.map((entry, index) => ({
    expression: `${RECORD_SORT_KEYS[entry.field](query.currency)} AS k${index}`,
    direction: entry.direction,
  }));
  const innerJoins = sortsByMoney ? rateJoins(query.currency, params) : "";
  const where = whereClause(query.scope, params);
  const innerSelect = [
    ...[...sourceColumns].map((column) => `r.${column}`),
    ...sortKeys.map((key) => key.expression),
  ];
  const orderBy = (qualifier: string) =>
    [...sortKeys.map((key, index) => `${qualifier}k${index} ${key.direction}`), "r.record_id ASC"].join(", ");
  params.push(query.page.pageSize, (query.page.page - 1) * query.page.pageSize);
  ctes.push(`page AS (SELECT ${innerSelect.join(", ")} FROM records r ${innerJoins} WHERE ${where}
    ORDER BY ${orderBy("")} LIMIT CAST(? AS BIGINT) OFFSET CAST(? AS BIGINT))`);

  const columns: string[] = [];
  const fields: string[] = [];
  for (const field of query.fields) {
    if (field === "currency") continue;
    fields.push(field);
    if (field === "spend" || field === "revenue") {
      columns.push(money(convertedMinor(MONEY_COLUMNS[field], query.currency), query.currency));
    } else {
      columns.push(RECORD_COLUMNS[field]);
    }
  }
  if (columns.length === 0) {
    columns.push("r.record_id");
    fields.push("recordId");
  }
  const outerJoins = withRates ? rateJoins(query.currency, params) : "";
  const select = columns.map((expression, index) => `${expression} AS c${index}`).join(", ");
  return {
    sql: `WITH ${ctes.join(",\n")} SELECT ${select} FROM page r ${outerJoins} ORDER BY ${orderBy("r.")}`,
    params,
    fields,
  };
}

/** Plans the count of `marketingRecords` rows, with the missing-rate check when money is read. */
export function planRecordsCount(query: RecordsQuery): PlannedCount {
  const params: PlannedSql["params"] = [];
  const withRates = recordsNeedRates(query);
  const cte = withRates ? `WITH ${dayRatesCte(query.scope, params)}` : "";
  const joins = withRates ? rateJoins(query.currency, params) : "";
  const where = whereClause(query.scope, params);
  const missing = withRates ? missingRateSample(query.currency) : "CAST(NULL AS VARCHAR)";
  return {
    sql: `${cte} SELECT count(*) AS total, ${missing} AS missing_rate FROM records r ${joins} WHERE ${where}`,
    params,
  };
}

function totalExpression(metric: Metric, currency: CurrencyCode): string {
  const column = METRIC_COLUMNS[metric];
  if (MONEY_METRICS.has(metric)) {
    const minorUnits = CURRENCIES[currency].minorUnits;
    const sumE8 = `coalesce(sum(${convertedE8(column, currency)}), 0)`;
    return money(`div_half_even(${sumE8}, ${10 ** (8 - minorUnits)})`, currency);
  }
  if (metric === "CONVERSIONS") return `CAST(coalesce(sum(r.${column}), 0) AS DOUBLE) / 10000`;
  return `CAST(coalesce(sum(r.${column}), 0) AS DOUBLE)`;
}

const DATE_DIMENSIONS: ReadonlySet<Dimension> = new Set(["DATE_DAY", "DATE_WEEK", "DATE_MONTH"]);

/**
 * Plans one page of `marketingAggregate` in two steps. First the matching rows are summed per
 * group, source currency and day with native integer sums: rows sharing a currency and a day share
 * a rate, so converting their sum is converting each row (multiplication distributes). Then each
 * partial sum is converted (exact, half-even to 10⁻⁸), the partials are summed per group and the
 * total rounded half-even to the currency's minor unit. The group count and the missing-rate check
 * ride along as window functions.
 */
export function planAggregatePage(query: AggregateQuery): PlannedPage {
  const params: PlannedSql["params"] = [];
  const withRates = query.metrics.some((metric) => MONEY_METRICS.has(metric));
  const ctes: string[] = withRates ? [dayRatesCte(query.scope, params)] : [];
  const groups = query.groupBy.map((dimension, index) => ({
    dimension,
    inner: `${DIMENSION_EXPRESSIONS[dimension].group} AS g${index}`,
    outer: `r.g${index}`,
  }));
  const where = whereClause(query.scope, params);
  const partialKeys = [...groups.map((group) => group.inner), "r.currency", "r.date"];
  const partialGroupBy = [...groups.map((_, index) => `${index + 1}`), "r.currency", "r.date"];
  ctes.push(`partial AS (
    SELECT ${partialKeys.join(", ")}, sum(r.impressions) AS impressions, sum(r.clicks) AS clicks,
      sum(r.conversions_e4) AS conversions_e4, sum(r.spend_e4) AS spend_e4, sum(r.revenue_e4) AS revenue_e4
    FROM records r WHERE ${where} GROUP BY ${partialGroupBy.join(", ")})`);

  const columns: string[] = [];
  const fields: string[] = [];
  for (const group of groups) {
    columns.push(DATE_DIMENSIONS.has(group.dimension) ? `strftime(${group.outer}, '%Y-%m-%d')` : group.outer);
    fields.push(group.dimension);
  }
  for (const metric of query.metrics) {
    columns.push(totalExpression(metric, query.currency));
    fields.push(`TOTAL_${metric}`);
  }
  columns.push("count(*) OVER ()");
  fields.push("__totalCount");
  columns.push(withRates ? `sum(count(*) FILTER (WHERE ${missingRate(query.currency)})) OVER ()` : "0");
  fields.push("__missingRateRows");
  const joins = withRates ? rateJoins(query.currency, params) : "";
  const sortKey = (field: AggregateSortField) => {
    if (!field.startsWith("TOTAL_")) return groups.find((group) => group.dimension === field)!.outer;
    const metric = field.slice("TOTAL_".length) as Metric;
    const column = METRIC_COLUMNS[metric];
    return MONEY_METRICS.has(metric) ? `sum(${convertedE8(column, query.currency)})` : `sum(r.${column})`;
  };
  const order = [
    ...query.sort.map((entry) => `${sortKey(entry.field)} ${entry.direction}`),
    ...groups.map((group) => `${group.outer} ASC`),
  ];
  params.push(query.page.pageSize, (query.page.page - 1) * query.page.pageSize);
  const select = columns.map((expression, index) => `${expression} AS c${index}`).join(", ");
  return {
    sql: `WITH ${ctes.join(",\n")} SELECT ${select} FROM partial r ${joins}
      ${groups.length > 0 ? `GROUP BY ${groups.map((group) => group.outer).join(", ")}` : ""}
      ${order.length > 0 ? `ORDER BY ${order.join(", ")}` : ""}
      LIMIT CAST(? AS BIGINT) OFFSET CAST(? AS BIGINT)`,
    params,
    fields,
  };
}

/** Plans the number of groups of `marketingAggregate` (used when the page itself is empty). */
export function planAggregateCount(query: AggregateQuery): PlannedCount {
  const params: PlannedSql["params"] = [];
  const where = whereClause(query.scope, params);
  if (query.groupBy.length === 0)
    return { sql: "SELECT 1 AS total, CAST(NULL AS VARCHAR) AS missing_rate", params: [] };
  const groupBy = query.groupBy.map((dimension) => DIMENSION_EXPRESSIONS[dimension].group).join(", ");
  return {
    sql: `SELECT count(*) AS total, CAST(NULL AS VARCHAR) AS missing_rate
      FROM (SELECT 1 FROM records r WHERE ${where} GROUP BY ${groupBy}) groups`,
    params,
  };
}

/** Plans a search for one sample missing rate of an aggregate (only run when one is known to miss). */
export function planAggregateMissingRate(query: AggregateQuery): PlannedCount {
  const params: PlannedSql["params"] = [];
  const cte = `WITH ${dayRatesCte(query.scope, params)}`;
  const joins = rateJoins(query.currency, params);
  const where = whereClause(query.scope, params);
  return {
    sql: `${cte} SELECT 0 AS total, ${missingRateSample(query.currency)} AS missing_rate FROM records r ${joins} WHERE ${where}`,
    params,
  };
}

/**
 * The SQL of `div_half_even(n, d)`: n ÷ d for d > 0, rounded half to even. Integer `//` and `%`
 * truncate toward zero, so a negative n (a refund) is rounded by magnitude and given its sign
 * back: -8.5085 → -9, -25.5 → -26, -8.5 → -8.
 */
export const DIV_HALF_EVEN_MACRO = `CREATE OR REPLACE MACRO div_half_even(n, d) AS
  CASE WHEN n >= 0
    THEN (n // d) + CASE WHEN 2 * (n % d) > d OR (2 * (n % d) = d AND (n // d) % 2 = 1) THEN 1 ELSE 0 END
    ELSE -((-n // d) + CASE WHEN 2 * (-n % d) > d OR (2 * (-n % d) = d AND (-n // d) % 2 = 1) THEN 1 ELSE 0 END)
  END`;

export type { SortEntry };
