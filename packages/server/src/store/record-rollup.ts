/**
 * The record rollup (`record_rollup`): per brand, day, market, data source, channel and source
 * currency, the number of records and the sums of their stored columns (impressions, clicks and
 * the ten-thousandths of spend, conversions and revenue), exact and unconverted. It holds
 * everything but the campaign and the record id, in a few rows per day instead of thousands, so
 * that aggregates not grouped by campaign and the counts of records pages are answered without
 * reading the records (query-planner.ts `rowSourceOf`).
 *
 * CONTRACT §3 rule 7 holds: an aggregate converts each row, then sums. Rows of one source
 * currency and day share a rate, so converting their sum is converting each (multiplication
 * distributes, and the sum is converted exactly to 10⁻⁸ before rounding, as the records path
 * does with its own per-(group, currency, day) partial sums). The rollup keeps one row per
 * (…, currency, day): the partial sums the planner forms from records are sums of its rows.
 *
 * A load keeps it exact in its own transaction, beside the day row counts (data-versions.ts
 * `stampLoad`); a store that predates it is backfilled once (DuckDB schema, PostgreSQL migration 3).
 * Sums are wide (HUGEINT, numeric): a stored amount may reach 10¹⁸ ten-thousandths, so two of them
 * may not fit a BIGINT, and the records path's own `sum` is wide too.
 */
import type { SqlRun } from "./data-versions.js";
import { type ReplaceScope, replacedBy } from "./replace-scope.js";

/** The rollup's name: what the planner reads instead of `records` when it can. */
export const ROLLUP_TABLE = "record_rollup";

/** The stored columns the rollup groups by, in key order. */
const KEY_COLUMNS = "date, market, data_source, channel, currency";

/** The stored columns the rollup sums, each into a column of the same name. */
const SUMMED = ["impressions", "clicks", "spend_e4", "conversions_e4", "revenue_e4"];

/** The rollup's sums of a set of record rows (`FROM` a table with the records' columns). */
const SUMS = `count(*), ${SUMMED.map((column) => `sum(${column})`).join(", ")}`;

/** The rollup's count and sums columns, in its order. */
const SUM_COLUMNS = `rows, ${SUMMED.join(", ")}`;

/** The table in DuckDB (PostgreSQL creates the same in migration 3, `record_rollup`). */
export const ROLLUP_TABLE_DUCKDB = `CREATE TABLE IF NOT EXISTS ${ROLLUP_TABLE} (
  brand_id VARCHAR NOT NULL,
  date DATE NOT NULL,
  market VARCHAR NOT NULL,
  data_source VARCHAR NOT NULL,
  channel VARCHAR NOT NULL,
  currency VARCHAR NOT NULL,
  rows BIGINT NOT NULL,
  impressions HUGEINT NOT NULL,
  clicks HUGEINT NOT NULL,
  spend_e4 HUGEINT NOT NULL,
  conversions_e4 HUGEINT NOT NULL,
  revenue_e4 HUGEINT NOT NULL,
  PRIMARY KEY (brand_id, date, market, data_source, channel, currency)
)`;

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
 * Rolls up the records already stored (a store that predates the rollup): runs once, doing
 * nothing when the rollup has rows.
 */
export const ROLLUP_BACKFILL = `INSERT INTO ${ROLLUP_TABLE}
  SELECT brand_id, ${KEY_COLUMNS}, ${SUMS} FROM records
  WHERE NOT EXISTS (SELECT 1 FROM ${ROLLUP_TABLE}) GROUP BY brand_id, ${KEY_COLUMNS}`;

/**
 * Rolls the staged rows of a load up into the new temporary table `rolledUp` (the rollup's key
 * and sums, without the brand), in one scan: the day versions, day row counts, rollup and range
 * of the load are then read from a few rows per day instead of each from all the staged rows
 * (record-replace.ts). Both names are ours, never input.
 */
export async function rollUpStaged(run: SqlRun, staging: string, rolledUp: string): Promise<void> {
  await run(
    `CREATE TEMP TABLE ${rolledUp} AS SELECT ${KEY_COLUMNS}, count(*) AS rows,
      ${SUMMED.map((column) => `sum(${column}) AS ${column}`).join(", ")}
      FROM ${staging} GROUP BY ${KEY_COLUMNS}`,
  );
}

/**
 * After a load replaced the brand's rows of every day in `rolledUp` (or of every (day, data
 * source) in it), in the load's transaction: replaces those days' rollup rows with the load's.
 */
export async function rollUpLoad(
  run: SqlRun,
  load: { brandId: string; rolledUp: string; replace: ReplaceScope },
): Promise<void> {
  const { brandId, rolledUp } = load;
  await run(
    `DELETE FROM ${ROLLUP_TABLE} WHERE brand_id = $1 AND ${replacedBy(load.replace, rolledUp, ROLLUP_TABLE)}`,
    [brandId],
  );
  await run(
    `INSERT INTO ${ROLLUP_TABLE} SELECT CAST($1 AS VARCHAR), ${KEY_COLUMNS}, ${SUM_COLUMNS} FROM ${rolledUp}`,
    [brandId],
  );
}
