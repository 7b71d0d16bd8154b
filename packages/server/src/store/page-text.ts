/**
 * Records pages written as JSON straight from a planned text page's UTF-8 bytes (query-planner.ts
 * `planRecordsText`: one text value for many rows, instead of a driver value per row and
 * column), so that neither the driver, nor row objects, nor GraphQL execution walk their values:
 * the bytes graphql-jit and `JSON.stringify` write for the same rows, keys in the query's field
 * order (`store-differential.test.ts` compares both, byte for byte, on both engines).
 *
 * Every value is the one the object path serialises: strings as stored (escaped as
 * `JSON.stringify` escapes), whole numbers (`Int`) as their digits, conversions as the stored
 * ten-thousandths divided as a double, money converted by `MoneyConverter` (the planner's
 * arithmetic, to the bit), both written by `String(number)` as `JSON.stringify` writes numbers.
 * Whatever the object path would answer differently — an `Int` outside 32 bits (a field error
 * there), a conversion lacking a rate, a value holding the separator — makes the text unusable
 * (`null`), and the caller answers with the object path instead.
 */
import type { CurrencyCode } from "../currencies.js";
import type { RecordField } from "./query-request.js";
import type { MoneyConverter } from "./record-money.js";
import type { PageBoundary } from "./walk-memory.js";

/** A records page as the JSON text of its rows, with what its page info needs. */
export interface TextPage {
  /**
   * The JSON array of the page's records, UTF-8: encoded once, when read, so that the response
   * is written without measuring or encoding the page's text again.
   */
  json: Buffer;
  rows: number;
  totalCount: number;
  dataVersion: string;
}

/** Pages cut from one planned text page: each page's JSON rows and where it ended. */
export interface TextPageRows {
  json: Buffer;
  rows: number;
  boundary: PageBoundary;
}

/** The largest value of GraphQL's `Int` (32-bit signed). */
const MAX_INT = 2_147_483_647;
/** Values every row of a planned text page starts with: record id, day, source currency. */
const LEADING_VALUES = 3;

/** How a field's value comes from a row's values. */
enum Source {
  /** A text value as stored. */
  Text,
  /** A whole number that must fit GraphQL's `Int`. */
  Whole,
  /** Stored ten-thousandths, as a double. */
  TenThousandths,
  /** A stored amount converted to the query's currency. */
  Money,
  /** The query's currency. */
  Currency,
}

/** Where each field's value comes from: its source and the index of its value in a row. */
function fieldSources(fields: readonly RecordField[], columns: readonly string[]): [Source, number][] {
  const at = (column: string): number => {
    const index = columns.indexOf(column);
    if (index === -1) throw new Error(`the planned text page lacks ${column}`);
    return LEADING_VALUES + index;
  };
  const sourceOf = (field: RecordField): [Source, number] => {
    switch (field) {
      case "recordId":
        return [Source.Text, 0];
      case "date":
        return [Source.Text, 1];
      case "currency":
        return [Source.Currency, -1];
      case "market":
        return [Source.Text, at("market")];
      case "dataSource":
        return [Source.Text, at("data_source")];
      case "channel":
        return [Source.Text, at("channel")];
      case "campaignId":
        return [Source.Text, at("campaign_id")];
      case "campaignName":
        return [Source.Text, at("campaign_name")];
      case "impressions":
        return [Source.Whole, at("impressions")];
      case "clicks":
        return [Source.Whole, at("clicks")];
      case "conversions":
        return [Source.TenThousandths, at("conversions_e4")];
      case "spend":
        return [Source.Money, at("spend_e4")];
      case "revenue":
        return [Source.Money, at("revenue_e4")];
    }
  };
  return fields.map(sourceOf);
}

/** Bytes of the planned text page's separator (`TEXT_VALUE_SEPARATOR`, U+0001). */
const SEPARATOR = 0x01;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** JSON.stringify's short escapes of control characters; the others are `\u00xx`. */
const SHORT_ESCAPES: Record<number, number> = { 8: 0x62, 9: 0x74, 10: 0x6e, 12: 0x66, 13: 0x72 };
const HEX = "0123456789abcdef";
/** Room for the digits of a number below 10^16. */
const DIGITS = new Uint8Array(24);
/** Below this, `JsonBytes.decimal` writes a quotient's digits exactly (15 significant digits). */
const DECIMAL_LIMIT = 1e15;

/**
 * The JSON of many rows, written as bytes: keys and punctuation from precomputed bytes, text
 * values copied from the page's UTF-8 with `JSON.stringify`'s escapes (`"`, `\`, control
 * characters; every other byte as it is, which is what encoding `JSON.stringify`'s output as
 * UTF-8 gives for valid UTF-8), numbers as `String(number)`.
 */
export class JsonBytes {
  bytes: Buffer;
  length = 0;

  constructor(capacity: number) {
    this.bytes = Buffer.allocUnsafe(Math.max(capacity, 1024));
  }

