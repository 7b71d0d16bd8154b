/**
 * How the one-off commands print: JSON (the default, for scripts and `jq`) or an aligned
 * plain-text table for people. Results go to stdout; progress, warnings and errors to stderr.
 */

/** `--format` of the one-off commands. */
export const PRINT_FORMATS = ["json", "table"] as const;
export type PrintFormat = (typeof PRINT_FORMATS)[number];

/** Shown for an absent value. */
export const NONE = "-";

/**
 * Rows aligned under headers, columns two spaces apart; numbers right-aligned.
 * @example table(["MARKET", "TOTAL_SPEND"], [["GB", 12.5]])
 */
export function table(headers: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const cells = rows.map((row) =>
    row.map((value) => (value === null || value === undefined ? NONE : String(value))),
  );
  const numeric = headers.map((_header, column) => rows.every((row) => typeof row[column] === "number"));
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...cells.map((row) => (row[column] ?? "").length)),
  );
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) =>
        numeric[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!),
      )
      .join("  ")
      .trimEnd();
  return [line(headers), ...cells.map(line)].join("\n");
}

/** Prints `value` as pretty JSON, or as the table `asTable` makes of it. */
export function print<T>(
  format: PrintFormat,
  value: T,
  asTable: (value: T) => { headers: readonly string[]; rows: readonly (readonly unknown[])[] },
): void {
  if (format === "json") {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  const { headers, rows } = asTable(value);
  process.stdout.write(`${table(headers, rows)}\n`);
}

/**
 * Ends `mdq-client` quietly when stdout's reader goes away (`mdq-client records … | head -5`):
 * nothing more can be shown, so the rest of the work is not done, and no EPIPE stack is printed.
 */
export function exitWhenStdoutCloses(): void {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    process.exit();
  });
}
