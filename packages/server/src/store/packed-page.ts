/**
 * A packed records page (query-planner.ts `PlannedPackedPage`) read from its UTF-8 bytes into
 * columns, cut into pages as it is read: one pass over the bytes, numbers read from their digits,
 * text either kept as its bytes (a `Utf8Column`: the GraphQL layer copies them into the response)
 * or, for the few columns read as text on the way (a day, a source currency), made into a string
 * only when it differs from the value above it in its column (they repeat from row to row), so
 * that neither the whole text nor a string per value is made.
 */
import { PACKED_ESCAPE, PACKED_VALUE_SEPARATOR } from "./query-planner.js";
import type { Utf8Column } from "./store.js";

/** A packed value: text, or the whole number of a numeric column's digits. */
export type PackedValue = string | number;

/** How a packed column is read. */
export enum PackedKind {
  /** Whole numbers (their digits as text past 15 digits). */
  Number,
  /** Text as strings. */
  Text,
  /** Text kept as its UTF-8 bytes (`Utf8Column`); read as `Text` from an escaped page. */
  Utf8,
}

/** A packed column of one page: values, or text kept as bytes. */
export type PackedColumn = PackedValue[] | Utf8Column;

/** The columns of one page of a packed read, each a page long, in the plan's layout. */
export type PackedColumns = PackedColumn[];

const SEPARATOR = PACKED_VALUE_SEPARATOR.charCodeAt(0);
const MINUS = 0x2d;
/** Digits that a double holds exactly, read without making a string (2^53 > 10^15). */
const EXACT_DIGITS = 15;

/**
 * The `rowCount` rows of `bytes` (values parted by the separator, `width` a row) cut into pages of
 * `pageSize`, each as its columns read as `kinds` says: whole numbers (exact to 15 digits, their
 * digits as text past that: record-money.ts reads either), text as stored (`PACKED_ESCAPE` undone
 * when the page was read `escaped`, every text column then made strings), or text kept as the
 * page's bytes; null when the values are not `rowCount × width` (a text value holds the
 * separator: the page must be read escaped).
 */
export function packedPages(
  bytes: Uint8Array,
  rowCount: number,
  layout: { kinds: readonly PackedKind[]; pageSize: number; escaped: boolean },
): PackedColumns[] | null {
  const { pageSize, escaped } = layout;
  const kinds = escaped
    ? layout.kinds.map((kind) => (kind === PackedKind.Utf8 ? PackedKind.Text : kind))
    : layout.kinds;
  const width = kinds.length;
  const source = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const pages: PackedColumns[] = [];
  // Per column, the last text made and where its bytes stand, to reuse it for the same bytes.
  const lastText = new Array<string>(width).fill("");
  const lastStart = new Int32Array(width).fill(-1);
  const lastEnd = new Int32Array(width).fill(-1);
  const utf8Columns = kinds.flatMap((kind, column) => (kind === PackedKind.Utf8 ? [column] : []));
  let at = 0;
  for (let first = 0; first < rowCount; first += pageSize) {
    const rows = Math.min(pageSize, rowCount - first);
    const columns: PackedValue[][] = kinds.map((kind) => (kind === PackedKind.Utf8 ? [] : new Array(rows)));
    // Where each value of the page starts in its bytes, and one past the last (`Utf8Column`).
    const starts = utf8Columns.length > 0 ? new Int32Array(rows * width + 1) : null;
    const pageStart = at;
    for (let row = 0; row < rows; row += 1) {
      for (let column = 0; column < width; column += 1) {
        if (at > source.length) return null;
        const start = at;
        let end = start;
        while (end < source.length && source[end] !== SEPARATOR) end += 1;
        at = end + 1;
        if (starts !== null) starts[row * width + column] = start - pageStart;
        const kind = kinds[column]!;
        if (kind === PackedKind.Utf8) continue;
        if (kind === PackedKind.Number) {
          columns[column]![row] = wholeNumber(source, start, end);
          continue;
        }
        const length = end - start;
        const last = lastStart[column]!;
        let same = length === lastEnd[column]! - last;
        for (let index = 0; same && index < length; index += 1)
          same = source[start + index] === source[last + index];
        if (!same) {
          let ascii = true;
          for (let index = start; index < end && ascii; index += 1) ascii = source[index]! < 0x80;
          lastText[column] = source.toString(ascii ? "latin1" : "utf8", start, end);
          lastStart[column] = start;
          lastEnd[column] = end;
        }
        columns[column]![row] = lastText[column]!;
      }
    }
    const page: PackedColumns = columns;
    if (starts !== null) {
      if (at > source.length + 1) return null;
      starts[rows * width] = at - pageStart;
      // The page's own bytes: a cached page holds no other page's.
      const utf8 = new Uint8Array(source.subarray(pageStart, Math.max(pageStart, at - 1)));
      for (const column of utf8Columns) page[column] = { utf8, starts, stride: width, offset: column };
    }
    pages.push(page);
  }
  if (at !== source.length + 1 && rowCount > 0) return null;
  if (escaped)
    for (const page of pages) for (const column of page) if (Array.isArray(column)) unescapeColumn(column);
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
