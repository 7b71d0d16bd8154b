/**
 * The plans of the version reads: the data version of a range, a brand's readiness facts and its
 * data status, read from the version tables and row counts, never from the records.
 */
import type { PlannedSql, SqlDialect } from "../../model/engine.js";
import type { RowScope } from "../../model/query-request.js";
import type { DataChangesRequest } from "../../model/store.js";
import { Statement } from "../../sql/statement.js";
import { brandVersionColumn } from "../../sql/version-tables.js";

/** A planned read of the data version: one row, one column (how many loads touched the range). */
export type PlannedDataVersion = PlannedSql;

/**
 * Plans the data version of a range (`pageInfo.dataVersion`, data-versions.ts): the latest version
 * stamped on one of the brand's days in it, or on an FX change reaching them (the brand's own
 * counter: `<region>.<version>` compares with `marketingDataChanges`' `since`).
 */
export function planDataVersion(scope: RowScope, dialect: SqlDialect): PlannedDataVersion {
  const statement = new Statement(dialect);
  const { bind } = statement;
  return {
    sql: `SELECT greatest(
      coalesce((SELECT max(version) FROM day_versions WHERE brand_id = ${bind(scope.brandId)}
        AND date BETWEEN CAST(${bind(scope.from)} AS DATE) AND CAST(${bind(scope.to)} AS DATE)), 0),
      coalesce((SELECT max(version) FROM brand_fx_versions WHERE brand_id = ${bind(scope.brandId)}
        AND first_date <= CAST(${bind(scope.to)} AS DATE)), 0))`,
    params: statement.params,
  };
}

/**
 * Plans a brand's readiness facts for a processing date (CONTRACT §3 rule 8): whether it is
 * published, the last publish, and the last day with records inside the grants (NULL without
 * grants: no rows are readable). The last day is read from `day_row_counts` (data-versions.ts),
 * a row per day, market and data source, never from the records: its cost does not grow with them.
 */
export function planReadiness(
  brandId: string,
  processingDate: string,
  grants: { markets: string[]; dataSources: string[] },
  dialect: SqlDialect,
): PlannedSql {
  const statement = new Statement(dialect);
  const { bind } = statement;
  const granted = grants.markets.length > 0 && grants.dataSources.length > 0;
  const published = `EXISTS (SELECT 1 FROM publishes WHERE brand_id = ${bind(brandId)}
    AND processing_date = CAST(${bind(processingDate)} AS DATE)) AS published`;
  const lastProcessed = `(SELECT ${dialect.instant("max(published_at)")} FROM publishes
    WHERE brand_id = ${bind(brandId)}) AS last_processed_at`;
  const availableThrough = granted
    ? `(SELECT ${dialect.formatDate("max(date)")} FROM day_row_counts WHERE brand_id = ${bind(brandId)}
        AND market IN (${grants.markets.map(bind).join(", ")})
        AND data_source IN (${grants.dataSources.map(bind).join(", ")}))`
    : "CAST(NULL AS VARCHAR)";
  // The brand's data version in the same statement: one read instead of two.
  const version = brandVersionColumn(bind(brandId));
  return {
    sql: `SELECT ${published}, ${lastProcessed}, ${availableThrough} AS available_through, ${version}`,
    params: statement.params,
  };
}

/**
 * Plans a brand's data at a glance: its rows, first and last day (from `day_row_counts`, not the
 * records), and last publish.
 */
