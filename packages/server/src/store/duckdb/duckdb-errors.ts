/**
 * Which DuckDB failures mean "the store cannot answer this now" (the service answers 503 with
 * `Retry-After`, as for an unavailable PostgreSQL, postgres-errors.ts) rather than a bug: a read
 * that needs more memory than DuckDB's limit (`MDQ_DUCKDB_MEMORY_MB`) has left while other reads
 * hold it. DuckDB then fails the statement ("Out of Memory Error: could not allocate block …",
 * "failed to pin block …"); the same read succeeds once the others are done. Measured at demo
 * scale 600 under a 96 MB limit: six CAMPAIGN_ID aggregates and six pages sorted by SPEND asked at
 * once failed eight of twelve, which answered 500 before this mapping.
 */
import { StoreUnavailableError } from "../model/store-errors.js";

/** Seconds a client is told to wait: the reads holding the memory take about that long. */
const OUT_OF_MEMORY_RETRY_SECONDS = 2;

/** Whether `error` is DuckDB running out of its memory limit. */
export function isOutOfMemory(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith("Out of Memory Error");
}

/**
 * `error` as a `StoreUnavailableError` when DuckDB ran out of memory, else unchanged. The message
 * is ours (DuckDB's names memory figures and settings, nothing of a client's); the original stays
 * as `cause` for the operator's logs.
 */
export function storeError(error: unknown): unknown {
  if (!isOutOfMemory(error)) return error;
  return new StoreUnavailableError(
    "the embedded store is out of memory for this read now (MDQ_DUCKDB_MEMORY_MB): retry shortly",
    OUT_OF_MEMORY_RETRY_SECONDS,
    { cause: error },
  );
}
