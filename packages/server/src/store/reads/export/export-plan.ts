/**
 * The plan of the bulk export's rows (CONTRACT §7): every record field named for it, money
 * converted in SQL as GraphQL converts it.
 */

import { RECORD_FIELDS } from "@mdq/contract";
import type { CurrencyCode } from "../../../currencies.js";
import type { PlannedSql, SqlDialect } from "../../model/engine.js";
import type { RecordField, RowScope, SortBoundary } from "../../model/query-request.js";
import {
  convertedMinor,
  dayRatesCte,
  MONEY_COLUMNS,
  money,
  rateJoins,
  targetOf,
} from "../../sql/money-conversion.js";
import { recordColumn } from "../../sql/record-columns.js";
import { whereClause } from "../../sql/row-scope.js";
import { pastBoundary } from "../../sql/sort-boundary.js";
import { rowCount, Statement } from "../../sql/statement.js";

/** The record fields in the schema's order (the export's columns). */
const RECORD_FIELD_ORDER: readonly RecordField[] = RECORD_FIELDS;

/**
 * A planned export read (`planRecordsExport`): every record field as a column named for it, in
 * `RECORD_FIELDS` order, money converted in SQL.
 */
export type PlannedExport = PlannedSql;

/** Where an export window's rows begin and end in its range's order (record-export.ts `exportWindows`). */
export interface ExportPosition {
  /** The last row a previous response delivered, when resuming; null otherwise. */
  after: SortBoundary | null;
  /** Rows to pass over first (after `after`). */
  skip: number;
  /** The most rows to read; null for all. */
  take: number | null;
}

/**
 * Plans the bulk export's rows of `scope` (CONTRACT §7), ascending by (day, record id), after
 * `position.after` when resuming, `position.skip` rows on, at most `position.take`: one column
 * per `MarketingRecord` field, named for it (`date` as `YYYY-MM-DD`, counts as BIGINT,
 * `conversions` and the amounts as the doubles GraphQL serves, the amounts converted as
 * `marketingRecords` converts them: `convertedMinor`, half-even to the minor unit, then ÷ 10^minor
 * units in a double, as record-money.ts does in JavaScript). The engines write these rows
 * themselves (store/reads/export/export-sql.ts), but for a text export's first window; the read cannot
 * lack a rate, for the export's facts refused the range first when one lacks (page-reads.ts
 * `walkFacts`).
 */
export function planRecordsExport(
  scope: RowScope,
  currency: CurrencyCode,
  dialect: SqlDialect,
  position: ExportPosition,
): PlannedExport {
  const target = targetOf(currency);
  const statement = new Statement(dialect);
  const rates = dayRatesCte(scope, statement);
  const joins = rateJoins(target, statement);
  let where = whereClause(scope, statement);
  if (position.after)
    where += ` AND ${pastBoundary([{ field: "DATE_DAY", direction: "ASC" }], position.after, target, statement)}`;
  const column = (field: Exclude<RecordField, "spend" | "revenue" | "currency">) => {
    if (field === "impressions" || field === "clicks") return `CAST(r.${field} AS BIGINT)`;
    return recordColumn(field, dialect);
  };
  const columns = RECORD_FIELD_ORDER.map((field) => {
    const expression =
      field === "spend" || field === "revenue"
        ? money(convertedMinor(MONEY_COLUMNS[field], target, dialect), target, dialect)
        : field === "currency"
          ? `CAST(${target.literal} AS VARCHAR)`
          : column(field);
    return `${expression} AS "${field}"`;
  });
  const take = position.take === null ? "" : ` LIMIT ${rowCount(position.take)}`;
  const skip = position.skip > 0 ? ` OFFSET ${rowCount(position.skip)}` : "";
  return {
    sql: `WITH ${rates} SELECT ${columns.join(", ")} FROM records r ${joins} WHERE ${where}
      ORDER BY r.date ASC, r.record_id ASC${take}${skip}`,
    params: statement.params,
  };
}
