/**
 * The tables of data versions (CONTRACT §6; writes/version-stamps.ts stamps them) and the
 * brand's version as a column of a read.
 */

/** The tables in DuckDB (PostgreSQL creates the same in migration 2, `data_versions`, with its "C" collation). */
export const DATA_VERSION_TABLES = [
  `CREATE TABLE IF NOT EXISTS day_versions (
    brand_id VARCHAR NOT NULL,
    date DATE NOT NULL,
    version BIGINT NOT NULL,
    changed_at_ms BIGINT NOT NULL,
    PRIMARY KEY (brand_id, date)
  )`,
  `CREATE TABLE IF NOT EXISTS day_row_counts (
    brand_id VARCHAR NOT NULL,
    date DATE NOT NULL,
    market VARCHAR NOT NULL,
    data_source VARCHAR NOT NULL,
    rows BIGINT NOT NULL,
    PRIMARY KEY (brand_id, date, market, data_source)
  )`,
  // Before versions were per brand: FX changes stamped from the region's counter; read once, by
  // DATA_VERSION_BACKFILL, into brand_fx_versions.
  `CREATE TABLE IF NOT EXISTS fx_versions (
    version BIGINT PRIMARY KEY,
    first_date DATE NOT NULL,
    changed_at_ms BIGINT NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS brand_fx_versions (
    brand_id VARCHAR NOT NULL,
    version BIGINT NOT NULL,
    first_date DATE NOT NULL,
    changed_at_ms BIGINT NOT NULL,
    PRIMARY KEY (brand_id, version)
  )`,
  `CREATE TABLE IF NOT EXISTS brand_versions (
    brand_id VARCHAR PRIMARY KEY,
    version BIGINT NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS scope_versions (
    brand_id VARCHAR NOT NULL,
    version BIGINT NOT NULL,
    app_client_id VARCHAR,
    reason VARCHAR NOT NULL,
    changed_at_ms BIGINT NOT NULL,
    PRIMARY KEY (brand_id, version)
  )`,
];

/**
 * Makes versions per brand in a store that predates it: each FX change stamped from the region's
 * counter is copied to every brand (only when no brand has a counter yet, so once), and each brand's
 * counter starts at the greatest of its stamps, so that its versions keep growing for a client that
 * stored one. Idempotent: a brand that has a counter keeps it.
 */
export const BRAND_VERSION_BACKFILL = [
  `INSERT INTO brand_fx_versions (brand_id, version, first_date, changed_at_ms)
    SELECT b.brand_id, f.version, f.first_date, f.changed_at_ms FROM brands b CROSS JOIN fx_versions f
    WHERE NOT EXISTS (SELECT 1 FROM brand_fx_versions) AND NOT EXISTS (SELECT 1 FROM brand_versions)`,
  `INSERT INTO brand_versions (brand_id, version)
    SELECT brand_id, max(version) FROM (
      SELECT brand_id, version FROM day_versions
      UNION ALL SELECT brand_id, version FROM scope_versions
      UNION ALL SELECT brand_id, version FROM brand_fx_versions
    ) stamps
    WHERE brand_id NOT IN (SELECT brand_id FROM brand_versions) GROUP BY brand_id`,
];

/**
 * Stamps the data already in a store that predates data versions: every day holding records at
 * the current version, with its row counts. Runs once (it does nothing when counts exist).
 */
export const DATA_VERSION_BACKFILL = [
  `INSERT INTO day_row_counts (brand_id, date, market, data_source, rows)
    SELECT brand_id, date, market, data_source, count(*) FROM records
    WHERE NOT EXISTS (SELECT 1 FROM day_row_counts) GROUP BY brand_id, date, market, data_source`,
  `INSERT INTO day_versions (brand_id, date, version, changed_at_ms)
    SELECT DISTINCT brand_id, date, (SELECT generation FROM data_generation WHERE id = 1), 0 FROM day_row_counts
    WHERE NOT EXISTS (SELECT 1 FROM day_versions)`,
  ...BRAND_VERSION_BACKFILL,
];

/**
 * The brand's latest version: its latest load, FX change or scope change, all stamped from its own
 * counter. This is the version a brand is shown (readiness, `marketingDataChanges`): another
 * brand's load never moves it nor shows in the gap between two of its versions. It only grows,
 * lives in the store, and reads the same on every instance (CONTRACT §6.1). It is the counter
 * itself (`brand_versions`, one row read by its key): every value the counter takes is stamped in
 * the same transaction (`nextVersion`'s callers each stamp what they bump it for; an FX change
 * stamps every brand it bumps), so the counter equals the greatest of the brand's stamps, which
 * three `max(version)` reads of the stamp tables gave before (1.5 ms of a 366-day
 * `marketingDataChanges` in DuckDB on a 2-core AMD EPYC). As a column of a SELECT, binding the
 * brand with `brand`; a brand nothing was stamped for has no row (version 0).
 */
export function brandVersionColumn(brand: string): string {
  return `(SELECT version FROM brand_versions WHERE brand_id = ${brand}) AS brand_version`;
}

/** The brand's latest version from a row holding `brandVersionColumn`. */
export function brandVersionOf(row: Record<string, unknown> | undefined): bigint {
  return versionOf(row?.["brand_version"]);
}

/** A version read from the store: 0 when there is none (NULL). */
export function versionOf(value: unknown): bigint {
  return value === null || value === undefined ? 0n : BigInt(String(value));
}
