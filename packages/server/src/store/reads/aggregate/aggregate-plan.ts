/**
 * The plans of `marketingAggregate`: a page over the records (grouped by campaign), the rollup's
 * partial sums otherwise (reads/aggregate/rollup-aggregate.ts totals them), its count and its
 * missing-rate sample.
 */

import { isDateDimension } from "@mdq/contract";
import type { PlannedPage, PlannedSql, SqlDialect } from "../../model/engine.js";
import type { AggregateQuery, AggregateSortField, Metric } from "../../model/query-request.js";
import {
  convertedE8,
  dayRatesCte,
  missingRate,
  money,
  rateJoins,
  type Target,
  targetOf,
} from "../../sql/money-conversion.js";
import { METRIC_COLUMNS, PARTIAL_SUMS } from "../../sql/partial-sums.js";
import { dimensionGroup, ROLLUP, type RowSource, rowSourceOf, whereClause } from "../../sql/row-scope.js";
import { rowCount, Statement } from "../../sql/statement.js";

/**
 * A planned aggregate page: after the fields' columns, two that every row repeats (window
 * functions, so the page needs no second round trip): the number of groups, and of rows whose
 * conversion lacks a rate.
 */
export interface PlannedAggregatePage extends PlannedPage {
  windowColumns: { totalCount: number; missingRateRows: number };
}

/**
 * A planned count, one row of three columns: `total` rows (or groups), then the currency and the
 * day (`YYYY-MM-DD`) of a sample conversion lacking a rate, both NULL when none lacks one.
 */
export type PlannedCount = PlannedSql;

const MONEY_METRICS: ReadonlySet<Metric> = new Set(["SPEND", "REVENUE"]);

/** The source of an aggregate's rows: the records when it groups by campaign. */
function aggregateSource(query: AggregateQuery): RowSource {
  return rowSourceOf(query.scope, query.groupBy.includes("CAMPAIGN_ID"));
}

/**
 * The aggregate finding a sample missing rate: the first `CUR YYYY-MM-DD` (the currency lacking
 * a rate, the day) in text order. `countColumns` splits it into typed columns at fixed places:
 * every code is three letters (`currencyLiteral` and the closed list of stored codes).
 */
function missingRateSample(target: Target, dialect: SqlDialect): string {
  return `min(CASE WHEN ${missingRate(target)}
    THEN (CASE WHEN s.rate_e6 IS NULL THEN r.currency ELSE ${target.literal} END) || ' ' || ${dialect.formatDate("r.date")} END)`;
}

/** The count's columns over a subquery yielding `total` and the missing-rate `sample`. */
function countColumns(counted: string): string {
  return `SELECT total, substr(sample, 1, 3) AS missing_currency, substr(sample, 5) AS missing_day
    FROM (${counted}) counted`;
}

/** The count's missing-rate columns when a count does not check rates. */
const NO_MISSING_RATE = "CAST(NULL AS VARCHAR) AS missing_currency, CAST(NULL AS VARCHAR) AS missing_day";

function totalExpression(metric: Metric, target: Target, dialect: SqlDialect): string {
  const column = METRIC_COLUMNS[metric];
  if (MONEY_METRICS.has(metric)) {
    const minorUnits = target.minorUnits;
    const sumE8 = `coalesce(sum(${convertedE8(column, target, dialect)}), 0)`;
    return money(`div_half_even(${sumE8}, ${10 ** (8 - minorUnits)})`, target, dialect);
  }
  if (metric === "CONVERSIONS") return `CAST(coalesce(sum(r.${column}), 0) AS ${dialect.double}) / 10000`;
  return `CAST(coalesce(sum(r.${column}), 0) AS ${dialect.double})`;
}

/**
 * Plans one page of `marketingAggregate` in two steps. First the matching rows are summed per
 * group, source currency and day with native integer sums: rows sharing a currency and a day share
 * a rate, so converting their sum is converting each row (multiplication distributes). Then each
 * partial sum is converted (exact, half-even to 10⁻⁸), the partials are summed per group and the
 * total rounded half-even to the currency's minor unit. The group count and the missing-rate check
 * ride along as window functions. Not grouped by campaign, the first step sums the record rollup's
 * rows, already summed per currency and day, instead of the records (`rowSourceOf`).
 */
