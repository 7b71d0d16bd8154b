/**
 * Stored days a brand cannot read (store/reads/fx-coverage/): rows in a currency with no reference
 * rate on or before their day, which a load now refuses (load/rate-rule.ts) but a store filled
 * before may hold. The service says so when it starts, and `mdq status` lists them, so that the
 * operator loads the missing rates before the brand's readers meet UNSUPPORTED_CURRENCY.
 */
import type { FastifyBaseLogger } from "fastify";
import { safeReason } from "../observability/throttled-warning.js";
import type { RecordLoads, UnreadableDays } from "../store/model/store.js";

/** One brand's unreadable days of one currency, as a line: `acme: CHF, 3 days 2026-03-01..2026-03-03 (…)`. */
export function describeUnreadableDays(days: UnreadableDays): string {
  const span = days.from === days.to ? days.from : `${days.from}..${days.to}`;
  const held =
    days.firstRate === null
      ? `the region holds no ${days.currency} rates`
      : `${days.currency} rates start on ${days.firstRate}`;
  return `${days.brandId}: ${days.currency} records on ${days.days} day${days.days === 1 ? "" : "s"} ${span} (${held})`;
}

/**
 * Logs a warning naming every brand and currency whose stored days have no rate; says nothing
 * when every day is readable. A failed check is logged too, and the service starts anyway.
 */
export async function warnUnreadableDays(store: RecordLoads, log: FastifyBaseLogger): Promise<void> {
  let found: UnreadableDays[];
  try {
    found = await store.unreadableDays();
  } catch (error) {
    log.warn({ reason: safeReason(error) }, "could not check the stored days for missing FX rates");
    return;
  }
  if (found.length === 0) return;
  log.warn(
    { unreadableDays: found, brands: [...new Set(found.map((days) => days.brandId))] },
    `stored records have no FX rate on or before their day, so every read over those days fails for their brand (UNSUPPORTED_CURRENCY): ${found
      .map(describeUnreadableDays)
      .join("; ")}; load the missing rates with mdq fx load (mdq status lists these days)`,
  );
}
