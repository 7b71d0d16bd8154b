/**
 * The export's result processors (STYLE: "the answer is written to bytes in one place, chosen by
 * the request's media type"): one writer per format turns the store's batches into the body's
 * bytes. The store hands values, never text.
 */
import type { CurrencyCode, ExportFormat } from "@mdq/contract";
import type { ExportBatch } from "../store/reads/export/record-export.js";
import { arrowWriter } from "./arrow-writer.js";
import { csvWriter } from "./csv-writer.js";
import { ndjsonWriter } from "./ndjson-writer.js";
import { parquetWriter } from "./parquet-writer.js";

/** Bytes of the body (a string is sent as UTF-8). */
export type BodyChunk = string | Uint8Array;

/** Writes one export's body: its start, each batch, its end; each call returns what to send next. */
export interface RecordsWriter {
  start(): BodyChunk;
  write(batch: ExportBatch): BodyChunk;
  end(): BodyChunk;
}

/** A writer of an export in `currency` (Parquet's DECIMAL scale is its minor unit). */
export type RecordsWriterFactory = (currency: CurrencyCode) => RecordsWriter;

/** The writer of each format. */
export const RECORDS_WRITERS: Readonly<Record<ExportFormat, RecordsWriterFactory>> = Object.freeze({
  ndjson: ndjsonWriter,
  csv: csvWriter,
  parquet: parquetWriter,
  arrow: arrowWriter,
});
