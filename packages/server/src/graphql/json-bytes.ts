/**
 * JSON's pieces written as UTF-8 bytes at a position of a buffer the caller sized, each function
 * answering the position after what it wrote (records-json.ts writes a records page with them):
 * text as `JSON.stringify` escapes it, from UTF-8 bytes or from a string; whole numbers and
 * decimals as `String` writes them; and bytes copied eight at a time, which a page of short values
 * copies in a fraction of the time a byte loop takes (bench/page-encode.mjs).
 */

/** The ASCII bytes JSON's text and numbers are written with. */
enum Byte {
  Quote = 0x22,
  Backslash = 0x5c,
  Zero = 0x30,
  Minus = 0x2d,
  Point = 0x2e,
  /** The `u` of a `\u00xx` escape. */
  U = 0x75,
}
/** GraphQL's `Int` maximum: below it, digits come from 32-bit integer arithmetic. */
const MAX_INT = 2_147_483_647;

/**
 * Per byte of UTF-8 text, how `JSON.stringify` writes it: 0 as it is, else the byte after its
 * backslash — the short escapes of `"`, `\\`, backspace, tab, line feed, form feed and carriage
 * return, `u` for the other control characters (`\u00xx`). Every other byte of valid UTF-8 is
 * written as it is (JSON.stringify escapes nothing else of well-formed text).
 */
export const ESCAPES = new Uint8Array(256);
for (let byte = 0; byte < 0x20; byte += 1) ESCAPES[byte] = Byte.U;
ESCAPES[0x08] = 0x62;
ESCAPES[0x09] = 0x74;
ESCAPES[0x0a] = 0x6e;
ESCAPES[0x0c] = 0x66;
ESCAPES[0x0d] = 0x72;
ESCAPES[Byte.Quote] = Byte.Quote;
ESCAPES[Byte.Backslash] = Byte.Backslash;

/** Lowercase hex digits, as `JSON.stringify` writes `\u00xx`. */
const HEX = new Uint8Array([...Buffer.from("0123456789abcdef")]);

/** Whether `JSON.stringify` writes byte `byte` of UTF-8 text escaped. */
export function escapedByte(byte: number): boolean {
  return ESCAPES[byte] !== 0;
}

/**
 * Copies `source[start, end)` to `target` at `at`, eight bytes at a time as doubles: a double's
 * bits pass through unchanged unless they are a NaN's, which the engine may rewrite, so such a
 * word goes as two 32-bit halves. It reads up to 7 bytes past `end` (the caller checks
 * `end + 7 <= source.byteLength`) and writes up to 7 past what it copies, which the caller's next
 * write covers (and its buffer has room for).
 */
export function copyWords(
  target: DataView,
  at: number,
  source: DataView,
  start: number,
  end: number,
): number {
  let to = at;
  for (let from = start; from < end; from += 8, to += 8) {
    const word = source.getFloat64(from, true);
    if (!Number.isNaN(word)) target.setFloat64(to, word, true);
    else {
      target.setInt32(to, source.getInt32(from, true), true);
      target.setInt32(to + 4, source.getInt32(from + 4, true), true);
    }
  }
  return at + end - start;
}

/**
 * UTF-8 text `source[start, end)` (valid: an engine's text value) as `JSON.stringify` writes its
 * content (no quotes): `ESCAPES` say which bytes are escaped, every other byte as it is. At most 6
 * bytes a byte.
 */
export function escapedUtf8(
  target: Uint8Array,
  at: number,
  source: Uint8Array,
  start: number,
  end: number,
): number {
  let to = at;
  for (let index = start; index < end; index += 1) {
    const byte = source[index]!;
    const second = ESCAPES[byte]!;
    if (second === 0) {
      target[to++] = byte;
      continue;
    }
    target[to++] = Byte.Backslash;
    target[to++] = second;
    if (second === Byte.U) {
      target[to++] = Byte.Zero;
      target[to++] = Byte.Zero;
      target[to++] = HEX[byte >> 4]!;
      target[to++] = HEX[byte & 0xf]!;
    }
  }
  return to;
}

