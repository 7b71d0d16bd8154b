/** `mdq-client sync`: the daily download into a file (docs/daily-sync.md). */
import { extname } from "node:path";
import { type Command, Option } from "commander";
import { SYNC_FORMATS, type SyncFormat } from "../record-formats.js";
import {
  checkRange,
  dateRangeCommand,
  type FilterFlags,
  filterFrom,
  parseCurrency,
  parseDate,
  parseDuration,
  parseInteger,
  parseList,
} from "./cli-options.js";
import { clientFromEnv } from "./connect.js";
import { interruption } from "./interrupt.js";
import { duration, progressFor } from "./progress.js";
import { runSync, syncEventHandler } from "./sync.js";

interface SyncFlags extends FilterFlags {
  from: string;
  to: string;
  out: string;
  format?: SyncFormat;
  currency?: string;
  pageSize: number;
  windowDays: number;
  concurrency: number;
  waitReady?: boolean;
  readyDate?: string;
  pollInterval: number;
  timeout: number;
  quiet?: boolean;
  rawCsv?: boolean;
  pageWalk?: boolean;
}

/** The help of `--raw-csv` (sync and mirror). */
export const RAW_CSV_HELP =
  "write CSV text cells exactly as sent; by default a cell starting with = + - @ tab or CR gets a leading ' so that spreadsheets do not run it as a formula";

/** The help of `--page-walk` (sync and mirror). */
export const PAGE_WALK_HELP =
  "walk GraphQL pages instead of reading each window through the bulk export (the files are the same; a service without the export is walked anyway)";

/** `--format` when not given: from the extension of `--out`, else CSV. */
function formatOf(out: string): SyncFormat {
  const extension = extname(out).toLowerCase();
  if (extension === ".parquet") return "parquet";
  if (extension === ".ndjson" || extension === ".jsonl") return "ndjson";
  return "csv";
}

/** Adds the filter flags shared by `sync`, `records` and `aggregate`. */
export function withFilterFlags(command: Command): Command {
  return command
    .option("--currency <code>", "currency of spend and revenue (default EUR)", parseCurrency)
    .option("--markets <list>", "only these markets, e.g. GB,DE", parseList)
    .option("--data-sources <list>", "only these data sources, e.g. google_ads,meta_ads", parseList)
    .option("--channels <list>", "only these channels, e.g. search,social", parseList)
    .option("--campaign-ids <list>", "only these campaigns", parseList);
}

export function syncCommand(): Command {
  const command = dateRangeCommand(
    "sync",
    "Download every record of a date range into one file, exactly once. The file appears only when " +
      "complete (it is written as <out>.partial); an interrupted sync resumes from <out>.checkpoint.json.",
    "; any length of range",
  )
    .requiredOption("--out <file>", "the output file, replaced atomically when the sync completes")
    .addOption(
      new Option("--format <format>", "output format (default: from the --out extension, else csv)").choices(
        SYNC_FORMATS,
      ),
    );
  return withFilterFlags(command)
    .option("--wait-ready", "first wait until the data is READY (polls marketingDataReadiness)")
    .option(
      "--ready-date <date>",
      "processing date --wait-ready waits for (default: the region's today)",
      parseDate,
    )
    .addOption(
      new Option("--poll-interval <duration>", "time between readiness polls, e.g. 30s, 5m")
        .argParser(parseDuration)
        .default(parseDuration("5m"), "5m"),
    )
    .addOption(
      new Option("--timeout <duration>", "how long --wait-ready waits before giving up with exit 3")
        .argParser(parseDuration)
        .default(parseDuration("6h"), "6h"),
    )
    .option("--page-size <rows>", "rows per request, 1000..5000", parseInteger(1000, 5000), 5000)
    .option(
      "--window-days <days>",
      "days read (and held in memory) at a time, 1..90; a resume reads the interrupted window again",
      parseInteger(1, 90),
      7,
    )
    .option("--concurrency <requests>", "requests in flight at once, 1..8", parseInteger(1, 8), 2)
    .option("--quiet", "no progress, only the final line")
    .option("--raw-csv", RAW_CSV_HELP)
    .option("--page-walk", PAGE_WALK_HELP)
    .action(async (flags: SyncFlags) => {
      checkRange(flags.from, flags.to);
      const progress = progressFor(process.stderr, { quiet: flags.quiet === true });
      const totals = new Map<string, number>();
      const client = clientFromEnv(process.env, syncEventHandler(progress, totals));
      const { signal } = interruption;
      if (flags.waitReady) {
        progress.note(
          `waiting until the data for ${flags.readyDate ?? "today"} is READY ` +
            `(polling every ${duration(flags.pollInterval / 1000)}, for up to ${duration(flags.timeout / 1000)})`,
        );
        const readiness = await client.waitUntilReady({
          interval: flags.pollInterval,
          timeout: flags.timeout,
          signal,
          ...(flags.readyDate === undefined ? {} : { date: flags.readyDate }),
        });
        progress.note(
          `the data for ${readiness.date} is READY (processed ${readiness.lastProcessedAt ?? "-"})`,
        );
      }
      await runSync(
        client,
        {
          from: flags.from,
          to: flags.to,
          out: flags.out,
          format: flags.format ?? formatOf(flags.out),
          filter: filterFrom(flags),
          pageSize: flags.pageSize,
          windowDays: flags.windowDays,
          concurrency: flags.concurrency,
          signal,
          rawCsv: flags.rawCsv === true,
          pageWalk: flags.pageWalk === true,
          ...(flags.currency === undefined ? {} : { currency: flags.currency }),
        },
        progress,
        totals,
      );
    });
}
