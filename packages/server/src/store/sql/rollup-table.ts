/**
 * The record rollup (`record_rollup`): per brand, day, market, data source, channel and source
 * currency, the number of records and the sums of their stored columns (impressions, clicks and
 * the ten-thousandths of spend, conversions and revenue), exact and unconverted. It holds
 * everything but the campaign and the record id, in a few rows per day instead of thousands, so
 * that aggregates not grouped by campaign and the counts of records pages are answered without
 * reading the records (sql/row-scope.ts `rowSourceOf`).
 *
 * CONTRACT §3 rule 7 holds: an aggregate converts each row, then sums. Rows of one source
 * currency and day share a rate, so converting their sum is converting each (multiplication
 * distributes, and the sum is converted exactly to 10⁻⁸ before rounding, as the records path
 * does with its own per-(group, currency, day) partial sums). The rollup keeps one row per
 * (…, currency, day): the partial sums the planner forms from records are sums of its rows.
 *
 * A load keeps it exact in its own transaction, beside the day row counts (writes/record-replace.ts
 * calls writes/record-rollup.ts `rollUpLoad` after `stampLoad`); a store that predates it is backfilled once (DuckDB schema, PostgreSQL migration 3).
 * Sums are exact whatever their size: a stored amount may reach 10¹⁸ ten-thousandths, so two of
 * them may not fit a BIGINT (PostgreSQL keeps numeric; DuckDB two BIGINT parts, `SPLIT`), and they
 * are read as wide integers, as the records path's own `sum`.
 */
import type { SqlDialect } from "../model/engine.js";

/** The rollup's name: what the planner reads instead of `records` when it can. */
export const ROLLUP_TABLE = "record_rollup";

/** The stored columns the rollup groups by, in key order. */
export const KEY_COLUMNS = "date, market, data_source, channel, currency";

/** The stored columns the rollup sums, each into a sum of the same name. */
export const SUMMED = ["impressions", "clicks", "spend_e4", "conversions_e4", "revenue_e4"];

/** The columns of a load's rows rolled up (`rolledUpRowsOf`), in order. */
export const ROLLED_UP_COLUMNS = [...KEY_COLUMNS.split(", "), "rows", ...SUMMED];

/**
 * DuckDB keeps each sum in two BIGINT columns, `<sum>_high` and `<sum>_low`, the sum being
 * high × 10¹⁸ + low (each part of the sum's own sign): DuckDB reads bit-packed HUGEINT columns
 * about three times slower than BIGINT ones. An aggregate's rollup statement over the scale-600
 * demo (10,080 rows of a 90-day window, one thread) took 14–23 ms with HUGEINT sums and 5–7 ms
 * split (2026-11-26); `_high` is 0 in any real rollup, a constant DuckDB reads for free.
 * PostgreSQL keeps each sum in one numeric column: split, its grouped reads were no faster.
 */
const SPLIT = "1000000000000000000";

/** How one engine's rollup keeps a sum of a stored column. */
interface SumLayout {
  /** The columns that keep the sum of `column`. */
  columns(column: string): string[];
  /** Their values for the sum `sum` (an exact integer expression), in the same order. */
  values(sum: string): string[];
  /** The sum of `column` over the rollup rows `r` of a grouped read, as a wide integer. */
  read(column: string): string;
}

export const SUM_LAYOUTS: Record<SqlDialect["engine"], SumLayout> = {
  duckdb: {
    columns: (column) => [`${column}_high`, `${column}_low`],
    values: (sum) => [`CAST((${sum}) // ${SPLIT} AS BIGINT)`, `CAST((${sum}) % ${SPLIT} AS BIGINT)`],
    read: (column) => `(sum(r.${column}_high) * ${SPLIT} + sum(r.${column}_low))`,
  },
  postgres: {
    columns: (column) => [column],
    values: (sum) => [sum],
    read: (column) => `sum(r.${column})`,
  },
};

/**
 * The sum of the stored column `column` over the rollup rows `r` of a grouped read: a wide integer
 * (HUGEINT, numeric), as the records' own `sum(r.column)`.
 */
export function rollupSum(column: string, dialect: SqlDialect): string {
  return SUM_LAYOUTS[dialect.engine].read(column);
}

/** The rollup's columns after the brand, in table order. */
export function rollupColumns(engine: SqlDialect["engine"]): string {
  return [KEY_COLUMNS, "rows", ...SUMMED.flatMap(SUM_LAYOUTS[engine].columns)].join(", ");
}

