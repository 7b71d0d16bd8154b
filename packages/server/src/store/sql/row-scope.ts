/**
 * Which rows a plan reads: the WHERE clause of a `RowScope` (brand, range, grants, filter), the
 * table it reads them from (the records, or the record rollup), and the grouping of a dimension.
 */
import type { SqlDialect } from "../model/engine.js";
import type { Dimension, RowScope } from "../model/query-request.js";
import { ROLLUP_TABLE, rollupSum } from "./rollup-table.js";
import type { Statement } from "./statement.js";

/** The grouping expression of a dimension (a DATE for the date dimensions). */
export function dimensionGroup(dimension: Dimension, dialect: SqlDialect): string {
  switch (dimension) {
    case "DATE_DAY":
      return "r.date";
    case "DATE_WEEK":
      return dialect.weekStart("r.date");
    case "DATE_MONTH":
      return dialect.monthStart("r.date");
    case "MARKET":
      return "r.market";
    case "DATA_SOURCE":
      return "r.data_source";
    case "CHANNEL":
      return "r.channel";
    case "CAMPAIGN_ID":
      return "r.campaign_id";
  }
}

/** Builds the WHERE clause restricting rows to the brand, the range, the grants and the filter. */
export function whereClause(scope: RowScope, statement: Statement): string {
  const { bind } = statement;
  const conditions = [
    `r.brand_id = ${bind(scope.brandId)}`,
    `r.date BETWEEN CAST(${bind(scope.from)} AS DATE) AND CAST(${bind(scope.to)} AS DATE)`,
  ];
  const inList = (column: string, values: string[]) => {
    // No grants means no rows (rule 1), and an empty list is not SQL.
    if (values.length === 0) {
      conditions.push("FALSE");
      return;
    }
    conditions.push(statement.dialect.oneOf(column, values.map(bind)));
  };
  inList("r.market", scope.markets);
  inList("r.data_source", scope.dataSources);
  if (scope.channels) inList("r.channel", scope.channels);
  if (scope.campaignIds) inList("r.campaign_id", scope.campaignIds);
  return conditions.join(" AND ");
}

/**
 * Where a plan reads rows of the scope from: the records, or the record rollup (record-rollup.ts)
 * when nothing it reads names a campaign or a record, for it holds every other column of the
 * records summed per (brand, day, market, data source, channel, currency). Both have the columns
 * `whereClause` and the dimensions read; `count` counts the records its rows stand for, `sum`
 * sums a stored column of theirs (a wide integer) over its rows `r`.
 */
export interface RowSource {
  table: string;
  count: string;
  sum(column: string, dialect: SqlDialect): string;
}

const RECORDS: RowSource = { table: "records", count: "count(*)", sum: (column) => `sum(r.${column})` };

export const ROLLUP: RowSource = { table: ROLLUP_TABLE, count: "sum(r.rows)", sum: rollupSum };

/**
 * The source of a plan over `scope`: the rollup unless the scope filters campaigns or the plan
 * reads a campaign or record column (`readsRecords`). The one place that decides it.
 */
export function rowSourceOf(scope: RowScope, readsRecords: boolean): RowSource {
  return readsRecords || scope.campaignIds !== null ? RECORDS : ROLLUP;
}
