/**
 * What a load replaces (`mdq load --replace`, docs/load-format.md): every record of the brand on
 * each day in the file (`days`, the default), or only its records of each (day, data source) in
 * the file (`sources`), so that platforms restated on their own schedules do not erase each other.
 */

import type { ReplaceScope } from "@mdq/contract";

export { REPLACE_SCOPES, type ReplaceScope } from "@mdq/contract";

/**
 * An SQL condition, true for a row `row` (a table alias with `date` and `data_source`) of the
 * loading brand that the load staged in `staging` replaces. Both names are ours, never input.
 */
export function replacedBy(scope: ReplaceScope, staging: string, row: string): string {
  return scope === "days"
    ? `${row}.date IN (SELECT DISTINCT date FROM ${staging})`
    : `EXISTS (SELECT 1 FROM ${staging} replaced WHERE replaced.date = ${row}.date AND replaced.data_source = ${row}.data_source)`;
}
