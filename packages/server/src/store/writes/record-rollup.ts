/**
 * The record rollup's writes (its table: sql/rollup-table.ts): a load's staged rows rolled up, and
 * those rows replacing the rollup's rows of the days (or (day, data source) pairs) the load replaces.
 */
import type { SqlDialect, SqlRun } from "../model/engine.js";
import {
  KEY_COLUMNS,
  ROLLUP_TABLE,
  rolledUpRowsOf,
  rolledUpTableOf,
  rollupColumns,
  SUM_LAYOUTS,
  SUMMED,
} from "../sql/rollup-table.js";
import { bound } from "../sql/statement.js";
import { type ReplaceScope, replacedBy } from "./replace-scope.js";

/**
 * Rolls the staged rows of a load up into the new temporary table `rolledUpTableOf(staging)`, in
 * one scan: the day versions, day row counts, rollup and range of the load are then read from a
 * few rows per day instead of each from all the staged rows (record-replace.ts). The name is
 * ours, never input.
 */
export async function rollUpStaged(run: SqlRun, staging: string): Promise<void> {
  await run(`CREATE TEMP TABLE ${rolledUpTableOf(staging)} AS ${rolledUpRowsOf(staging)}`);
}

/**
 * After a load replaced the brand's rows of every day in `rolledUp` (or of every (day, data
 * source) in it), in the load's transaction: replaces those days' rollup rows with the load's.
 */
export async function rollUpLoad(
  run: SqlRun,
  dialect: SqlDialect,
  load: { brandId: string; rolledUp: string; replace: ReplaceScope },
): Promise<void> {
  const { brandId, rolledUp } = load;
  const sums = SUMMED.flatMap(SUM_LAYOUTS[dialect.engine].values);
  await run(
    ...bound(
      dialect,
      (bind) =>
        `DELETE FROM ${ROLLUP_TABLE} WHERE brand_id = ${bind(brandId)} AND ${replacedBy(load.replace, rolledUp, ROLLUP_TABLE)}`,
    ),
  );
  await run(
    ...bound(
      dialect,
      (bind) => `INSERT INTO ${ROLLUP_TABLE} (brand_id, ${rollupColumns(dialect.engine)})
      SELECT CAST(${bind(brandId)} AS VARCHAR), ${KEY_COLUMNS}, rows, ${sums.join(", ")} FROM ${rolledUp}`,
    ),
  );
}