  /** Starts over, keeping the memory (pages are copied out, `copyFrom`). */
  clear(): void {
    this.length = 0;
  }

  /** Room for `more` bytes. */
  reserve(more: number): void {
    if (this.length + more <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + more));
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
  }

  /** `source[start, end)` as it is (a loop: short copies cost less than `set`). */
  raw(source: Uint8Array, start = 0, end = source.length): void {
    this.reserve(end - start);
    const bytes = this.bytes;
    let at = this.length;
    for (let index = start; index < end; index += 1) bytes[at++] = source[index]!;
    this.length = at;
  }

  byte(value: number): void {
    this.reserve(1);
    this.bytes[this.length++] = value;
  }

  /** ASCII text (numbers, codes). */
  ascii(text: string): void {
    this.reserve(text.length);
    this.length += this.bytes.write(text, this.length, "latin1");
  }

  /**
   * The number `whole / 10^places` as `String(whole / 10 ** places)` writes it, for a whole
   * number below 10^15 in magnitude: such a quotient has at most 15 significant digits, so its
   * shortest round-trip form — what `String` (and `JSON.stringify`) writes, in plain notation
   * from 10^-7 to 10^21 — is its own decimal digits, trailing zeros dropped. Writing the digits
   * skips the double-to-shortest conversion, the dearest step of a row.
   */
  decimal(whole: number, places: number): void {
    this.reserve(24);
    const bytes = this.bytes;
    let magnitude = whole;
    if (whole < 0) {
      bytes[this.length++] = 0x2d;
      magnitude = -whole;
    }
    // Digits from the right into `digits`, then the integer part, the point and what remains.
    const digits = DIGITS;
    let count = 0;
    do {
      digits[count++] = magnitude % 10;
      magnitude = Math.floor(magnitude / 10);
    } while (magnitude > 0);
    while (count <= places) digits[count++] = 0;
    let lowest = 0;
    while (lowest < places && digits[lowest] === 0) lowest += 1;
    let at = this.length;
    for (let index = count - 1; index >= places; index -= 1) bytes[at++] = 0x30 + digits[index]!;
    if (lowest < places) {
      bytes[at++] = 0x2e;
      for (let index = places - 1; index >= lowest; index -= 1) bytes[at++] = 0x30 + digits[index]!;
    }
    this.length = at;
  }

  /** `source[start, end)` as a JSON string. */
  string(source: Uint8Array, start: number, end: number): void {
    this.reserve(2 + (end - start) * 6);
    const bytes = this.bytes;
    let at = this.length;
    bytes[at++] = QUOTE;
    for (let index = start; index < end; index += 1) {
      const value = source[index]!;
      if (value >= 0x20 && value !== QUOTE && value !== BACKSLASH) {
        bytes[at++] = value;
      } else if (value === QUOTE || value === BACKSLASH) {
        bytes[at++] = BACKSLASH;
        bytes[at++] = value;
      } else {
        const short = SHORT_ESCAPES[value];
        bytes[at++] = BACKSLASH;
        if (short !== undefined) {
          bytes[at++] = short;
        } else {
          at += bytes.write(`u00${HEX[value >> 4]}${HEX[value & 15]}`, at, "latin1");
        }
      }
    }
    bytes[at++] = QUOTE;
    this.length = at;
  }

  /** The bytes written since `from`, copied out. */
  copyFrom(from: number): Buffer {
    return Buffer.from(this.bytes.subarray(from, this.length));
  }
}

/**
 * The one buffer pages are written into before each is copied out at its size: `textPages` runs
 * start to end without yielding, so one buffer serves every call, and a walk's read-ahead makes
 * no garbage but its pages.
 */
const scratch = new JsonBytes(4 * 1024 * 1024);

/**
 * Whether `source[start, end)` is a whole number of GraphQL's `Int` as the driver writes one:
 * digits only, no leading zero but for 0 itself, at most 2^31 − 1.
 */
function isIntDigits(source: Uint8Array, start: number, end: number): boolean {
  const length = end - start;
  if (length === 0 || length > 10 || (length > 1 && source[start] === 0x30)) return false;
  let value = 0;
  for (let index = start; index < end; index += 1) {
    const digit = source[index]! - 0x30;
    if (digit < 0 || digit > 9) return false;
    value = value * 10 + digit;
  }
  return value <= MAX_INT;
}

/** Digits that a double holds exactly, read without making a string (2^53 > 10^15). */
const EXACT_DIGITS = 15;

/**
 * The whole number written by the digits `source[start, end)`: read from the bytes when they are
 * at most 15 digits (exact), else by `Number` of their text (correctly rounded), as the object
 * path's `Number(text)` reads it; NaN for anything but digits.
 */
