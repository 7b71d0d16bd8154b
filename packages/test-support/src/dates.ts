/** Calendar days for test data: the service's own day arithmetic, and days back from today (UTC). */
import { addDays } from "@mdq/server";

export { addDays };

/** Today's `YYYY-MM-DD` in UTC. */
export function utcToday(): string {
  return new Date().toISOString().slice(0, 10);
}

/** The UTC day `days` before today, as `YYYY-MM-DD`. */
export function daysAgo(days: number): string {
  return addDays(utcToday(), -days);
}
