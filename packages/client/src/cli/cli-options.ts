/**
 * Flag values shared by the `mdq-client` commands, checked before any request is sent: a bad
 * value is a usage error (exit 2) naming the flag.
 */
import { CURRENCY_CODE_PATTERN, isCalendarDate, parseDuration as parseContractDuration } from "@mdq/contract";
import { Command, InvalidArgumentError } from "commander";
import type { MarketingFilter } from "../types.js";

/** A mistake in how a command was called; `mdq-client` exits 2 with its message. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** `YYYY-MM-DD`, a real calendar day (the contract's rule: `2026-02-30` is refused). */
export function parseDate(value: string): string {
  if (!isCalendarDate(value)) throw new InvalidArgumentError("expected a calendar day as YYYY-MM-DD");
  return value;
}

/** A duration in the contract's grammar (docs/cli.md, "Durations"): `90`, `90s`, `500ms`, `5m`, `2h`; in milliseconds. */
export function parseDuration(value: string): number {
  const milliseconds = parseContractDuration(value);
  if (milliseconds === undefined) throw new InvalidArgumentError("expected a duration such as 90s, 5m or 2h");
  return milliseconds;
}

/**
 * A command over a date range: its required `--from` and `--to` days, both inclusive.
 * @example dateRangeCommand("records", "Print the records of a date range.")
 */
export function dateRangeCommand(name: string, description: string, toNote = ""): Command {
  return new Command(name)
    .description(description)
    .requiredOption("--from <date>", "first day, YYYY-MM-DD (inclusive)", parseDate)
    .requiredOption("--to <date>", `last day, YYYY-MM-DD (inclusive)${toNote}`, parseDate);
}

/** A whole number within bounds. */
export function parseInteger(min: number, max: number) {
  return (value: string): number => {
    const number = Number(value);
    if (!/^\d+$/.test(value) || number < min || number > max) {
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`);
    }
    return number;
  };
}

/** A currency code of the service's `Currency` enum (`EUR`, `GBP`); the service checks membership. */
export function parseCurrency(value: string): string {
  const code = value.toUpperCase();
  if (!CURRENCY_CODE_PATTERN.test(code)) throw new InvalidArgumentError("expected a 3-letter currency code");
  return code;
}

/** `a,b,c` as a list of non-empty values. */
export function parseList(value: string): string[] {
  const items = value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
  if (items.length === 0) throw new InvalidArgumentError("expected a comma-separated list");
  return items;
}

/** The `--markets/--data-sources/--channels/--campaign-ids` flags every data command takes. */
export interface FilterFlags {
  markets?: string[];
  dataSources?: string[];
  channels?: string[];
  campaignIds?: string[];
}

/** The filter the flags describe, or null when none is given (every granted row). */
export function filterFrom(flags: FilterFlags): MarketingFilter | null {
  const filter: MarketingFilter = {};
  if (flags.markets) filter.markets = flags.markets.map((market) => market.toUpperCase());
  if (flags.dataSources) filter.dataSources = flags.dataSources;
  if (flags.channels) filter.channels = flags.channels;
  if (flags.campaignIds) filter.campaignIds = flags.campaignIds;
  return Object.keys(filter).length > 0 ? filter : null;
}

/** `--to` must not be before `--from`. */
export function checkRange(from: string, to: string): void {
  if (to < from) throw new UsageError(`--to ${to} is before --from ${from}`);
}

/** A `--sort` entry. */
export interface SortEntry<Field extends string> {
  field: Field;
  direction: "ASC" | "DESC";
}

/**
 * `--sort FIELD[:ASC|DESC],...` against the allowed fields (case-insensitive; ASC by default).
 * @example parseSort(["SPEND", "DATE_DAY"])("spend:desc") // [{ field: "SPEND", direction: "DESC" }]
 */
export function parseSort<Field extends string>(allowed: readonly Field[]) {
  return (value: string): SortEntry<Field>[] =>
    parseList(value).map((entry) => {
      const [name = "", direction = "ASC", ...rest] = entry
        .split(":")
        .map((part) => part.trim().toUpperCase());
      if (
        !allowed.includes(name as Field) ||
        rest.length > 0 ||
        (direction !== "ASC" && direction !== "DESC")
      ) {
        throw new InvalidArgumentError(`expected FIELD[:ASC|DESC] with FIELD one of ${allowed.join(", ")}`);
      }
      return { field: name as Field, direction };
    });
}

/** `a,b` of the allowed upper-case names (case-insensitive). */
export function parseNames<Name extends string>(allowed: readonly Name[]) {
  return (value: string): Name[] =>
    parseList(value).map((item) => {
      const name = item.toUpperCase();
      if (!allowed.includes(name as Name))
        throw new InvalidArgumentError(`expected some of ${allowed.join(", ")}`);
      return name as Name;
    });
}
