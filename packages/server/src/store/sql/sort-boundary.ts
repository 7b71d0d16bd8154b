/**
 * A records sort's keys and the condition "after this boundary" in that sort: what keyset pages
 * (records) and resumed exports read from.
 */
import type { SqlDialect } from "../model/engine.js";
import type { RecordSortField, SortBoundary, SortEntry } from "../model/query-request.js";
import { convertedMinor, MONEY_COLUMNS, type Target } from "./money-conversion.js";
import { dimensionGroup } from "./row-scope.js";
import type { Statement } from "./statement.js";

/** The sort key of a record sort field: stored columns, so that an index can serve the order. */
export function recordSortKey(field: RecordSortField, target: Target, dialect: SqlDialect): string {
  switch (field) {
    case "DATE_DAY":
    case "MARKET":
    case "DATA_SOURCE":
    case "CHANNEL":
    case "CAMPAIGN_ID":
      return dimensionGroup(field, dialect);
    case "IMPRESSIONS":
      return "r.impressions";
    case "CLICKS":
      return "r.clicks";
    case "CONVERSIONS":
      return "r.conversions_e4";
    case "SPEND":
      return convertedMinor(MONEY_COLUMNS.spend, target, dialect);
    case "REVENUE":
      return convertedMinor(MONEY_COLUMNS.revenue, target, dialect);
  }
}

/** A boundary's text of a sort key bound back as the key's type. */
function sortKeyValue(field: RecordSortField, placeholder: string, dialect: SqlDialect): string {
  switch (field) {
    case "DATE_DAY":
      return `CAST(${placeholder} AS DATE)`;
    case "MARKET":
    case "DATA_SOURCE":
    case "CHANNEL":
    case "CAMPAIGN_ID":
      return `CAST(${placeholder} AS VARCHAR)`;
    case "SPEND":
    case "REVENUE":
      return `CAST(${placeholder} AS ${dialect.wideInteger})`;
    default:
      return `CAST(${placeholder} AS BIGINT)`;
  }
}

/**
 * Rows after `boundary` in the order of `sort` (each key in its direction, then record id
 * ascending): past the first key, or equal to it and past the rest, and so on. The plain bound of
 * the first key comes first so that the engine can prune by it (zone maps, an index range).
 */
export function pastBoundary(
  sort: readonly SortEntry<RecordSortField>[],
  boundary: SortBoundary,
  target: Target,
  statement: Statement,
): string {
  const { bind, dialect } = statement;
  const keys = sort.map((entry, index) => ({
    expression: recordSortKey(entry.field, target, dialect),
    value: () => sortKeyValue(entry.field, bind(boundary.keys[index]!), dialect),
    ...(entry.direction === "DESC" ? { inclusive: "<=", strict: "<" } : { inclusive: ">=", strict: ">" }),
  }));
  // Placeholders are bound in the order they appear in the text (template parts evaluate in order).
  const past = (index: number): string => {
    const key = keys[index];
    if (key === undefined) return `r.record_id > ${bind(boundary.recordId)}`;
    return `(${key.expression} ${key.strict} ${key.value()} OR (${key.expression} = ${key.value()} AND ${past(index + 1)}))`;
  };
  const first = keys[0]!;
  return `${first.expression} ${first.inclusive} ${first.value()} AND ${past(0)}`;
}
