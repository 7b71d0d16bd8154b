/**
 * Which stored days have a reference rate for their currency (CONTRACT §3 rule 7). A read
 * converts every row through EUR, so a row whose currency has no rate on or before its day makes
 * every read over that day fail, whatever currency the reader asks for. Rates are only ever added
 * or changed, never removed (`upsertFxRates`): a currency's days are covered from its first rate
 * on, and a day covered once stays covered.
 */
import { BASE_CURRENCY } from "../currencies.js";
import type { PlannedSql } from "./query-planner.js";
import { ROLLUP_TABLE } from "./record-rollup.js";
import type { SqlDialect } from "./sql-dialect.js";

/** Per currency that has at least one stored rate, the day of its first rate (`YYYY-MM-DD`). */
export type FxRateStarts = ReadonlyMap<string, string>;

/**
 * Days of one brand stored in `currency` before that currency's first rate (or with no rate at
 * all): no read of those days can convert their money until the operator loads the rates.
 */
export interface UnreadableDays {
  brandId: string;
  currency: string;
  /** The first rate of `currency` stored, or null when there is none. */
  firstRate: string | null;
  /** The first and last such day (`YYYY-MM-DD`), and how many days there are. */
  from: string;
  to: string;
  days: number;
}

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
  const { formatDate, placeholder } = dialect;
  const params: string[] = [BASE_CURRENCY];
  const ofBrand = brandId === undefined ? "" : `AND r.brand_id = ${placeholder(params.push(brandId))}`;
  return {
    sql: `SELECT r.brand_id, r.currency, ${formatDate("min(f.first_day)")} AS first_rate,
        ${formatDate("min(r.date)")} AS first_day, ${formatDate("max(r.date)")} AS last_day,
        count(DISTINCT r.date) AS days
      FROM ${ROLLUP_TABLE} r
      LEFT JOIN (SELECT currency, min(date) AS first_day FROM fx_rates GROUP BY currency) f
        ON f.currency = r.currency
      WHERE r.currency <> ${placeholder(1)} AND (f.first_day IS NULL OR r.date < f.first_day) ${ofBrand}
      GROUP BY r.brand_id, r.currency
      ORDER BY r.brand_id, r.currency`,
    params,
  };
}

/** The rows of `planFxRateStarts` as a map. */
export function fxRateStartsOf(rows: Record<string, unknown>[]): FxRateStarts {
  return new Map(rows.map((row) => [String(row["currency"]), String(row["first_day"])]));
}

/** The rows of `planUnreadableDays`. */
export function unreadableDaysOf(rows: Record<string, unknown>[]): UnreadableDays[] {
  return rows.map((row) => ({
    brandId: String(row["brand_id"]),
    currency: String(row["currency"]),
    firstRate:
      row["first_rate"] === null || row["first_rate"] === undefined ? null : String(row["first_rate"]),
    from: String(row["first_day"]),
    to: String(row["last_day"]),
    days: Number(row["days"]),
  }));
}
