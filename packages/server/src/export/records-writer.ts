/**
 * What an export's result processor is (STYLE: "the answer is written to bytes in one place,
 * chosen by the request's media type"): one writer per format turns the store's batches into the
 * body's bytes. The store hands values, never text. The writers implement this; the endpoint
 * that uses them registers them by format and media type (export-endpoint.ts).
 */
import type { CurrencyCode } from "@mdq/contract";
import type { ExportBatch } from "../store/reads/export/record-export.js";

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
