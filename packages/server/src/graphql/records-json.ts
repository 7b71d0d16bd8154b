/**
 * A `marketingRecords` page written for the response, at the GraphQL layer only (the store speaks
 * columns, never bytes; graphql-yoga's result processor is the model): a plain selection
 * (selection.ts `plainSelection`) is written from the page's columns straight to the JSON bytes
 * graphql-jit and `JSON.stringify` would write for the same rows, keys in the query's field order,
 * and the endpoint splices them into the response (graphql-endpoint.ts `responseChunks`); any
 * other selection gets row objects, which GraphQL execution serialises field by field.
 *
 * The bytes are those of the object path: text as `JSON.stringify` writes it, numbers as `String`
 * writes them (what `JSON.stringify` writes for a finite number), from the digits of the column's
 * whole numbers where those are the same (`DECIMAL_LIMIT`). A value GraphQL would
 * refuse — an `Int` outside 32 bits, a number that is not finite, a missing amount — leaves the
 * page to the object path (`recordsJson` answers null), which raises the same field error as ever.
 */
import type { RecordField } from "../store/query-request.js";
import { type RecordsPage, type RecordValue, recordValue, type ValueColumn } from "../store/store.js";

/** How GraphQL serialises a field's values (schema.ts `MarketingRecord`). */
enum Output {
  /** `ID`, `String`, `Date`, `Currency`: the text as a JSON string. */
  Text,
  /** `Int`: a whole number of 32 bits. */
  Int,
  /** `Float`: a finite number. */
  Float,
}

const OUTPUTS: Record<RecordField, Output> = {
  recordId: Output.Text,
  date: Output.Text,
  market: Output.Text,
  dataSource: Output.Text,
  channel: Output.Text,
  campaignId: Output.Text,
  campaignName: Output.Text,
  impressions: Output.Int,
  clicks: Output.Int,
  spend: Output.Float,
  conversions: Output.Float,
  revenue: Output.Float,
  currency: Output.Text,
};

/** GraphQL's `Int` range (32-bit signed, GraphQL spec §3.5.1). */
const MIN_INT = -2_147_483_648;
const MAX_INT = 2_147_483_647;
/**
 * Below this, a whole number of 10^-places is written from its own digits: such a quotient has
 * at most 15 significant digits, so its shortest round-trip form — what `String` and
 * `JSON.stringify` write, in plain notation from 10^-7 to 10^21 — is those digits, trailing
 * zeros dropped. Writing them skips the double-to-shortest conversion, a row's dearest step.
 */
const DECIMAL_LIMIT = 1e15;

/**
 * Each page's JSON, written once: a cached page (store/page-cache.ts) is the same object on every
 * hit, so its bytes are reused, and dropped with it.
 */
const written = new WeakMap<RecordsPage, Buffer | null>();

/**
 * The JSON array of the page's records, UTF-8, keys in `page.fields` order (a plain selection's
 * order); null when GraphQL would not serialise a value as it stands (then answer with
 * `recordObjects`).
 * @example const json = recordsJson(page); if (json) context.recordsJson.set(key, json);
 */
