/**
 * How operator commands print: the service's answer verbatim as JSON with `--json` (for
 * scripts), else short text and aligned plain-text tables for people. Results go to stdout;
 * warnings and errors to stderr.
 */

/** Shown for an absent value (a null date, no publish yet). */
export const NONE = "-";

/**
 * Prints `answer` as JSON when `json` is set, else the text `human` builds from it.
 * @example emit(flags.json, answer, (a) => `Created brand ${a.brand.brandId}`)
 */
export function emit<T>(json: boolean | undefined, answer: T, human: (answer: T) => string): void {
  const text = json ? JSON.stringify(answer, null, 2) : human(answer);
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}

/** Writes a warning line to stderr (it reaches the operator even when stdout is piped). */
export function warn(message: string): void {
  process.stderr.write(`mdq: warning: ${message}\n`);
}

/**
 * Rows aligned under upper-case headers, columns two spaces apart; the last column is not padded.
 * @example table(["BRAND", "NAME"], [["brand-acme", "Acme"]]) // "BRAND       NAME\nbrand-acme  Acme"
 */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n");
}

/** A list for a table cell: comma-separated, `whenNull` for null (an app reading all its brand's grants). */
export function list(values: readonly string[] | null | undefined, whenNull = "all granted"): string {
  if (values === null || values === undefined) return whenNull;
  return values.length === 0 ? "none" : values.join(",");
}

/** A whole number with thousands separators: 2,000,000. */
export function count(value: number): string {
  return value.toLocaleString("en-US");
}

/** A value that may be null, as given, or `-`. */
export function orNone(value: string | null | undefined): string {
  return value === null || value === undefined || value === "" ? NONE : value;
}

/**
 * Lets stdout's reader go away (`mdq load --help | head -1`, a demo piped to a pager that quit):
 * what cannot be written is dropped, instead of an unhandled EPIPE stack. A command still ends
 * with its own exit code; `serve` and `demo` keep serving and still stop on SIGTERM.
 */
export function dropOutputWhenStdoutCloses(): void {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE" && error.code !== "ERR_STREAM_DESTROYED") throw error;
  });
}
