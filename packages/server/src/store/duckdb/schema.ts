/** The DuckDB schema of a region's store, applied idempotently when the store opens. */

import {
  ROLLUP_OUTDATED_DUCKDB,
  ROLLUP_TABLE,
  ROLLUP_TABLE_DUCKDB,
  rollupBackfill,
} from "../sql/rollup-table.js";
import { DIV_HALF_EVEN_MACRO } from "../sql/sql-dialect.js";
import { DATA_VERSION_BACKFILL, DATA_VERSION_TABLES } from "../sql/version-tables.js";

/**
 * Tables an older MDQ made in a layout this one no longer reads, each with the query that finds
 * it (a row when it is outdated): the store drops them before applying `DUCKDB_SCHEMA`, which
 * makes them anew and backfills them from the records.
 */
export const OUTDATED_TABLES: readonly { table: string; found: string }[] = [
  { table: ROLLUP_TABLE, found: ROLLUP_OUTDATED_DUCKDB },
];

export const DUCKDB_SCHEMA = [
  `CREATE TABLE IF NOT EXISTS brands (
    brand_id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS apps (
    app_client_id VARCHAR PRIMARY KEY,
    brand_id VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    secret_hash VARCHAR NOT NULL,
    previous_secret_hash VARCHAR,
    previous_secret_expires_at TIMESTAMP,
    markets VARCHAR[],
    data_sources VARCHAR[],
    revoked_at TIMESTAMP,
    created_at TIMESTAMP NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS grants (
    brand_id VARCHAR NOT NULL,
    kind VARCHAR NOT NULL CHECK (kind IN ('market', 'data_source')),
    value VARCHAR NOT NULL,
    PRIMARY KEY (brand_id, kind, value)
  )`,
  `CREATE TABLE IF NOT EXISTS fx_rates (
    currency VARCHAR NOT NULL,
    date DATE NOT NULL,
    rate_e6 BIGINT NOT NULL CHECK (rate_e6 > 0),
    PRIMARY KEY (currency, date)
  )`,
  // No primary key on records: an ART index would slow bulk loads, and uniqueness of
  // (brand_id, record_id) is checked when a load is validated. Rows are kept sorted by
  // brand and date so that DuckDB's zone maps prune row groups on brand + range scans.
  `CREATE TABLE IF NOT EXISTS records (
    brand_id VARCHAR NOT NULL,
    record_id VARCHAR NOT NULL,
    date DATE NOT NULL,
    market VARCHAR NOT NULL,
    data_source VARCHAR NOT NULL,
    channel VARCHAR NOT NULL,
    campaign_id VARCHAR NOT NULL,
    campaign_name VARCHAR NOT NULL,
    impressions BIGINT NOT NULL,
    clicks BIGINT NOT NULL,
    spend_e4 BIGINT NOT NULL,
    conversions_e4 BIGINT NOT NULL,
    revenue_e4 BIGINT NOT NULL,
    currency VARCHAR NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS publishes (
    brand_id VARCHAR NOT NULL,
    processing_date DATE NOT NULL,
    published_at TIMESTAMP NOT NULL,
    PRIMARY KEY (brand_id, processing_date)
  )`,
  `CREATE TABLE IF NOT EXISTS loads (
    load_id VARCHAR PRIMARY KEY,
    brand_id VARCHAR NOT NULL,
    processing_date DATE NOT NULL,
    loaded_at TIMESTAMP NOT NULL,
    source VARCHAR NOT NULL,
    rows BIGINT NOT NULL,
    first_day DATE,
    last_day DATE
  )`,
  // The region's data version counter (writes/version-stamps.ts); one row.
  `CREATE TABLE IF NOT EXISTS data_generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    generation BIGINT NOT NULL
  )`,
  "INSERT INTO data_generation SELECT 1, 0 WHERE NOT EXISTS (SELECT 1 FROM data_generation)",
  ...DATA_VERSION_TABLES,
  ...DATA_VERSION_BACKFILL,
  ROLLUP_TABLE_DUCKDB,
  rollupBackfill("duckdb"),
  DIV_HALF_EVEN_MACRO,
];
