/**
 * `mdq load`: replace a brand's rows on the days of a records file (CSV, NDJSON or Parquet), or
 * with `--replace sources` only its rows of each (day, data source) in the file.
 */
import { REPLACE_SCOPES } from "@mdq/contract";
import type { LoadSummary } from "@mdq/server";
import { Command, Option } from "commander";
import { connectAdmin } from "../admin-client.js";
import { type LoadProgressReport, withLoadProgress } from "../load-progress-bar.js";
import {
  type CommonFlags,
  calendarDate,
  existingFile,
  LOAD_FORMATS,
  mapping,
  withCommonFlags,
} from "../operator-options.js";
import { count, emit, orNone } from "../output.js";

/** The answer of `POST /admin/loads`. */
type LoadAnswer = LoadSummary;

type LoadFlags = CommonFlags & {
  brand: string;
  format?: string;
  map?: Record<string, string>;
  date?: string;
  replace?: string;
};

/** `mdq load FILE --brand B`. */
export function loadCommand(): Command {
  return withCommonFlags(
    new Command("load")
      .description(
        "Load a brand's marketing records: the whole file is checked first, then the brand's rows on " +
          "every day in the file are replaced at once (all or nothing). Publish afterwards with `mdq publish`.",
      )
      .argument("<file>", "the records file (read by the service; sent as an absolute path)")
      .requiredOption("--brand <brandId>", "the brand whose rows the file holds")
      .addOption(
        new Option("--format <format>", "the file's format (default: from its extension)").choices(
          LOAD_FORMATS,
        ),
      )
      .option(
        "--map <canonical=fileColumn>",
        "read a canonical column from a differently named file column; repeat for more",
        mapping,
      )
      .option(
        "--date <processingDate>",
        "the processing date the load belongs to (default: today)",
        calendarDate,
      )
      .addOption(
        new Option(
          "--replace <scope>",
          "days: replace all the brand's rows of each day in the file; sources: only its rows of each (day, data source) in the file",
        )
          .choices(REPLACE_SCOPES)
          .default("days"),
      ),
    "mdq load ./acme-2026-05-01.csv --brand brand-acme --map spend=cost --map date=day --date 2026-05-01",
  ).action(async (file: string, flags: LoadFlags) => {
    const path = existingFile(file);
    const admin = await connectAdmin(flags);
    const body = {
      brandId: flags.brand,
      path,
      ...(flags.format === undefined ? {} : { format: flags.format }),
      ...(flags.map === undefined ? {} : { mapping: flags.map }),
      ...(flags.date === undefined ? {} : { processingDate: flags.date }),
      ...(flags.replace === undefined ? {} : { replace: flags.replace }),
    };
    // The answer is always streamed (a load of many millions of rows outlasts any wait for a
    // plain answer's headers); the progress bar is only for a person at a terminal: `--json` and
    // pipes get the result alone.
    const load = (onProgress: (progress: LoadProgressReport) => void) =>
      admin.postWithProgress<LoadAnswer, LoadProgressReport>("/admin/loads", body, onProgress);
    const answer =
      flags.json || !process.stderr.isTTY
        ? await load(() => undefined)
        : await withLoadProgress(process.stderr, load);
    emit(flags.json, answer, (load) =>
      [
        `Loaded ${count(load.rows)} rows for brand ${flags.brand}: ${load.days} days, ${orNone(load.from)} to ${orNone(load.to)}.`,
        `Processing date ${load.processingDate} (load ${load.loadId}).`,
        `Publish it with: mdq publish --brand ${flags.brand} --date ${load.processingDate}`,
      ].join("\n"),
    );
  });
}