function wholeNumber(source: Buffer, start: number, end: number): number {
  if (end - start > EXACT_DIGITS || end === start)
    return Number(source.toString("latin1", start, end) || "x");
  let value = 0;
  for (let index = start; index < end; index += 1) {
    const digit = source[index]! - 0x30;
    if (digit < 0 || digit > 9) return Number.NaN;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * The ASCII text `source[start, end)` — a day or a currency code, which repeat from row to row —
 * from a small cache by content, so that each distinct one is made into a string once.
 */
class AsciiCache {
  private readonly texts = new Map<string, string>();
  private last = "";
  private lastStart = -1;
  private lastEnd = -1;

  constructor(private readonly source: Buffer) {}

  text(start: number, end: number): string {
    const { source } = this;
    if (end - start === this.lastEnd - this.lastStart) {
      let same = true;
      for (let index = 0; index < end - start && same; index += 1)
        same = source[start + index] === source[this.lastStart + index];
      if (same) return this.last;
    }
    const text = source.toString("latin1", start, end);
    this.last = this.texts.get(text) ?? text;
    this.texts.set(text, this.last);
    this.lastStart = start;
    this.lastEnd = end;
    return this.last;
  }
}

/**
 * Cuts the UTF-8 text of `rowCount` rows into pages of `pageSize` and writes each as the JSON
 * array of its records, keys in `fields` order; null when a row cannot be written as the object
 * path would write it (the count of values is off, a whole number does not fit `Int`, a
 * conversion lacks a rate).
 */
export function textPages(
  text: Uint8Array,
  rowCount: number,
  plan: {
    fields: readonly RecordField[];
    columns: readonly string[];
    currency: CurrencyCode;
    money: MoneyConverter | null;
    pageSize: number;
  },
): TextPageRows[] | null {
  if (rowCount === 0) return [];
  const source = Buffer.from(text.buffer, text.byteOffset, text.length);
  const width = LEADING_VALUES + plan.columns.length;
  // Where each value starts and ends: one pass over the bytes.
  const starts = new Int32Array(rowCount * width + 1);
  let values = 0;
  starts[values++] = 0;
  // A plain loop: `indexOf` per value would be a native call each.
  for (let index = 0; index < source.length; index += 1) {
    if (source[index] !== SEPARATOR) continue;
    if (values === starts.length) return null;
    starts[values++] = index + 1;
  }
  if (values !== rowCount * width) return null;
  const endOf = (value: number): number => (value + 1 < values ? starts[value + 1]! - 1 : source.length);
  const latin1 = (value: number): string => source.toString("latin1", starts[value]!, endOf(value));
  const days = new AsciiCache(source);
  const currencies = new AsciiCache(source);
  const { fields, money } = plan;
  const minorUnits = money?.minorUnits ?? 0;
  const sources = fieldSources(fields, plan.columns);
  const kinds = sources.map(([source]) => source);
  const offsets = sources.map(([, offset]) => offset);
  // `{"field":` for the first key of a row, `,"field":` for the others.
  const keys = fields.map((field, index) =>
    Buffer.from(`${index === 0 ? "{" : ","}${JSON.stringify(field)}:`),
  );
  const currency = Buffer.from(JSON.stringify(plan.currency));
  const out = scratch;
  out.clear();
  const pages: TextPageRows[] = [];
  for (let first = 0; first < rowCount; first += plan.pageSize) {
    const last = Math.min(first + plan.pageSize, rowCount) - 1;
    const pageStart = out.length;
    out.byte(0x5b);
    for (let row = first; row <= last; row += 1) {
      const base = row * width;
      if (row > first) out.byte(0x2c);
      for (let field = 0; field < fields.length; field += 1) {
        out.raw(keys[field]!);
        const value = base + offsets[field]!;
        switch (kinds[field]) {
          case Source.Text:
            out.string(source, starts[value]!, endOf(value));
            break;
          case Source.Whole:
            if (!isIntDigits(source, starts[value]!, endOf(value))) return null;
            out.raw(source, starts[value]!, endOf(value));
            break;
          case Source.TenThousandths: {
            const stored = wholeNumber(source, starts[value]!, endOf(value));
            if (Math.abs(stored) < DECIMAL_LIMIT) out.decimal(stored, 4);
            else out.ascii(String(stored / 10000));
            break;
          }
          case Source.Money: {
            const stored = wholeNumber(source, starts[value]!, endOf(value));
            const minor = money?.convertMinor(
              Number.isSafeInteger(stored) ? stored : latin1(value),
              currencies.text(starts[base + 2]!, endOf(base + 2)),
              days.text(starts[base + 1]!, endOf(base + 1)),
            );
            if (minor === null || minor === undefined) return null;
            if (Math.abs(minor) < DECIMAL_LIMIT) out.decimal(minor, minorUnits);
            else out.ascii(String(minor / 10 ** minorUnits));
            break;
          }
          case Source.Currency:
            out.raw(currency);
            break;
        }
      }
      out.byte(0x7d);
    }
    out.byte(0x5d);
    const end = last * width;
    pages.push({
      json: out.copyFrom(pageStart),
      rows: last - first + 1,
      boundary: {
        keys: [latin1(end + 1)],
        recordId: source.toString("utf8", starts[end]!, endOf(end)),
      },
    });
  }
  return pages;
}
