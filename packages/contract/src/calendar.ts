/**
 * Calendar days as `YYYY-MM-DD` strings: strict parsing (real days only), arithmetic, and
 * "today" in a region's reporting time zone.
 */

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;
const MS_PER_DAY = 86_400_000;

/** Whether `text` is a real calendar day written `YYYY-MM-DD` (2026-02-30 is not). */
export function isCalendarDate(text: string): boolean {
  const match = DATE_PATTERN.exec(text);
  if (!match) return false;
  const [, year, month, day] = match.map(Number) as [number, number, number, number];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  return day <= daysInMonth(year, month);
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** Days since 1970-01-01 of a valid `YYYY-MM-DD`. */
export function toEpochDay(date: string): number {
  return Date.parse(`${date}T00:00:00Z`) / MS_PER_DAY;
}

/** The `YYYY-MM-DD` of an epoch day number. */
export function fromEpochDay(epochDay: number): string {
  return new Date(epochDay * MS_PER_DAY).toISOString().slice(0, 10);
}

/** `date` moved by `days` (negative to go back). */
export function addDays(date: string, days: number): string {
  return fromEpochDay(toEpochDay(date) + days);
}

/** Number of days from `from` to `to`, counting both ends (2026-01-01..2026-01-01 is 1). */
export function inclusiveDayCount(from: string, to: string): number {
  return toEpochDay(to) - toEpochDay(from) + 1;
}

/**
 * A day formatter per time zone, made once: making an `Intl.DateTimeFormat` costs about 0.8 ms,
 * which every `marketingDataReadiness` without a date paid (issue 17).
 */
const dayFormats = new Map<string, Intl.DateTimeFormat>();

/** Today's date in `timeZone` (an IANA name such as `Europe/London`). */
export function todayIn(timeZone: string, now: Date = new Date()): string {
  let format = dayFormats.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-CA", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
    });
    dayFormats.set(timeZone, format);
  }
  return format.format(now);
}

/** Whether `timeZone` is an IANA time zone this runtime knows. */
export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-CA", { timeZone });
    return true;
  } catch {
    return false;
  }
}
