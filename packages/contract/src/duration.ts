/**
 * The one duration grammar of MDQ's command lines (docs/cli.md, "Durations"): a non-negative
 * number, optionally with a fraction, then an optional unit `ms`, `s`, `m`, `h` or `d`; no unit
 * means seconds. Surrounding blanks are ignored. `90`, `90s`, `1.5m`, `500ms`, `24h`, `7d`.
 */

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/;
const MS_PER_UNIT: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/**
 * The length of `text` in milliseconds (rounded to a whole one), or `undefined` when it is not a
 * duration.
 * @example parseDuration("5m") // 300000
 */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (match === null) return undefined;
  const milliseconds = Math.round(Number(match[1]) * MS_PER_UNIT[match[2] ?? "s"]!);
  return Number.isSafeInteger(milliseconds) ? milliseconds : undefined;
}