export function planDataStatus(brandId: string, dialect: SqlDialect): PlannedSql {
  const statement = new Statement(dialect);
  const { bind } = statement;
  const { formatDate, instant } = dialect;
  return {
    sql: `SELECT
      (SELECT coalesce(sum(rows), 0) FROM day_row_counts WHERE brand_id = ${bind(brandId)}) AS rows,
      (SELECT ${formatDate("min(date)")} FROM day_row_counts WHERE brand_id = ${bind(brandId)}) AS first_day,
      (SELECT ${formatDate("max(date)")} FROM day_row_counts WHERE brand_id = ${bind(brandId)}) AS last_day,
      (SELECT ${instant("published_at")} FROM publishes WHERE brand_id = ${bind(brandId)}
        ORDER BY processing_date DESC LIMIT 1) AS last_published_at,
      (SELECT ${formatDate("max(processing_date)")} FROM publishes WHERE brand_id = ${bind(brandId)})
        AS last_published_date`,
    params: statement.params,
  };
}

/**
 * Plans `marketingDataChanges` as one statement, so that what it reads agrees without a snapshot
 * transaction (one round trip, where a transaction took five: a cheap question waits for the
 * database's CPU once, not five times, while heavy work keeps it busy). Columns: the brand's
 * version (`brandVersionColumn`); per day of the range, its date, day version, changed at and the
 * caller's visible rows (grants and narrowing applied); the reason of the caller's latest scope
 * change after `since` (null without `since`, or none); and the brand's FX changes reaching days
 * up to `to`, as `first-day version changed-at-ms` items joined by commas in first-day order (a few
 * per FX upload), the same on every row. One row of the version alone when no day has any.
 * Set-based: one grouped read of the row counts joined by day, not a correlated count per day.
 */
export function planDataChanges(request: DataChangesRequest, dialect: SqlDialect): PlannedSql {
  const statement = new Statement(dialect);
  const { bind } = statement;
  const { markets, dataSources } = request.grants;
  const visible = () =>
    markets.length > 0 && dataSources.length > 0
      ? `c.market IN (${markets.map(bind).join(", ")}) AND c.data_source IN (${dataSources.map(bind).join(", ")})`
      : "FALSE";
  const scopeChange = (since: bigint | null) =>
    since === null
      ? "SELECT CAST(NULL AS VARCHAR) AS reason"
      : `SELECT reason FROM scope_versions WHERE brand_id = ${bind(request.brandId)}
        AND version > CAST(${bind(since.toString())} AS BIGINT)
        AND (app_client_id IS NULL OR app_client_id = ${bind(request.appClientId)})
        ORDER BY version DESC LIMIT 1`;
  // Placeholders are bound in the order they appear in the text (template parts evaluate in order).
  return {
    sql: `SELECT v.brand_version, d.day, d.version, d.changed_at_ms, d.rows, s.reason AS scope_reason,
      f.fx_changes
    FROM (SELECT ${brandVersionColumn(bind(request.brandId))}) v LEFT JOIN (
      SELECT ${dialect.formatDate("d.date")} AS day, d.date, d.version, d.changed_at_ms,
        coalesce(c.rows, 0) AS rows
      FROM day_versions d LEFT JOIN (
        SELECT c.date, sum(c.rows) AS rows FROM day_row_counts c
        WHERE c.brand_id = ${bind(request.brandId)} AND c.date BETWEEN CAST(${bind(request.from)} AS DATE)
          AND CAST(${bind(request.to)} AS DATE) AND ${visible()}
        GROUP BY c.date) c ON c.date = d.date
      WHERE d.brand_id = ${bind(request.brandId)} AND d.date BETWEEN CAST(${bind(request.from)} AS DATE)
        AND CAST(${bind(request.to)} AS DATE)) d ON TRUE
    LEFT JOIN (${scopeChange(request.since)}) s ON TRUE
    LEFT JOIN (
      SELECT string_agg(${dialect.formatDate("first_date")} || ' ' || CAST(version AS VARCHAR) || ' '
        || CAST(changed_at_ms AS VARCHAR), ',' ORDER BY first_date) AS fx_changes
      FROM brand_fx_versions
      WHERE brand_id = ${bind(request.brandId)} AND first_date <= CAST(${bind(request.to)} AS DATE)) f ON TRUE
    ORDER BY d.date`,
    params: statement.params,
  };
}
