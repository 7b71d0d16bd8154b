/**
 * The service's order of record ids: UTF-8 byte order (PostgreSQL's and DuckDB's "C" collation),
 * which ties of a records sort and the export's `(date, recordId)` order follow.
 */

/**
 * Compares two record ids in UTF-8 byte order. JavaScript's `<` compares UTF-16 code units, which
 * agree with byte order except where a surrogate pair meets a character of U+E000..U+FFFF: only
 * then are the ids encoded and compared as bytes.
 * @example ["r-b", "r-a"].sort(compareRecordIds) // ["r-a", "r-b"]
 */
export function compareRecordIds(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index += 1) {
    const left = a.charCodeAt(index);
    const right = b.charCodeAt(index);
    if (left === right) continue;
    if (left < 0xd800 && right < 0xd800) return left - right;
    return Buffer.compare(Buffer.from(a), Buffer.from(b));
  }
  return a.length - b.length;
}
