/**
 * CSV cells that are safe to open in a spreadsheet (OWASP, "CSV Injection"): a text cell that
 * begins with `=`, `+`, `-`, `@`, a tab or a carriage return is read by Excel, LibreOffice and
 * Google Sheets as a formula, so it is written with a leading `'`, which they show as text.
 * Numbers (money, counts) are never prefixed: `-3.5` stays a number. Every CSV the project writes
 * (the client's `sync` and `mirror` files, the service's export) goes through this one rule.
 */

/** The first characters that make a spreadsheet read a cell as a formula (OWASP's list). */
export const FORMULA_TRIGGERS: readonly string[] = Object.freeze(["=", "+", "-", "@", "\t", "\r"]);

/**
 * `value` as a CSV cell's text, prefixed with `'` when it is text that begins like a formula.
 * `null` and `undefined` are the empty cell; RFC 4180 quoting is the writer's job, after this.
 * @example neutraliseCsvCell("=HYPERLINK(\"x\")") // "'=HYPERLINK(\"x\")"
 * @example neutraliseCsvCell(-3.5) // "-3.5"
 */
export function neutraliseCsvCell(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return "";
  if (typeof value !== "string") return String(value);
  return value.length > 0 && FORMULA_TRIGGERS.includes(value[0]!) ? `'${value}` : value;
}