export function recordsJson(page: RecordsPage): Buffer | null {
  let json = written.get(page);
  if (json === undefined) {
    json = encoded(page);
    written.set(page, json);
  }
  return json;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
/** `JSON.stringify`'s short escapes of control characters (the others are `\u00xx`). */
const SHORT_ESCAPES: Partial<Record<number, number>> = { 8: 0x62, 9: 0x74, 10: 0x6e, 12: 0x66, 13: 0x72 };
/** Lowercase hex digits as bytes, as `JSON.stringify` writes `\u00xx`. */
const HEX = Buffer.from("0123456789abcdef");

/**
 * JSON written as UTF-8 bytes into one buffer, kept between pages (`encoded` runs start to end
 * without yielding) and copied out at each page's size.
 */
class JsonBytes {
  bytes = Buffer.allocUnsafe(1024 * 1024);
  length = 0;
  private readonly digits = new Uint8Array(24);

  /** Room for `more` bytes. */
  reserve(more: number): void {
    if (this.length + more <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + more));
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
  }

  byte(value: number): void {
    this.reserve(1);
    this.bytes[this.length++] = value;
  }

  /** Bytes as they are (a loop: short copies cost less than `copy`). */
  raw(source: Uint8Array): void {
    this.reserve(source.length);
    const bytes = this.bytes;
    let at = this.length;
    for (let index = 0; index < source.length; index += 1) bytes[at++] = source[index]!;
    this.length = at;
  }

  /**
   * `text` as `JSON.stringify` writes it, UTF-8: `"` and `\\` escaped, every other character
   * encoded as it is; a control character or a lone surrogate (rare: loads refuse control
   * characters) through `JSON.stringify` itself.
   */
  string(text: string): void {
    // At most 3 bytes a UTF-16 unit (a pair makes 4), 2 for an escaped quote or backslash.
    this.reserve(text.length * 3 + 2);
    const bytes = this.bytes;
    const start = this.length;
    let at = start;
    bytes[at++] = QUOTE;
    for (let index = 0; index < text.length; index += 1) {
      const code = text.charCodeAt(index);
      if (code >= 0x20 && code < 0x80) {
        if (code === QUOTE || code === BACKSLASH) bytes[at++] = BACKSLASH;
        bytes[at++] = code;
      } else if (code >= 0x80 && code < 0x800) {
        bytes[at++] = 0xc0 | (code >> 6);
        bytes[at++] = 0x80 | (code & 0x3f);
      } else if (code >= 0x800 && (code < 0xd800 || code > 0xdfff)) {
        bytes[at++] = 0xe0 | (code >> 12);
        bytes[at++] = 0x80 | ((code >> 6) & 0x3f);
        bytes[at++] = 0x80 | (code & 0x3f);
      } else {
        const low = text.charCodeAt(index + 1);
        if (code >= 0xdc00 || code < 0x20 || !(low >= 0xdc00 && low <= 0xdfff)) {
          this.length = start;
          this.reserve(text.length * 6 + 2);
          this.length += this.bytes.write(JSON.stringify(text), start, "utf8");
          return;
        }
        const point = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        bytes[at++] = 0xf0 | (point >> 18);
        bytes[at++] = 0x80 | ((point >> 12) & 0x3f);
        bytes[at++] = 0x80 | ((point >> 6) & 0x3f);
        bytes[at++] = 0x80 | (point & 0x3f);
        index += 1;
      }
    }
    bytes[at++] = QUOTE;
    this.length = at;
  }

  /**
   * UTF-8 text `source[start, end)` (valid: an engine's text value) as `JSON.stringify` writes it,
   * encoded: `"` and `\\` escaped, a control character as its short or `\\u00xx` escape, every
   * other byte as it is (JSON.stringify escapes nothing else of valid text).
   */
  utf8(source: Uint8Array, start: number, end: number): void {
    // At most 6 bytes a byte (`\u00xx`), 2 for the quotes.
    this.reserve((end - start) * 6 + 2);
    const bytes = this.bytes;
    let at = this.length;
    bytes[at++] = QUOTE;
    for (let index = start; index < end; index += 1) {
      const byte = source[index]!;
      if (byte === QUOTE || byte === BACKSLASH) bytes[at++] = BACKSLASH;
      else if (byte < 0x20) {
        bytes[at++] = BACKSLASH;
        const short = SHORT_ESCAPES[byte];
        if (short !== undefined) bytes[at++] = short;
        else {
          bytes[at++] = 0x75;
          bytes[at++] = 0x30;
          bytes[at++] = 0x30;
          bytes[at++] = HEX[byte >> 4]!;
          bytes[at++] = HEX[byte & 0xf]!;
        }
        continue;
      }
      bytes[at++] = byte;
    }
    bytes[at++] = QUOTE;
    this.length = at;
  }

  /**
   * `whole / 10 ** places` as `String` writes it, for a whole number below `DECIMAL_LIMIT` in
   * magnitude: its digits, the point before the last `places`, trailing zeros dropped.
   */
  decimal(whole: number, places: number): void {
    this.reserve(24);
    const bytes = this.bytes;
    let magnitude = whole;
    if (whole < 0) {
      bytes[this.length++] = 0x2d;
      magnitude = -whole;
    }
    // Digits from the right, then the integer part, the point and what remains.
    const digits = this.digits;
    let count = 0;
    if (magnitude <= MAX_INT) {
      // Small integer arithmetic, cheaper than doubles: most values are below 2^31.
      let small = magnitude | 0;
      do {
        const next = (small / 10) | 0;
        digits[count++] = small - next * 10;
        small = next;
      } while (small > 0);
    } else {
      do {
        const next = Math.floor(magnitude / 10);
        digits[count++] = magnitude - next * 10;
        magnitude = next;
      } while (magnitude > 0);
    }
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

  /** ASCII text (a number as `String` writes it). */
  ascii(text: string): void {
    this.reserve(text.length);
    this.length += this.bytes.write(text, this.length, "latin1");
  }

  /** The bytes written since `from`, copied out. */
  copyFrom(from: number): Buffer {
    return Buffer.from(this.bytes.subarray(from, this.length));
  }
}

const scratch = new JsonBytes();

/**
 * Writes `value` of a field of `output` (`places` its column's), as GraphQL serialises it; false
 * when GraphQL would refuse it (an `Int` outside 32 bits, a number that is not finite, a missing
 * amount).
 */
function writeValue(out: JsonBytes, value: RecordValue, output: Output, places: number): boolean {
  if (output === Output.Text) {
    if (typeof value !== "string") return false;
    out.string(value);
    return true;
  }
  if (typeof value !== "number") return false;
  if (output === Output.Int) {
    if (!Number.isInteger(value) || value < MIN_INT || value > MAX_INT) return false;
    out.decimal(value, 0);
    return true;
  }
  if (Number.isInteger(value) && Math.abs(value) < DECIMAL_LIMIT) {
    out.decimal(value, places);
    return true;
  }
  const number = places === 0 ? value : value / 10 ** places;
  if (!Number.isFinite(number)) return false;
  out.ascii(String(number));
  return true;
}

function encoded({ fields, columns, rowCount }: RecordsPage): Buffer | null {
  const outputs = fields.map((field) => OUTPUTS[field]);
  // `{"field":` for the first key of a row, `,"field":` for the others.
  const keys = fields.map((field, index) =>
    Buffer.from(`${index === 0 ? "{" : ","}${JSON.stringify(field)}:`),
  );
  // Each column's kind, checked once: text as bytes, or values (and the text written for them).
  const utf8 = columns.map((column) => ("utf8" in column ? column : null));
  const valueColumns = columns.map((column) => ("utf8" in column ? null : column));
  if (utf8.some((column, field) => column !== null && outputs[field] !== Output.Text)) return null;
  const out = scratch;
  out.length = 0;
  out.byte(0x5b);
  for (let row = 0; row < rowCount; row += 1) {
    if (row > 0) out.byte(COMMA);
    for (let field = 0; field < fields.length; field += 1) {
      out.raw(keys[field]!);
      const text = utf8[field];
      if (text) {
        const at = row * text.stride + text.offset;
        out.utf8(text.utf8, text.starts[at]!, text.starts[at + 1]! - 1);
        continue;
      }
      const column = valueColumns[field] as ValueColumn;
      if (!writeValue(out, column.values[row]!, outputs[field]!, column.places)) return null;
    }
    out.byte(0x7d);
  }
  out.byte(0x5d);
  return out.copyFrom(0);
}

/**
 * The page's rows as objects, one property per field: what GraphQL execution serialises for a
 * selection the JSON is not written for (aliases, fragments, directives, `__typename`).
 */
export function recordObjects({ fields, columns, rowCount }: RecordsPage): Record<string, RecordValue>[] {
  const rows = new Array<Record<string, RecordValue>>(rowCount);
  for (let row = 0; row < rowCount; row += 1) {
    const object: Record<string, RecordValue> = {};
    for (let field = 0; field < fields.length; field += 1)
      object[fields[field]!] = recordValue(columns[field]!, row);
    rows[row] = object;
  }
  return rows;
}