/**
 * `text` as `JSON.stringify` writes it, quoted, UTF-8: `"` and `\\` escaped, every other character
 * encoded as it is; a control character or a lone surrogate (rare: loads refuse control
 * characters) through `JSON.stringify` itself. At most `text.length * 6 + 2` bytes.
 */
export function jsonString(target: Buffer, at: number, text: string): number {
  let to = at;
  target[to++] = Byte.Quote;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code >= 0x20 && code < 0x80) {
      if (code === Byte.Quote || code === Byte.Backslash) target[to++] = Byte.Backslash;
      target[to++] = code;
    } else if (code >= 0x80 && code < 0x800) {
      target[to++] = 0xc0 | (code >> 6);
      target[to++] = 0x80 | (code & 0x3f);
    } else if (code >= 0x800 && (code < 0xd800 || code > 0xdfff)) {
      target[to++] = 0xe0 | (code >> 12);
      target[to++] = 0x80 | ((code >> 6) & 0x3f);
      target[to++] = 0x80 | (code & 0x3f);
    } else {
      const low = text.charCodeAt(index + 1);
      if (code >= 0xdc00 || code < 0x20 || !(low >= 0xdc00 && low <= 0xdfff))
        return at + target.write(JSON.stringify(text), at, "utf8");
      const point = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
      target[to++] = 0xf0 | (point >> 18);
      target[to++] = 0x80 | ((point >> 12) & 0x3f);
      target[to++] = 0x80 | ((point >> 6) & 0x3f);
      target[to++] = 0x80 | (point & 0x3f);
      index += 1;
    }
  }
  target[to++] = Byte.Quote;
  return to;
}

/** The digit pairs "00" to "99", as bytes. */
const PAIRS = new Uint8Array([
  ...Buffer.from(Array.from({ length: 100 }, (_, pair) => String(pair).padStart(2, "0")).join("")),
]);

/**
 * `value / 100` rounded down, for 0 ≤ value < 43,699, by a multiplication and a shift (exact in
 * that range: 5243 / 2^19 exceeds 1/100 by less than 1 / (100 × 43,699)).
 */
function hundredths(value: number): number {
  return (value * 5243) >>> 19;
}

/** The digits of `value` (0 to 9999), without leading zeros. */
function upToFourDigits(target: Uint8Array, at: number, value: number): number {
  if (value < 10) {
    target[at] = Byte.Zero + value;
    return at + 1;
  }
  if (value < 100) {
    target[at] = PAIRS[value * 2]!;
    target[at + 1] = PAIRS[value * 2 + 1]!;
    return at + 2;
  }
  const high = hundredths(value);
  const low = (value - high * 100) * 2;
  let to = at;
  if (high < 10) target[to++] = Byte.Zero + high;
  else {
    target[to++] = PAIRS[high * 2]!;
    target[to++] = PAIRS[high * 2 + 1]!;
  }
  target[to++] = PAIRS[low]!;
  target[to++] = PAIRS[low + 1]!;
  return to;
}

/** The four digits of `value` (0 to 9999), leading zeros written. */
function fourDigits(target: Uint8Array, at: number, value: number): number {
  const high = hundredths(value) * 2;
  const low = (value - (high >> 1) * 100) * 2;
  target[at] = PAIRS[high]!;
  target[at + 1] = PAIRS[high + 1]!;
  target[at + 2] = PAIRS[low]!;
  target[at + 3] = PAIRS[low + 1]!;
  return at + 4;
}

/**
 * The decimal digits of `whole`, a whole number from 0 to 2^31 − 1 (at most 10 bytes): four
 * digits at a time, two at a time within those, so that a value takes at most two divisions.
 */
