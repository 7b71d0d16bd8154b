/**
 * The plans of the brand directory's reads (brands, apps, a brand's grants): what authentication
 * reads and the admin API lists. Instants are read as the engine's row mapping expects them
 * (`SqlDialect.instant`).
 */
import type { PlannedSql, SqlDialect } from "../../model/engine.js";
import { Statement } from "../../sql/statement.js";

/** Which rows of a directory table a read asks: one by its key, one brand's, or all. */
export type DirectoryFilter = { key: string } | { brandId: string } | null;

/** A timestamp column under its own name. */
function instantColumn(column: string, dialect: SqlDialect): string {
  return `${dialect.instant(column)} AS ${column}`;
}

/** Plans the brand `brandId`, or every brand (by id) when null. */
export function planBrands(brandId: string | null, dialect: SqlDialect): PlannedSql {
  const statement = new Statement(dialect);
  const select = `SELECT brand_id, name, ${instantColumn("created_at", dialect)} FROM brands`;
  return {
    sql:
      brandId === null
        ? `${select} ORDER BY brand_id`
        : `${select} WHERE brand_id = ${statement.bind(brandId)}`,
    params: statement.params,
  };
}

/** Plans the app whose client id is `filter.key`, a brand's apps, or every app (by brand, then id). */
export function planApps(filter: DirectoryFilter, dialect: SqlDialect): PlannedSql {
  const statement = new Statement(dialect);
  const select = `SELECT app_client_id, brand_id, name, secret_hash, previous_secret_hash,
      ${instantColumn("previous_secret_expires_at", dialect)}, markets, data_sources,
      ${instantColumn("revoked_at", dialect)}, ${instantColumn("created_at", dialect)} FROM apps`;
  const sql =
    filter === null
      ? `${select} ORDER BY brand_id, app_client_id`
      : "key" in filter
        ? `${select} WHERE app_client_id = ${statement.bind(filter.key)}`
        : `${select} WHERE brand_id = ${statement.bind(filter.brandId)} ORDER BY app_client_id`;
  return { sql, params: statement.params };
}

/** Plans a brand's grants as rows (kind, value), ordered by value. */
export function planGrants(brandId: string, dialect: SqlDialect): PlannedSql {
  const statement = new Statement(dialect);
  return {
    sql: `SELECT kind, value FROM grants WHERE brand_id = ${statement.bind(brandId)} ORDER BY value`,
    params: statement.params,
  };
}
