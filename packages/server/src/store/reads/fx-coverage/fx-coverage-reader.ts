/**
 * The FX coverage reads (fx-coverage-plan.ts), run as one statement each on any connection: what a
 * load checks its rows against, and which stored days no read can convert.
 */
import type { FxRateStarts, UnreadableDays } from "../../model/store.js";
import type { DirectoryRows } from "../directory/directory-reader.js";
import { planFxRateStarts, planUnreadableDays } from "./fx-coverage-plan.js";

/** Per currency with at least one stored rate, the day of its first rate. */
export async function readFxRateStarts(on: DirectoryRows): Promise<FxRateStarts> {
  const { sql, params } = planFxRateStarts(on.dialect);
  const rows = await on.rows(sql, params);
  return new Map(rows.map((row) => [String(row["currency"]), String(row["first_day"])]));
}

/** The days stored in a currency before its first rate, of every brand or of `brandId`. */
export async function readUnreadableDays(on: DirectoryRows, brandId?: string): Promise<UnreadableDays[]> {
  const { sql, params } = planUnreadableDays(on.dialect, brandId);
  const rows = await on.rows(sql, params);
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
