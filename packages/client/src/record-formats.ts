/**
 * The one text shape of each format the client writes, whichever command writes it (`export`,
 * `sync`, `mirror`; CONTRACT §7): the service's export shape, so a file the client writes is
 * byte-identical to the export's body for the same rows (docs/daily-sync.md, "File shapes").
 * CSV is RFC 4180 with CRLF line ends, a header of the field names, a field quoted when it holds a
 * comma, quote, CR or LF (quotes doubled); text cells that a spreadsheet would run as a formula get
 * a leading `'` (OWASP's CSV injection rule, `neutraliseCsvCell`) unless `--raw-csv` asks for the
 * values as they are. NDJSON is one `JSON.stringify`d record per line, LF after each, the fields
 * in the schema's order. Parquet's typed columns are parquet-writer.ts's.
 */
import { neutraliseCsvCell } from "@mdq/contract";
import { RECORD_FIELDS } from "./client.js";
import type { MarketingRecord } from "./types.js";

/**
 * The version of the files' shape (line ends, quoting, Parquet types). A sync checkpoint or a
 * mirror state of another shape is not continued: its files are written afresh, so no file or
 * mirror ever mixes two shapes. 1: LF CSV and INT32/DOUBLE Parquet (before the export's shape).
 */
export const FILE_SHAPE = 2;

/** The output formats of `sync`. */
export const SYNC_FORMATS = ["csv", "ndjson", "parquet"] as const;
export type SyncFormat = (typeof SYNC_FORMATS)[number];

/** Every `MarketingRecord` field, in the order the files list them: the schema's. */
export { RECORD_FIELDS };

/** What a format writes into the partial file: a header once, then each page's bytes. */
export interface RecordEncoding {
  /** Written once at the start of the partial file (the CSV header line), maybe empty. */
  header: string;
  /** One page of records, as appended to the partial file. */
  encode(records: readonly MarketingRecord[]): string;
}

/** RFC 4180 quoting: a field with a comma, quote, CR or LF is quoted, quotes doubled. */
function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** RFC 4180's record delimiter, which the service's export writes too. */
export const CSV_LINE_END = "\r\n";

/** CSV with a header line, CRLF line ends, UTF-8; `cell` turns each value into its text. */
function csvWith(cell: (value: string | number) => string): RecordEncoding {
  return {
    header: `${RECORD_FIELDS.join(",")}${CSV_LINE_END}`,
    encode(records) {
      let text = "";
      for (const record of records) {
        text += `${RECORD_FIELDS.map((field) => csvField(cell(record[field]))).join(",")}${CSV_LINE_END}`;
      }
      return text;
    },
  };
}

/** CSV whose text cells are safe to open in a spreadsheet (numbers are never prefixed). */
export const csvEncoding: RecordEncoding = csvWith(neutraliseCsvCell);

/** CSV with every value as the service sent it (`--raw-csv`). */
export const rawCsvEncoding: RecordEncoding = csvWith(String);

/** One JSON object per line, keys in `RECORD_FIELDS` order whatever order the service sent. */
export const ndjsonEncoding: RecordEncoding = {
  header: "",
  encode(records) {
    let text = "";
    for (const record of records) {
      const ordered: Record<string, unknown> = {};
      for (const field of RECORD_FIELDS) ordered[field] = record[field];
      text += `${JSON.stringify(ordered)}\n`;
    }
    return text;
  },
};

/** The encoding of the partial file for a format (Parquet spools NDJSON); `rawCsv` keeps CSV cells as sent. */
export function partialEncoding(format: SyncFormat, rawCsv = false): RecordEncoding {
  if (format !== "csv") return ndjsonEncoding;
  return rawCsv ? rawCsvEncoding : csvEncoding;
}
