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
import type { RecordField } from "../store/model/query-request.js";
import {
  type RecordsPage,
  type RecordValue,
  recordValue,
  type Utf8Column,
  type ValueColumn,
} from "../store/model/store.js";
import {
  asciiText,
  copyWords,
  decimalDigits,
  escapedUtf8,
  jsonString,
  MAX_DECIMAL_PLACES,
} from "./json-bytes.js";
import type { ResponseBuffers } from "./response-buffers.js";

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
 * The JSON array of the page's records, UTF-8, keys in `page.fields` order (a plain selection's
 * order), in a buffer taken from `buffers` when given (the endpoint gives it back once the
 * response is sent: response-buffers.ts), else in a buffer of its own; null when GraphQL would
 * not serialise a value as it stands (then answer with `recordObjects`). Written anew for every
 * response, a page the cache answers included: kept beside the page, the buffer could not be
 * reused (0.9 ms of CPU a 5000-row page: `node bench/page-encode.mjs` at scale 30).
 * @example const json = recordsJson(page, context.responseBuffers); if (json) context.recordsJson.set(key, json);
 */
export function recordsJson(page: RecordsPage, buffers?: ResponseBuffers): Buffer | null {
  const written = encoded(page);
  if (written === null) return null;
  const json = buffers?.take(written.length) ?? Buffer.allocUnsafe(written.length);
  written.copy(json);
  return json.subarray(0, written.length);
}

/** How `encoded` writes a field's values, one per row. */
enum Writer {
  /** Text kept as the page's UTF-8 bytes (`Utf8Column`). */
  Utf8,
  /** Text values (strings). */
  Text,
  /** `Int` values. */
  Int,
  /** `Float` values. */
  Float,
}

/** Slack past a page's bound: word writes run up to 7 bytes past what they write. */
const WORD_SLACK = 8;
/** Room `Writer.Int` needs at most (`-2147483648`). */
const INT_BYTES = 11;
/** Room `Writer.Float` needs at most: 18 for `decimalDigits`, 24 for any double `String` writes. */
const FLOAT_BYTES = 25;

/**
 * A page's rows as JSON in pieces: the text every row holds alike — keys, punctuation, and the
 * values all rows share (a `currency` column) — as chunks, and between them the fields written
 * row by row (`dynamic`). Chunk 0 is `[` and what comes before the first dynamic field, chunk `i`
 * (0 < i < dynamic.length) what comes before dynamic field `i`; `between` is what ends a row, a
 * comma and what starts the next; `close` what ends the last row and `]`.
 */
interface RowLayout {
  /** The fields written row by row, in the query's order, and how. */
  readonly dynamic: readonly number[];
  readonly writers: Int32Array;
  /** Every chunk's UTF-8 bytes one after the other, and room to read words past the last. */
  readonly chunks: DataView;
  /** Chunk `i` is `chunks[starts[i], starts[i + 1])`. */
  readonly starts: Int32Array;
  readonly between: number;
  readonly close: number;
  /** The bytes of a row's chunks (`between` and the chunks within the row). */
  readonly rowBytes: number;
}

/**
 * The literal text of a page's rows around its dynamic fields (`RowLayout`); `literals` holds, per
 * field, the value every row has (null: written row by row).
 */
function rowLayout(
  fields: readonly RecordField[],
  writers: readonly Writer[],
  literals: readonly (string | null)[],
): RowLayout {
  const chunks: string[] = [];
  const dynamic: number[] = [];
  let pending = "{";
  for (let field = 0; field < fields.length; field += 1) {
    pending += `${field === 0 ? "" : ","}${JSON.stringify(fields[field])}:`;
    const literal = literals[field];
    if (literal !== null && literal !== undefined) {
      pending += JSON.stringify(literal);
      continue;
    }
    // Text from bytes is written between the quotes its chunks hold.
    const quoted = writers[field] === Writer.Utf8;
    chunks.push(quoted ? `${pending}"` : pending);
    dynamic.push(field);
    pending = quoted ? '"' : "";
  }
  pending += "}";
  const head = chunks[0] ?? pending;
  const tail = chunks.length === 0 ? "" : pending;
  const texts = [`[${head}`, ...chunks.slice(1), `${tail},${head}`, `${tail}]`];
  const bytes = Buffer.from(`${texts.join("")}${"\0".repeat(WORD_SLACK)}`, "utf8");
  const starts = new Int32Array(texts.length + 1);
  for (const [index, text] of texts.entries()) starts[index + 1] = starts[index]! + Buffer.byteLength(text);
  const between = Math.max(dynamic.length, 1);
  return {
    dynamic,
    writers: Int32Array.from(dynamic, (field) => writers[field]!),
    chunks: new DataView(bytes.buffer, bytes.byteOffset, bytes.length),
    starts,
    between,
    close: between + 1,
    rowBytes: starts[between + 1]! - starts[1]!,
  };
}

/**
 * The buffer pages are written into, kept between pages (`encoded` runs start to end without
 * yielding) and copied out at each page's size; grown to the largest page written.
 */
let scratch = Buffer.allocUnsafe(1024 * 1024);
let scratchView = new DataView(scratch.buffer, scratch.byteOffset, scratch.length);

