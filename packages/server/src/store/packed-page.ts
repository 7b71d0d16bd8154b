/**
 * A packed records page (query-planner.ts `PlannedPackedPage`) read from its UTF-8 bytes into
 * columns, cut into pages as it is read: one pass over the bytes, numbers read from their digits,
 * and a text value made into a string only when it differs from the value above it in its column
 * (a day, a market, a source currency repeat from row to row), so that neither the whole text
 * nor a string per value is made.
 */
import { PACKED_ESCAPE, PACKED_VALUE_SEPARATOR } from "./query-planner.js";

/** A packed value: text, or the whole number of a numeric column's digits. */
export type PackedValue = string | number;

/** The columns of one page of a packed read, each a page long, in the plan's layout. */
export type PackedColumns = PackedValue[][];

const SEPARATOR = PACKED_VALUE_SEPARATOR.charCodeAt(0);
const ESCAPE = PACKED_ESCAPE.charCodeAt(0);
const MINUS = 0x2d;
/** Digits that a double holds exactly, read without making a string (2^53 > 10^15). */
const EXACT_DIGITS = 15;

/**
 * The `rowCount` rows of `bytes` (values parted by the separator, `width` a row) cut into pages of
 * `pageSize`, each as its columns: a column of `numeric` holds whole numbers (their digits as text
 * past 15 digits, exact only so: record-money.ts reads either), any other one text as stored
 * (`PACKED_ESCAPE` undone); null when the values are not `rowCount × width` (a text value holds
 * the separator: the page must be read escaped).
 */
export function packedPages(
  bytes: Uint8Array,
  rowCount: number,
  layout: { width: number; numeric: readonly boolean[]; pageSize: number },
): PackedColumns[] | null {
  const { width, numeric, pageSize } = layout;
  const source = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const pages: PackedColumns[] = [];
  // Per column, the last text made and where its bytes stand, to reuse it for the same bytes.
  const lastText = new Array<string>(width).fill("");
  const lastStart = new Int32Array(width).fill(-1);
  const lastEnd = new Int32Array(width).fill(-1);
  let escaped = false;
  let at = 0;
  let columns: PackedColumns = [];
  for (let row = 0; row < rowCount; row += 1) {
    const inPage = row % pageSize;
    if (inPage === 0) {
      const rows = Math.min(pageSize, rowCount - row);
      columns = Array.from({ length: width }, () => new Array<PackedValue>(rows));
      pages.push(columns);
    }
    for (let column = 0; column < width; column += 1) {
      if (at > source.length) return null;
      const start = at;
      let end = start;
      while (end < source.length && source[end] !== SEPARATOR) end += 1;
      at = end + 1;
      if (numeric[column]) {
        columns[column]![inPage] = wholeNumber(source, start, end);
        continue;
      }
      const length = end - start;
      const last = lastStart[column]!;
      let same = length === lastEnd[column]! - last;
      for (let index = 0; same && index < length; index += 1)
        same = source[start + index] === source[last + index];
      if (!same) {
        let ascii = true;
        for (let index = start; index < end && ascii; index += 1) {
          const byte = source[index]!;
          ascii = byte < 0x80;
          if (byte === ESCAPE) escaped = true;
        }
        lastText[column] = source.toString(ascii ? "latin1" : "utf8", start, end);
        lastStart[column] = start;
        lastEnd[column] = end;
      }
      columns[column]![inPage] = lastText[column]!;
    }
  }
  if (at !== source.length + 1 && rowCount > 0) return null;
  if (escaped) for (const page of pages) for (const column of page) unescapeColumn(column);
  return pages;
}

/**
 * The whole number written by the digits `source[start, end)`: read from the bytes up to 15
 * digits (exact), else the digits as text (record-money.ts and `Number` read them).
 */
function wholeNumber(source: Buffer, start: number, end: number): PackedValue {
  const negative = source[start] === MINUS;
  const first = negative ? start + 1 : start;
  if (end - first > EXACT_DIGITS || end === first) return source.toString("latin1", start, end);
  let value = 0;
  for (let index = first; index < end; index += 1) {
    const digit = source[index]! - 0x30;
    if (digit < 0 || digit > 9) return source.toString("latin1", start, end);
    value = value * 10 + digit;
  }
  return negative ? -value : value;
}

const ESCAPED = new RegExp(`${PACKED_ESCAPE}[ab]`, "g");

/** A packed column's text values as stored (`PACKED_ESCAPE`). */
function unescapeColumn(column: PackedValue[]): void {
  for (const [index, value] of column.entries()) {
    if (typeof value !== "string" || !value.includes(PACKED_ESCAPE)) continue;
    column[index] = value.replace(ESCAPED, (escaped) =>
      escaped[1] === "a" ? PACKED_VALUE_SEPARATOR : PACKED_ESCAPE,
    );
  }
}