export function planAggregatePage(query: AggregateQuery, dialect: SqlDialect): PlannedAggregatePage {
  const target = targetOf(query.currency);
  const statement = new Statement(dialect);
  const withRates = query.metrics.some((metric) => MONEY_METRICS.has(metric));
  const source = aggregateSource(query);
  const ctes: string[] = withRates ? [dayRatesCte(query.scope, statement)] : [];
  const groups = query.groupBy.map((dimension, index) => ({
    dimension,
    inner: `${dimensionGroup(dimension, dialect)} AS g${index}`,
    outer: `r.g${index}`,
  }));
  const where = whereClause(query.scope, statement);
  const partialKeys = [...groups.map((group) => group.inner), "r.currency", "r.date"];
  const partialGroupBy = [...groups.map((_, index) => `${index + 1}`), "r.currency", "r.date"];
  const sums = PARTIAL_SUMS.map((column) => `${source.sum(column, dialect)} AS ${column}`);
  ctes.push(`partial AS (
    SELECT ${partialKeys.join(", ")}, ${sums.join(", ")}
    FROM ${source.table} r WHERE ${where} GROUP BY ${partialGroupBy.join(", ")})`);

  const columns: string[] = [];
  const fields: string[] = [];
  for (const group of groups) {
    columns.push(isDateDimension(group.dimension) ? dialect.formatDate(group.outer) : group.outer);
    fields.push(group.dimension);
  }
  for (const metric of query.metrics) {
    columns.push(totalExpression(metric, target, dialect));
    fields.push(`TOTAL_${metric}`);
  }
  const windowColumns = { totalCount: columns.length, missingRateRows: columns.length + 1 };
  columns.push("count(*) OVER ()");
  columns.push(withRates ? `sum(count(*) FILTER (WHERE ${missingRate(target)})) OVER ()` : "0");
  const joins = withRates ? rateJoins(target, statement) : "";
  const sortKey = (field: AggregateSortField) => {
    if (!field.startsWith("TOTAL_")) return groups.find((group) => group.dimension === field)!.outer;
    const metric = field.slice("TOTAL_".length) as Metric;
    const column = METRIC_COLUMNS[metric];
    return MONEY_METRICS.has(metric) ? `sum(${convertedE8(column, target, dialect)})` : `sum(r.${column})`;
  };
  const order = [
    ...query.sort.map((entry) => `${sortKey(entry.field)} ${entry.direction}`),
    ...groups.map((group) => `${group.outer} ASC`),
  ];
  const limit = rowCount(query.page.pageSize);
  const offset = rowCount((query.page.page - 1) * query.page.pageSize);
  const select = columns.map((expression, index) => `${expression} AS c${index}`).join(", ");
  return {
    sql: `WITH ${ctes.join(",\n")} SELECT ${select} FROM partial r ${joins}
      ${groups.length > 0 ? `GROUP BY ${groups.map((group) => group.outer).join(", ")}` : ""}
      ${order.length > 0 ? `ORDER BY ${order.join(", ")}` : ""}
      LIMIT ${limit} OFFSET ${offset}`,
    params: statement.params,
    fields,
    windowColumns,
  };
}

/** Whether an aggregate reads the record rollup (not grouped by campaign, campaigns not filtered). */
export function aggregateReadsRollup(query: AggregateQuery): boolean {
  return aggregateSource(query) === ROLLUP;
}

/**
 * Plans the rollup's partial sums of an aggregate (rollup-aggregate.ts converts and sums them):
 * per group, source currency and day, the native integer sums. Columns: each group's key as text
 * (dates `YYYY-MM-DD`, which sort as the dates do), the currency, the day, then the sums of
 * `PARTIAL_METRICS`, in its order.
 */
export function planRollupPartials(query: AggregateQuery, dialect: SqlDialect): PlannedSql {
  const statement = new Statement(dialect);
  const where = whereClause(query.scope, statement);
  const keys = query.groupBy.map((dimension) => {
    const group = dimensionGroup(dimension, dialect);
    return isDateDimension(dimension) ? dialect.formatDate(group) : group;
  });
  const groupBy = [...keys.map((_, index) => `${index + 1}`), "r.currency", "r.date"];
  return {
    sql: `SELECT ${[...keys, "r.currency", dialect.formatDate("r.date")].join(", ")},
      ${PARTIAL_SUMS.map((column) => ROLLUP.sum(column, dialect)).join(", ")}
      FROM ${ROLLUP.table} r WHERE ${where} GROUP BY ${groupBy.join(", ")}`,
    params: statement.params,
  };
}

/** Plans the number of groups of `marketingAggregate` (used when the page itself is empty). */
export function planAggregateCount(query: AggregateQuery, dialect: SqlDialect): PlannedCount {
  if (query.groupBy.length === 0) return { sql: `SELECT 1 AS total, ${NO_MISSING_RATE}`, params: [] };
  const statement = new Statement(dialect);
  const where = whereClause(query.scope, statement);
  const groupBy = query.groupBy.map((dimension) => dimensionGroup(dimension, dialect)).join(", ");
  return {
    sql: `SELECT count(*) AS total, ${NO_MISSING_RATE}
      FROM (SELECT 1 FROM ${aggregateSource(query).table} r WHERE ${where} GROUP BY ${groupBy}) groups`,
    params: statement.params,
  };
}

/** Plans a search for one sample missing rate of an aggregate (only run when one is known to miss). */
export function planAggregateMissingRate(query: AggregateQuery, dialect: SqlDialect): PlannedCount {
  const target = targetOf(query.currency);
  const statement = new Statement(dialect);
  const cte = `WITH ${dayRatesCte(query.scope, statement)}`;
  const joins = rateJoins(target, statement);
  const where = whereClause(query.scope, statement);
  return {
    sql: `${cte} ${countColumns(`SELECT 0 AS total, ${missingRateSample(target, dialect)} AS sample
      FROM ${aggregateSource(query).table} r ${joins} WHERE ${where}`)}`,
    params: statement.params,
  };
}
