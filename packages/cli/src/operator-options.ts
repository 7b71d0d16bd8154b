/**
 * The flags every operator command shares (where the region's admin API is) and the parsers of
 * flag values. Values are checked here, before any request, so a typo exits 2 without touching
 * the service (docs/cli.md, "Exit codes").
 */
import { statSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  isBrandId,
  isCalendarDate,
  isDataSource,
  isMarket,
  isRegion,
  MAX_SECRET_GRACE_SECONDS,
  parseDuration,
} from "@mdq/contract";
import { type Command, InvalidArgumentError } from "commander";
import { UsageError } from "./usage-error.js";

/** The flags added by `withCommonFlags`. */
export interface CommonFlags {
  data?: string;
  region?: string;
  adminUrl?: string;
  json?: boolean;
}

const EXIT_CODES_HELP = `
Exit codes: 0 done, 1 failed, 2 usage error, 3 refused by the service, 4 service not reachable,
5 admin token refused. The admin token is read from MDQ_ADMIN_TOKEN or <data>/admin-token.`;

/**
 * Adds the connection flags and `--json` to an operator command, and an example to its help.
 * @example withCommonFlags(new Command("list"), "mdq brand list --json")
 */
export function withCommonFlags(command: Command, example: string): Command {
  return command
    .option(
      "--data <dir>",
      "data directory of the region (default: $MDQ_DATA_DIR, else ./data/<region>, else the demo's ./data/demo-<region>)",
    )
    .option(
      "--region <code>",
      "region code, for the default data directory (default: $MDQ_REGION or uk)",
      region,
    )
    .option("--admin-url <url>", "admin API address (default: $MDQ_ADMIN_URL or <data>/admin.json)", adminUrl)
    .option("--json", "print the service's answer as JSON, for scripts")
    .addHelpText("after", `\nExample:\n  ${example}\n${EXIT_CODES_HELP}\n`);
}

/** Where `mdq demo` keeps a region's data unless `--data` says otherwise (relative to the working directory). */
export function demoDataDirectory(region: string): string {
  return join("data", `demo-${region}`);
}

function region(text: string): string {
  if (!isRegion(text)) throw new InvalidArgumentError("Use a lower-case region code such as uk or us.");
  return text;
}

function adminUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidArgumentError("Use an absolute URL such as http://127.0.0.1:5000.");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new InvalidArgumentError("Use http or https.");
  return text.replace(/\/+$/, "");
}

/** A calendar day written `YYYY-MM-DD` (2026-02-30 is refused), by the contract's rule. */
export function calendarDate(text: string): string {
  if (!isCalendarDate(text)) throw new InvalidArgumentError("Use a calendar day written YYYY-MM-DD.");
  return text;
}

/** A brand id as the admin API accepts it (`BRAND_ID_PATTERN`). */
export function brandId(text: string): string {
  if (!isBrandId(text)) {
    throw new InvalidArgumentError(
      'Use 2 to 63 lower-case letters, digits and "-", starting with a letter or digit.',
    );
  }
  return text;
}

/** A name shown to operators: not blank. */
export function name(text: string): string {
  if (text.trim() === "") throw new InvalidArgumentError("A name cannot be blank.");
  return text.trim();
}

function commaList(text: string): string[] {
  const items = text.split(",").map((item) => item.trim());
  if (items.some((item) => item === "")) throw new InvalidArgumentError("Separate values by single commas.");
  return [...new Set(items)];
}

/** Comma-separated markets: ISO 3166-1 alpha-2 codes in upper case (`GB,DE`). */
export function markets(text: string): string[] {
  const codes = commaList(text);
  for (const code of codes) {
    if (code === "UK") throw new InvalidArgumentError('The United Kingdom is "GB" in ISO 3166-1, not "UK".');
    if (!isMarket(code)) {
      throw new InvalidArgumentError(
        `${JSON.stringify(code)} is not a market code: use ISO 3166-1 alpha-2 codes in upper case, e.g. GB,DE.`,
      );
    }
  }
  return codes;
}

/** Comma-separated data sources: lower-case ids (`google_ads,meta_ads`). */
export function dataSources(text: string): string[] {
  const ids = commaList(text);
  for (const id of ids) {
    if (!isDataSource(id)) {
      throw new InvalidArgumentError(
        `${JSON.stringify(id)} is not a data source id: lower-case letters, digits, "_", "." and "-", e.g. google_ads.`,
      );
    }
  }
  return ids;
}

/**
 * A `--grace` duration in whole seconds, at most 30 days. The grammar is the contract's one
 * (docs/cli.md, "Durations"): `90s`, `15m`, `24h`, `7d`, or plain seconds.
 */
export function duration(text: string): number {
  const milliseconds = parseDuration(text);
  if (milliseconds === undefined || milliseconds % 1000 !== 0)
    throw new InvalidArgumentError("Use a duration such as 90s, 15m, 24h, 7d, or whole seconds.");
  const seconds = milliseconds / 1000;
  if (seconds > MAX_SECRET_GRACE_SECONDS) throw new InvalidArgumentError("The longest grace period is 30d.");
  return seconds;
}

/** Load file formats the service reads. */
export { LOAD_FORMATS } from "@mdq/contract";

/** Collects repeated `--map canonical=fileColumn` flags into one mapping. */
export function mapping(text: string, previous: Record<string, string> | undefined): Record<string, string> {
  const match = /^([a-z_]+)=(.+)$/.exec(text);
  if (!match) {
    throw new InvalidArgumentError(
      "Use canonical=fileColumn, e.g. --map spend=cost (repeat --map for more).",
    );
  }
  const [, canonical, column] = match as unknown as [string, string, string];
  if (previous?.[canonical] !== undefined) throw new InvalidArgumentError(`${canonical} is mapped twice.`);
  return { ...previous, [canonical]: column };
}

/**
 * The absolute path of a file argument. The service reads the file itself (docs/admin-api.md),
 * so the path must be absolute; a missing file is a usage error, caught before any request.
 */
export function existingFile(file: string): string {
  const path = resolve(file);
  const stats = statSync(path, { throwIfNoEntry: false });
  if (stats === undefined) throw new UsageError(`no file ${path}`);
  if (!stats.isFile()) throw new UsageError(`${path} is not a file`);
  return path;
}
