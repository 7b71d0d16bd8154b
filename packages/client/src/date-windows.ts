/**
 * Calendar days and the ≤ 90-day windows a long range is split into (spec §8: at most 90 days
 * per request, both ends inclusive).
 */
import { toEpochDay as epochDayOf, fromEpochDay, isCalendarDate, MAX_RANGE_DAYS } from "@mdq/contract";
import { MdqClientError } from "./errors.js";

/** The service's longest `dateRange`, in days counting both ends (CONTRACT §3 rule 2). */
export const MAX_WINDOW_DAYS = MAX_RANGE_DAYS;

/** An inclusive range of calendar days, `YYYY-MM-DD`. */
export interface DateWindow {
  from: string;
  to: string;
}

export { fromEpochDay } from "@mdq/contract";

/** Days since 1970-01-01 of a `YYYY-MM-DD` calendar day; throws INVALID_CONFIG when it is not one. */
export function toEpochDay(date: string): number {
  if (!isCalendarDate(date)) {
    throw new MdqClientError("INVALID_CONFIG", `${JSON.stringify(date)} is not a calendar day (YYYY-MM-DD)`);
  }
  return epochDayOf(date);
}

/** `date` plus `days` (which may be negative); throws INVALID_CONFIG when `date` is not a calendar day. */
export function addDays(date: string, days: number): string {
  return fromEpochDay(toEpochDay(date) + days);
}

/** Where windows may start: any day, Mondays (ISO weeks), or the 1st of a month. */
export type WindowAlignment = "day" | "week" | "month";

/**
 * Splits the inclusive range `from..to` into consecutive inclusive windows of at most `maxDays`
 * days, oldest first, covering every day exactly once. With `align: "week"`, every boundary
 * between windows falls on a Monday; with `"month"`, on the 1st of a month, so that no ISO week
 * (or month) is split across two windows. Throws INVALID_CONFIG for a day that is not a calendar
 * day, INVALID_DATE_RANGE when `to` is before `from`.
 * @example splitDateRange("2026-01-01", "2026-12-31") // 5 windows: 90 + 90 + 90 + 90 + 5 days
 */
export function splitDateRange(
  from: string,
  to: string,
  options: { maxDays?: number; align?: WindowAlignment } = {},
): DateWindow[] {
  const { maxDays = MAX_WINDOW_DAYS, align = "day" } = options;
  if (!Number.isInteger(maxDays) || maxDays < 1 || maxDays > MAX_WINDOW_DAYS) {
    throw new MdqClientError("INVALID_CONFIG", `maxDays must be an integer from 1 to ${MAX_WINDOW_DAYS}`);
  }
  const first = toEpochDay(from);
  const last = toEpochDay(to);
  if (last < first) {
    throw new MdqClientError("INVALID_DATE_RANGE", `the range ends (${to}) before it starts (${from})`);
  }
  const windows: DateWindow[] = [];
  let start = first;
  while (start <= last) {
    const end = Math.min(last, windowEnd(start, maxDays, align));
    windows.push({ from: fromEpochDay(start), to: fromEpochDay(end) });
    start = end + 1;
  }
  return windows;
}

/** The last day of the window starting at `start`, before clamping to the range's end. */
function windowEnd(start: number, maxDays: number, align: WindowAlignment): number {
  const longest = start + maxDays - 1;
  if (align === "week") {
    // 1970-01-01 was a Thursday: day d is a Monday when (d + 3) % 7 === 0. End on a Sunday.
    const sunday = longest - ((((longest + 3) % 7) + 7 + 1) % 7);
    return sunday >= start ? sunday : longest;
  }
  if (align === "month") {
    let end = start - 1;
    for (;;) {
      const next = firstOfNextMonth(end + 1) - 1;
      if (next > longest) break;
      end = next;
    }
    return end >= start ? end : longest;
  }
  return longest;
}

const DAY_MS = 86_400_000;

function firstOfNextMonth(day: number): number {
  const date = new Date(day * DAY_MS);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) / DAY_MS;
}