function smallDigits(target: Uint8Array, at: number, whole: number): number {
  if (whole < 10_000) return upToFourDigits(target, at, whole);
  if (whole < 100_000_000) {
    const high = (whole / 10_000) | 0;
    return fourDigits(target, upToFourDigits(target, at, high), whole - high * 10_000);
  }
  const top = (whole / 100_000_000) | 0;
  const rest = whole - top * 100_000_000;
  const high = (rest / 10_000) | 0;
  const to = fourDigits(target, upToFourDigits(target, at, top), high);
  return fourDigits(target, to, rest - high * 10_000);
}

/** The decimal digits of `whole`, a whole number from 2^31 to 10^15 (at most 16 bytes). */
function largeDigits(target: Uint8Array, at: number, whole: number): number {
  let count = 1;
  for (let power = 10; power <= whole; power *= 10) count += 1;
  let rest = whole;
  let to = at + count;
  do {
    const next = Math.floor(rest / 10);
    target[--to] = Byte.Zero + rest - next * 10;
    rest = next;
  } while (rest > 0);
  return at + count;
}

/** The most places `decimalDigits` writes: `String` writes 10^-6 and above in plain notation. */
export const MAX_DECIMAL_PLACES = 6;
/** 10^places for the places a column holds (0 to 4: minor units, ten-thousandths). */
const POWERS = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000];

/**
 * `whole / 10 ** places` as `String` writes it, for a whole number below 10^15 in magnitude and
 * `places` from 0 to `MAX_DECIMAL_PLACES`: its digits, the point before the last `places`, trailing zeros dropped (at
 * most 18 bytes). Below 10^15 the quotient has at most 15 significant digits, so its shortest
 * round-trip form — what `String` writes, in plain notation from 10^-6 to 10^21 — is those digits.
 */
export function decimalDigits(target: Uint8Array, at: number, whole: number, places: number): number {
  let to = at;
  let magnitude = whole;
  if (whole < 0) {
    target[to++] = Byte.Minus;
    magnitude = -whole;
  }
  if (magnitude > MAX_INT) return largeDecimal(target, to, magnitude, places);
  if (places === 0) return smallDigits(target, to, magnitude);
  const scale = POWERS[places]!;
  const integer = (magnitude / scale) | 0;
  const fraction = magnitude - integer * scale;
  to = smallDigits(target, to, integer);
  if (fraction === 0) return to;
  target[to] = Byte.Point;
  let end: number;
  if (places === 2) {
    target[to + 1] = PAIRS[fraction * 2]!;
    target[to + 2] = PAIRS[fraction * 2 + 1]!;
    end = to + 3;
  } else if (places === 4) end = fourDigits(target, to + 1, fraction);
  else end = placedDigits(target, to + 1, fraction, places);
  while (target[end - 1] === Byte.Zero) end -= 1;
  return end;
}

/** The `places` digits of `fraction` (below 10^places), leading zeros written. */
function placedDigits(target: Uint8Array, at: number, fraction: number, places: number): number {
  let rest = fraction;
  for (let index = at + places - 1; index >= at; index -= 1) {
    const next = Math.floor(rest / 10);
    target[index] = Byte.Zero + rest - next * 10;
    rest = next;
  }
  return at + places;
}

/** `decimalDigits` of a magnitude from 2^31 to 10^15, in doubles. */
function largeDecimal(target: Uint8Array, at: number, magnitude: number, places: number): number {
  const scale = POWERS[places]!;
  // Exact: both below 2^53, and the quotient's floor is never rounded up to the next integer.
  const integer = Math.floor(magnitude / scale);
  const fraction = magnitude - integer * scale;
  const to = integer > MAX_INT ? largeDigits(target, at, integer) : smallDigits(target, at, integer);
  if (fraction === 0) return to;
  target[to] = Byte.Point;
  let end = placedDigits(target, to + 1, fraction, places);
  while (target[end - 1] === Byte.Zero) end -= 1;
  return end;
}

/** ASCII text (a number as `String` writes it). */
export function asciiText(target: Uint8Array, at: number, text: string): number {
  let to = at;
  for (let index = 0; index < text.length; index += 1) target[to++] = text.charCodeAt(index);
  return to;
}
