/** `mdq-client mirror`: a day-partitioned local copy kept exactly in sync (docs/daily-sync.md). */
import { Command, Option } from "commander";
import { type MirrorProgress, mirror } from "../mirror.js";
import { SYNC_FORMATS, type SyncFormat } from "../record-formats.js";
import type { Currency } from "../types.js";
import { checkRange, parseCurrency, parseDate } from "./cli-options.js";
import { clientFromEnv } from "./connect.js";
import { interruption } from "./interrupt.js";
import { count, type ProgressReporter, progressFor } from "./progress.js";
import { PAGE_WALK_HELP, RAW_CSV_HELP } from "./sync-command.js";

interface MirrorFlags {
  dir: string;
  from: string;
  to: string;
  currency?: string;
  format: SyncFormat;
  json?: boolean;
  quiet?: boolean;
  rawCsv?: boolean;
  force?: boolean;
  allowEmpty?: boolean;
  pageWalk?: boolean;
}

/**
 * Tells `progress` what the mirror does: its plan as a note, then each day written as an update
 * (drawn or logged by the rule every command follows, progress.ts).
 */
function mirrorProgress(progress: ProgressReporter): (event: MirrorProgress) => void {
  const startedAt = Date.now();
  let totalRows = 0;
  let rows = 0;
  return (event) => {
    if (event.type === "plan") {
      totalRows = event.rowsToDownload;
      const why = event.fullResync ? ` (full copy${event.reason ? `: ${event.reason}` : ""})` : "";
      progress.note(
        `${count(event.daysChecked)} days checked, ${count(event.toDownload)} to download, ${count(event.toRemove)} to remove${why}`,
      );
      return;
    }
    rows += event.rows;
    progress.update({
      rows,
      totalRows: Math.max(rows, totalRows),
      totalExact: true,
      step: { name: "day", at: event.done, of: event.of },
      resumedRows: 0,
      startedAt,
    });
  };
}

export function mirrorCommand(): Command {
  return new Command("mirror")
    .description(
      "Keep DIR/date=YYYY-MM-DD/records.<ext> exactly in sync with the service: the first run downloads " +
        "every day of the range, later runs only the days that changed (marketingDataChanges). " +
        "Each day's file is replaced atomically; an interrupted run converges when run again.",
    )
    .requiredOption("--dir <dir>", "the mirror directory (its state: DIR/_mdq_mirror.json)")
    .requiredOption("--from <date>", "first day, YYYY-MM-DD (inclusive)", parseDate)
    .requiredOption("--to <date>", "last day, YYYY-MM-DD (inclusive); any length of range", parseDate)
    .option("--currency <code>", "currency of spend and revenue (default EUR)", parseCurrency)
    .addOption(
      new Option("--format <format>", "file format of each day").choices(SYNC_FORMATS).default("csv"),
    )
    .option("--raw-csv", RAW_CSV_HELP)
    .option("--page-walk", PAGE_WALK_HELP)
    .option(
      "--force",
      "mirror into a non-empty directory that is not a mirror yet (its other files are never removed)",
    )
    .option(
      "--allow-empty",
      "accept a listing with no days for a mirror that holds rows (removes every day the mirror wrote)",
    )
    .option("--json", "print the summary as one JSON object on stdout")
    .option("--quiet", "no progress on stderr")
    .action(async (flags: MirrorFlags) => {
      checkRange(flags.from, flags.to);
      const client = clientFromEnv(process.env);
      const summary = await mirror(client, {
        dir: flags.dir,
        from: flags.from,
        to: flags.to,
        format: flags.format,
        signal: interruption.signal,
        rawCsv: flags.rawCsv === true,
        force: flags.force === true,
        allowEmpty: flags.allowEmpty === true,
        pageWalk: flags.pageWalk === true,
        ...(flags.currency === undefined ? {} : { currency: flags.currency as Currency }),
        onProgress: mirrorProgress(progressFor(process.stderr, { quiet: flags.quiet === true })),
      });
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(summary)}\n`);
      } else {
        process.stdout.write(
          `mirrored ${flags.from}..${flags.to} into ${flags.dir}: ${count(summary.daysDownloaded)} of ` +
            `${count(summary.daysChecked)} days downloaded, ${count(summary.rows)} rows, ${count(summary.bytes)} bytes ` +
            `in ${summary.seconds} s${summary.fullResync ? " (full copy)" : ""}; data version ${summary.dataVersion}\n`,
        );
      }
    });
}
