/**
 * Which stored days have a reference rate for their currency (CONTRACT §3 rule 7), as SQL text. A
 * read converts every row through EUR, so a row whose currency has no rate on or before its day
 * makes every read over that day fail, whatever currency the reader asks for. Rates are only ever
 * added or changed, never removed (`upsertFxRates`): a currency's days are covered from its first
 * rate on, and a day covered once stays covered.
 */
import { BASE_CURRENCY } from "../../../currencies.js";
import type { PlannedSql, SqlDialect } from "../../model/engine.js";
import { ROLLUP_TABLE } from "../../sql/rollup-table.js";
import { Statement } from "../../sql/statement.js";

/** The first day of each currency's rates: a few rows, one per currency. */
export function planFxRateStarts(dialect: SqlDialect): PlannedSql {
  return {
    sql: `SELECT currency, ${dialect.formatDate("min(date)")} AS first_day FROM fx_rates GROUP BY currency`,
    params: [],
  };
}

/**
 * The days each brand (or only `brandId`) stored in a currency before its first rate, read from
 * the rollup (a few rows per brand and day) against each currency's first rate.
 */
export function planUnreadableDays(dialect: SqlDialect, brandId?: string): PlannedSql {
  const { formatDate } = dialect;
  const statement = new Statement(dialect);
  const base = statement.bind(BASE_CURRENCY);
  const ofBrand = brandId === undefined ? "" : `AND r.brand_id = ${statement.bind(brandId)}`;
  return {
    sql: `SELECT r.brand_id, r.currency, ${formatDate("min(f.first_day)")} AS first_rate,
        ${formatDate("min(r.date)")} AS first_day, ${formatDate("max(r.date)")} AS last_day,
        count(DISTINCT r.date) AS days
      FROM ${ROLLUP_TABLE} r
      LEFT JOIN (SELECT currency, min(date) AS first_day FROM fx_rates GROUP BY currency) f
        ON f.currency = r.currency
      WHERE r.currency <> ${base} AND (f.first_day IS NULL OR r.date < f.first_day) ${ofBrand}
      GROUP BY r.brand_id, r.currency
      ORDER BY r.brand_id, r.currency`,
    params: statement.params,
  };
}
