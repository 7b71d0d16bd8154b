/**
 * The bulk export's public names (CONTRACT §7 "Bulk export", docs/api.md): its path, parameters,
 * formats and their media types, response headers, and how `after=` names a row.
 */
import { MAX_CHANGES_RANGE_DAYS } from "./vocabulary.js";

/** `GET {baseUrl}/export/marketing-records`. */
export const EXPORT_PATH = "/export/marketing-records";

/** Every query parameter the export accepts; any other is refused (BAD_USER_INPUT). */
export const EXPORT_PARAMETERS = Object.freeze([
  "clientId",
  "from",
  "to",
  "currency",
  "format",
  "markets",
  "dataSources",
  "channels",
  "campaignIds",
  "after",
  "dataVersion",
  "resume",
] as const);
export type ExportParameter = (typeof EXPORT_PARAMETERS)[number];

/** The export's formats, `ndjson` first (the default). */
export const EXPORT_FORMATS = Object.freeze(["ndjson", "csv", "parquet", "arrow"] as const);
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The `Content-Type` of each format. */
export const EXPORT_MEDIA_TYPES: Readonly<Record<ExportFormat, string>> = Object.freeze({
  ndjson: "application/x-ndjson",
  csv: "text/csv; charset=utf-8; header=present",
  parquet: "application/vnd.apache.parquet",
  arrow: "application/vnd.apache.arrow.stream",
});

/** Formats that are text, which `Accept-Encoding` may compress (Parquet and Arrow compress inside). */
export const TEXT_EXPORT_FORMATS: ReadonlySet<ExportFormat> = new Set(["ndjson", "csv"]);

/** Response header: the data version the whole body reads (pageInfo's `dataVersion` space). */
export const DATA_VERSION_HEADER = "MDQ-Data-Version";
/**
 * Response header: the export's whole query (clientId, range, currency, format, filters, data
 * version) as one opaque token. A resume sends it back as `resume=`, with the same parameters;
 * one that differs is refused (409 `RESUME_MISMATCH`), so a resumed body cannot answer another
 * question than the part it continues.
 */
export const RESUME_HEADER = "MDQ-Resume";
/** Response header: the exact number of rows the body holds. */
export const ROW_COUNT_HEADER = "MDQ-Row-Count";

/** Longest export range, in days counting both ends. */
export const MAX_EXPORT_RANGE_DAYS = MAX_CHANGES_RANGE_DAYS;

/** A row of the export's order (date ascending, then record id): what `after=` resumes past. */
export interface ExportRowKey {
  /** `YYYY-MM-DD`. */
  date: string;
  recordId: string;
}

/**
 * `after=` as sent: `DATE,RECORD_ID`. The date has a fixed width, so a record id holding commas
 * needs no escaping: everything after the first comma is the id.
 * @example exportAfterText({ date: "2026-11-20", recordId: "r-1" }) // "2026-11-20,r-1"
 */
export function exportAfterText(key: ExportRowKey): string {
  return `${key.date},${key.recordId}`;
}

/** The row an `after=` value names; undefined when it is not `YYYY-MM-DD,ID` with a non-empty id. */
export function parseExportAfter(text: string): ExportRowKey | undefined {
  const match = /^(\d{4}-\d{2}-\d{2}),(.+)$/s.exec(text);
  return match ? { date: match[1]!, recordId: match[2]! } : undefined;
}
