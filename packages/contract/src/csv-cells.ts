/**
 * CSV cells made safe for spreadsheets (OWASP "CSV Injection"): a cell that starts with `=`, `+`,
 * `-`, `@`, a tab or a carriage return is read as a formula by Excel, LibreOffice and Google
 * Sheets, so it is prefixed with a single quote, which those programs show as text. Numbers are
 * written as numbers by their writers and never pass through here: a refund's `-12.5` stays a
 * number.
 */

/** Characters that make a spreadsheet read a cell as a formula when they come first. */
const FORMULA_TRIGGERS = new Set(["=", "+", "-", "@", "\t", "\r"]);

/**
 * The text of a CSV cell as written: `'` prepended when it starts with a formula trigger, else
 * unchanged. RFC 4180 quoting is the CSV writer's job, after this.
 * @example neutraliseCsvCell("=HYPERLINK(...)") // "'=HYPERLINK(...)"
 */
export function neutraliseCsvCell(cell: string): string {
  return cell.length > 0 && FORMULA_TRIGGERS.has(cell[0]!) ? `'${cell}` : cell;
}