/**
 * The table in DuckDB (PostgreSQL creates its own in migration 3, `ROLLUP_TABLE_POSTGRES`). No
 * primary key: a load keeps its key unique (it deletes the days it rolls up before inserting
 * them, grouped by the key), and DuckDB reads it by zone maps, never by the key's ART index,
 * which cost each load 50–80 ms to delete from, insert into and commit (issue 19, a 90-day
 * reload: 20 + 24 + 35 ms against 1 + 7 + 5).
 */
export const ROLLUP_TABLE_DUCKDB = `CREATE TABLE IF NOT EXISTS ${ROLLUP_TABLE} (
  brand_id VARCHAR NOT NULL,
  date DATE NOT NULL,
  market VARCHAR NOT NULL,
  data_source VARCHAR NOT NULL,
  channel VARCHAR NOT NULL,
  currency VARCHAR NOT NULL,
  rows BIGINT NOT NULL,
  ${SUMMED.flatMap(SUM_LAYOUTS.duckdb.columns)
    .map((part) => `${part} BIGINT NOT NULL`)
    .join(",\n  ")}
)`;

/**
 * A DuckDB rollup an older MDQ made, its sums in HUGEINT columns named as the summed columns or
 * with a primary key: dropped when the store opens (duckdb/schema.ts), then made anew and
 * backfilled.
 */
export const ROLLUP_OUTDATED_DUCKDB = `SELECT 1 FROM duckdb_columns()
  WHERE table_name = '${ROLLUP_TABLE}' AND column_name = 'spend_e4'
  UNION ALL SELECT 1 FROM duckdb_constraints()
  WHERE table_name = '${ROLLUP_TABLE}' AND constraint_type = 'PRIMARY KEY'`;

/** The table in PostgreSQL (its text columns in the "C" collation, like the records'). */
export const ROLLUP_TABLE_POSTGRES = `CREATE TABLE ${ROLLUP_TABLE} (
  brand_id text COLLATE "C" NOT NULL,
  date date NOT NULL,
  market text COLLATE "C" NOT NULL,
  data_source text COLLATE "C" NOT NULL,
  channel text COLLATE "C" NOT NULL,
  currency text COLLATE "C" NOT NULL,
  rows bigint NOT NULL,
  impressions numeric NOT NULL,
  clicks numeric NOT NULL,
  spend_e4 numeric NOT NULL,
  conversions_e4 numeric NOT NULL,
  revenue_e4 numeric NOT NULL,
  PRIMARY KEY (brand_id, date, market, data_source, channel, currency)
)`;

/**
 * Rolls up the records already stored (a store that predates the rollup, or whose rollup was
 * outdated): runs once, doing nothing when the rollup has rows.
 */
export function rollupBackfill(engine: SqlDialect["engine"]): string {
  const sums = SUMMED.flatMap((column) => SUM_LAYOUTS[engine].values(`sum(${column})`));
  return `INSERT INTO ${ROLLUP_TABLE} (brand_id, ${rollupColumns(engine)})
  SELECT brand_id, ${KEY_COLUMNS}, count(*), ${sums.join(", ")} FROM records
  WHERE NOT EXISTS (SELECT 1 FROM ${ROLLUP_TABLE}) GROUP BY brand_id, ${KEY_COLUMNS}`;
}

/**
 * The rows `staging` (stored columns) rolled up: the rollup's key and sums, without the brand,
 * then the aggregates `also` (SQL of ours, each with its name). `staging` is a table or a
 * parenthesised query of ours, never input.
 */
export function rolledUpRowsOf(staging: string, also: string[] = []): string {
  return `SELECT ${KEY_COLUMNS}, count(*) AS rows,
    ${[...SUMMED.map((column) => `sum(${column}) AS ${column}`), ...also].join(", ")}
    FROM ${staging} GROUP BY ${KEY_COLUMNS}`;
}

/** The temporary table of a staging table's rows rolled up (`rollUpStaged`). */
export function rolledUpTableOf(staging: string): string {
  return `${staging}_rolled_up`;
}

/**
 * A PostgreSQL temporary table for a load's rows rolled up elsewhere (`rolledUpRowsOf`'s columns,
 * as the scratch DuckDB that checked the file writes them), dropped at commit.
 */
export function rolledUpTablePostgres(rolledUp: string): string {
  return `CREATE TEMP TABLE ${rolledUp} (date date, market text COLLATE "C", data_source text COLLATE "C",
    channel text COLLATE "C", currency text COLLATE "C", rows bigint,
    ${SUMMED.map((column) => `${column} numeric`).join(", ")}) ON COMMIT DROP`;
}
