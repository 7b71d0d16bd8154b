/**
 * Reading and checking a marketing records file for `mdq load` (CONTRACT §4): CSV, NDJSON or
 * Parquet in the canonical layout of docs/load-format.md, optionally with other column names.
 * The whole file is checked before anything is returned, so a load is all or nothing.
 *
 * The file is read into a private in-memory DuckDB: row rules run as SQL over every row, rules
 * on short vocabularies (dates, markets, ids, currencies) run in TypeScript once per distinct
 * value, and only the rows with problems are ever turned into messages.
 */
import { isOutOfMemory } from "../store/duckdb/duckdb-errors.js";
import type { FxRateStarts } from "../store/model/store.js";
import { checkLoadFile, openScratch } from "./file-staging.js";
import { type LoadProblem, RecordsFileError } from "./load-errors.js";
import type { LoadProgressReporter } from "./load-progress.js";
import { checkRows } from "./record-checks.js";
import { RECORD_COLUMNS } from "./record-rules.js";
import { countRows, type RecordsFileFormat, STAGERS } from "./record-stagers.js";
import type { StagingRequest } from "./record-staging.js";
import { checkedRecordsFile, type RecordsFile } from "./records-reader.js";

export { RecordsFileError } from "./load-errors.js";
export { MARKET_CODES, RECORD_COLUMNS, type RecordColumn } from "./record-rules.js";
export type { RecordsFileFormat } from "./record-stagers.js";
export type { RecordsFile } from "./records-reader.js";

/** Options of `readRecordsFile`. */
export interface ReadRecordsOptions {
  /** The file's format; by default from its extension (.csv, .ndjson or .jsonl, .parquet). */
  format?: RecordsFileFormat;
  /** Canonical column name → the file's column name, for files with other names. */
  mapping?: Partial<Record<string, string>>;
  /** Told how far the reading and checking have got (`mdq load`'s progress bar). */
  progress?: LoadProgressReporter;
  /** The scratch DuckDB's memory limit in MB (`MDQ_LOAD_MEMORY_MB`); by default `DEFAULT_LOAD_MEMORY_MB`. */
  memoryMb?: number;
  /**
   * The first day of each currency's stored rates (`RecordLoads.fxRateStarts`): a row whose
   * currency has no rate on or before its day is then a problem (rate-rule.ts). A load passes it.
   */
  rateStarts?: FxRateStarts;
}

/**
 * Reads and checks a records file. Resolves once every row has passed every rule; otherwise
 * rejects with a `RecordsFileError` listing the first problems with their line numbers.
 *
 * @example
 * const file = await readRecordsFile("2026-03-01.csv", { mapping: { spend: "cost" } });
 * try { await store.replaceRecords(brandId, file.records()); } finally { file.close(); }
 */
export async function readRecordsFile(path: string, options: ReadRecordsOptions = {}): Promise<RecordsFile> {
  const { format, mapping } = await checkRecordsRequest(path, options);
  const scratch = await openScratch(options.memoryMb);
  const { progress } = options;
  try {
    await progress?.watchReading(scratch.connection);
    const staged = await STAGERS[format](scratch, path, mapping);
    const rowCount = await countRows(scratch);
    progress?.read(rowCount);
    if (rowCount === 0) {
      throw new RecordsFileError(path, [{ line: 0, message: "the file holds no records" }], {
        position: staged.position,
      });
    }
    await checkRows(scratch, path, staged, rowCount, options.rateStarts);
    return await checkedRecordsFile(scratch, format, staged, rowCount);
  } catch (error) {
    progress?.stop();
    scratch.close();
    if (error instanceof RecordsFileError || isOutOfMemory(error)) throw error;
    throw new RecordsFileError(path, [
      { line: 0, message: `cannot read the file as ${format}: ${firstLine(error)}` },
    ]);
  }
}

/**
 * The checks of a load request before its file is parsed: the format (given, or from the file's
 * extension), the mapping, and that the file can be read. Throws a `RecordsFileError`.
 */
export async function checkRecordsRequest(
  path: string,
  options: ReadRecordsOptions = {},
): Promise<StagingRequest> {
  const format = options.format ?? formatOf(path);
  if (format === undefined || !Object.hasOwn(STAGERS, format)) {
    throw new RecordsFileError(path, [
      {
        line: 0,
        message: options.format
          ? `unknown format "${options.format}" (csv, ndjson or parquet)`
          : "cannot tell the format from the file name: use .csv, .ndjson, .jsonl or .parquet, or give the format",
      },
    ]);
  }
  const mapping = options.mapping ?? {};
  const mappingProblems = checkMapping(mapping);
  if (mappingProblems.length > 0) throw new RecordsFileError(path, mappingProblems);
  const fileProblem = await checkLoadFile(path);
  if (fileProblem) throw new RecordsFileError(path, [fileProblem]);
  return { path, format, mapping };
}

function formatOf(path: string): RecordsFileFormat | undefined {
  const extension = /\.([a-z]+)$/i.exec(path)?.[1]?.toLowerCase();
  if (extension === "csv") return "csv";
  if (extension === "ndjson" || extension === "jsonl") return "ndjson";
  if (extension === "parquet") return "parquet";
  return undefined;
}

function checkMapping(mapping: Partial<Record<string, string>>): LoadProblem[] {
  const problems: LoadProblem[] = [];
  for (const [column, name] of Object.entries(mapping)) {
    if (!(RECORD_COLUMNS as readonly string[]).includes(column)) {
      problems.push({
        line: 0,
        message: `the mapping names "${column}", which is not a column of the layout`,
      });
    } else if (typeof name !== "string" || name === "") {
      problems.push({ line: 0, column, message: "the mapping gives no file column name" });
    }
  }
  return problems;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
}
