/**
 * How a rejected load file is reported: the first problems in file order, each with its line
 * (or, for Parquet, its row), the canonical column when there is one, and a message. A load is
 * all or nothing (CONTRACT §4), so one problem rejects the whole file.
 */

/** One problem in a load file. `line` 0 means the file as a whole (format, readability, emptiness). */
export interface LoadProblem {
  line: number;
  column?: string;
  message: string;
}

/** What `LoadProblem.line` counts: lines of a text file (header = line 1), or rows of a Parquet file. */
export type LoadPosition = "line" | "row";

/** At most this many problems are reported; `errorCount` says how many were found. */
export const MAX_REPORTED_PROBLEMS = 20;

/** The base of every load-file rejection. */
export class LoadFileError extends Error {
  /** The first problems (at most `MAX_REPORTED_PROBLEMS`), in line order. */
  readonly errors: LoadProblem[];
  /** Data rows read before the file was rejected (0 when the file could not be read at all). */
  readonly rowCount: number;
  /** How many problems were found in total (≥ `errors.length`). */
  readonly errorCount: number;
  readonly position: LoadPosition;

  constructor(
    readonly path: string,
    problems: LoadProblem[],
    options: { rowCount?: number; errorCount?: number; position?: LoadPosition } = {},
  ) {
    const errors = problems.slice(0, MAX_REPORTED_PROBLEMS);
    const position = options.position ?? "line";
    const errorCount = Math.max(options.errorCount ?? problems.length, errors.length);
    super(describeRejection(path, errors, errorCount, position));
    this.name = "LoadFileError";
    this.errors = errors;
    this.rowCount = options.rowCount ?? 0;
    this.errorCount = errorCount;
    this.position = position;
  }
}

/**
 * A marketing records file that `readRecordsFile` rejected; nothing was loaded.
 *
 * @example
 * try { await readRecordsFile("day.csv") } catch (error) {
 *   if (error instanceof RecordsFileError) console.error(error.message); // "… line 7, market: …"
 * }
 */
export class RecordsFileError extends LoadFileError {
  override readonly name = "RecordsFileError";
}

/** An FX reference-rate file that `readFxFile` rejected; nothing was loaded. */
export class FxFileError extends LoadFileError {
  override readonly name = "FxFileError";
}

/** One problem as a line of text: `line 7, market: "UK" is not …` (`row 7, …` for Parquet). */
export function formatLoadProblem(problem: LoadProblem, position: LoadPosition = "line"): string {
  const where = problem.line === 0 ? "file" : `${position} ${problem.line}`;
  const column = problem.column === undefined ? "" : `, ${problem.column}`;
  return `${where}${column}: ${problem.message}`;
}

/** A value quoted for a message, shortened so that one huge field cannot flood the report. */
export function quoteValue(value: string): string {
  const shown = value.length > 60 ? `${value.slice(0, 57)}...` : value;
  return JSON.stringify(shown);
}

function describeRejection(
  path: string,
  errors: LoadProblem[],
  errorCount: number,
  position: LoadPosition,
): string {
  const lines = errors.map((problem) => `  ${formatLoadProblem(problem, position)}`);
  if (errorCount > errors.length) lines.push(`  ... and ${errorCount - errors.length} more`);
  const noun = errorCount === 1 ? "problem" : "problems";
  return [`${path}: rejected, nothing loaded (${errorCount} ${noun})`, ...lines].join("\n");
}

/**
 * A load ran out of DuckDB's memory (`MDQ_LOAD_MEMORY_MB`): the file may be fine, and nothing was
 * changed (the load's transaction rolled back). A load spills past the limit, so this happens
 * when reads running meanwhile hold the memory it would spill with, or under a very low limit.
 */
export class LoadOutOfMemoryError extends Error {
  override readonly name = "LoadOutOfMemoryError";

  constructor(cause: unknown) {
    super("the load ran out of DuckDB's memory (MDQ_LOAD_MEMORY_MB)", { cause });
  }
}