/** Room for `bytes` in `scratch`, keeping its first `kept` bytes. */
function reserveScratch(bytes: number, kept: number): void {
  if (bytes <= scratch.length) return;
  const grown = Buffer.allocUnsafe(Math.max(bytes, scratch.length * 2));
  scratch.copy(grown, 0, 0, kept);
  scratch = grown;
  scratchView = new DataView(grown.buffer, grown.byteOffset, grown.length);
}

/** The JSON of a page of no rows. */
const EMPTY_ARRAY = Buffer.from("[]");

/**
 * The page's JSON in the scratch buffer (valid until the next call): each row's literal text
 * (`RowLayout`) written a word at a time, text kept as bytes copied a word at a time when its page
 * holds nothing to escape (`Utf8Column.plain`), numbers written from their digits. The buffer is
 * sized once per page for everything but text kept as bytes, which is checked per value. Null when
 * a value is not one GraphQL serialises as it stands.
 */
function encoded({ fields, columns, rowCount }: RecordsPage): Buffer | null {
  if (rowCount === 0) return EMPTY_ARRAY;
  const writers: Writer[] = [];
  const literals: (string | null)[] = [];
  // The most bytes the page takes but for its text kept as bytes: numbers per row, text values.
  let numberBytes = 0;
  let textBytes = 0;
  for (let field = 0; field < fields.length; field += 1) {
    const column = columns[field]!;
    const output = OUTPUTS[fields[field]!];
    literals.push(null);
    if ("utf8" in column) {
      if (output !== Output.Text) return null;
      writers.push(Writer.Utf8);
    } else if (output === Output.Text) {
      const { values } = column;
      const first = values[0];
      let same = true;
      for (let row = 0; row < rowCount; row += 1) {
        const value = values[row];
        if (typeof value !== "string") return null;
        same &&= value === first;
        textBytes += value.length * 6 + 2;
      }
      if (same) literals[field] = first as string;
      writers.push(Writer.Text);
    } else {
      writers.push(output === Output.Int ? Writer.Int : Writer.Float);
      numberBytes += output === Output.Int ? INT_BYTES : FLOAT_BYTES;
    }
  }
  const layout = rowLayout(fields, writers, literals);
  const { dynamic, chunks, starts, between } = layout;
  const literalBytes = starts[starts.length - 1]!;
  reserveScratch(rowCount * (layout.rowBytes + numberBytes) + literalBytes + textBytes + WORD_SLACK, 0);
  let bytes = scratch;
  let view = scratchView;
  // Per dynamic field: its writer and column, and its bytes' view when they are copied by words.
  const kinds = layout.writers;
  const texts = dynamic.map((field) => columns[field] as Utf8Column);
  const values = dynamic.map((field) => (columns[field] as ValueColumn).values);
  const places = dynamic.map((field) => (columns[field] as ValueColumn).places);
  const wordViews = texts.map((column) =>
    "utf8" in column && column.plain
      ? new DataView(column.utf8.buffer, column.utf8.byteOffset, column.utf8.length)
      : null,
  );
  const count = dynamic.length;
  // Room the page takes but for its text kept as bytes, which is asked for as it is written.
  let spare = bytes.length - (rowCount * (layout.rowBytes + numberBytes) + literalBytes + textBytes);
  let at = 0;
  for (let row = 0; row < rowCount; row += 1) {
    const chunk = row === 0 ? 0 : between;
    at = copyWords(view, at, chunks, starts[chunk]!, starts[chunk + 1]!);
    for (let index = 0; index < count; index += 1) {
      if (index > 0) at = copyWords(view, at, chunks, starts[index]!, starts[index + 1]!);
      switch (kinds[index]) {
        case Writer.Utf8: {
          const column = texts[index]!;
          const cell = row * column.stride + column.offset;
          const start = column.starts[cell]!;
          const end = column.starts[cell + 1]! - 1;
          const source = wordViews[index] ?? null;
          const plain = source !== null && end + 7 <= source.byteLength;
          const room = plain ? end - start : (end - start) * 6;
          if (room + WORD_SLACK > spare) {
            reserveScratch(bytes.length + room + WORD_SLACK, at);
            spare += scratch.length - bytes.length;
            bytes = scratch;
            view = scratchView;
          }
          spare -= room;
          at = plain
            ? copyWords(view, at, source, start, end)
            : escapedUtf8(bytes, at, column.utf8, start, end);
          break;
        }
        case Writer.Text:
          at = jsonString(bytes, at, values[index]![row] as string);
          break;
        case Writer.Int: {
          const value = values[index]![row];
          if (typeof value !== "number" || !Number.isInteger(value) || value < MIN_INT || value > MAX_INT)
            return null;
          at = decimalDigits(bytes, at, value, 0);
          break;
        }
        default: {
          const value = values[index]![row];
          if (typeof value !== "number") return null;
          const decimals = places[index]!;
          if (Number.isInteger(value) && Math.abs(value) < DECIMAL_LIMIT && decimals <= MAX_DECIMAL_PLACES) {
            at = decimalDigits(bytes, at, value, decimals);
            break;
          }
          const number = decimals === 0 ? value : value / 10 ** decimals;
          if (!Number.isFinite(number)) return null;
          at = asciiText(bytes, at, String(number));
        }
      }
    }
  }
  const close = layout.close;
  at = copyWords(view, at, chunks, starts[close]!, starts[close + 1]!);
  return bytes.subarray(0, at);
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
