/**
 * The plan of the FX rates read: the stored rates the days of a range can use.
 */
import type { PlannedSql, SqlDialect } from "../../model/engine.js";
import { RATED_CURRENCIES } from "../../sql/money-conversion.js";
import { Statement } from "../../sql/statement.js";

/**
 * Plans the stored FX rates the days of `range` can use (`SqlDialect.fxRates`) as rows (currency, day
 * `YYYY-MM-DD`, rate_e6): what walks and rollup aggregates convert with (record-money.ts
 * `FxHistory`, once per data generation and calendar year) and an export checks with.
 */
export function planFxRates(dialect: SqlDialect, range: { from: string; to: string }): PlannedSql {
  const statement = new Statement(dialect);
  const rates = dialect.fxRates(statement.bind, range, RATED_CURRENCIES);
  return {
    sql: `SELECT currency, ${dialect.formatDate("date")} AS day, rate_e6 FROM (${rates}) rates ORDER BY currency, date`,
    params: statement.params,
  };
}
