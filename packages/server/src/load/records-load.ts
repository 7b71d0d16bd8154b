/**
 * A records file into the store: the whole of `mdq load` after its request is checked (CONTRACT
 * §4). The fast path (record-staging.ts) reads and checks the file in DuckDB straight into a
 * staging table: the DuckDB store's own, inside the load's transaction (a Parquet file: a view
 * over it, read again by the load's statements); for PostgreSQL a scratch DuckDB's, handed over
 * for COPY (the rollup and the record ids as CSV files, the rows as CSV bytes written while
 * PostgreSQL copies them). A file the fast check does not pass is read again by
 * `readRecordsFile`, which rejects it naming its problems; should it find none (the fast check is
 * the stricter in corner cases, such as a date before the year 1000), the load goes on from that
 * read. Either way the store replaces the brand's rows in one transaction: all or nothing.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { isOutOfMemory } from "../store/duckdb/duckdb-errors.js";
import {
  type LoadOrigin,
  type LoadSummary,
  type RecordLoads,
  type StoredRows,
  stagesLoads,
} from "../store/model/store.js";
import { rolledUpTableOf } from "../store/sql/rollup-table.js";
import { STAGING_COLUMNS } from "../store/writes/record-replace.js";
import { makeWorkDir } from "../work-dirs.js";
import { openScratch } from "./file-staging.js";
import { LoadOutOfMemoryError } from "./load-errors.js";
import type { LoadProgressReporter } from "./load-progress.js";
import { RecordsNotClean, type StagingRequest, stageRecords } from "./record-staging.js";
import { readRecordsFile } from "./records-file.js";
import { type StoredLoadFiles, writeStoredLoad } from "./records-reader.js";

/** How a load runs, beside what it loads. */
export interface LoadRunOptions {
  progress: LoadProgressReporter;
  /**
   * A scratch DuckDB's memory limit in MB (`MDQ_LOAD_MEMORY_MB`); the DuckDB store's own load
   * settings are the store's (`DuckDbOptions.loadMemoryMb`).
   */
  memoryMb?: number;
}

/**
 * Loads the file of `request` into `store` for `brandId`; returns the load's summary. Throws
 * `LoadOutOfMemoryError` when DuckDB ran out of memory on the way (nothing changed).
 */
export async function loadRecordsFile(
  store: RecordLoads,
  brandId: string,
  request: StagingRequest,
  origin: LoadOrigin,
  options: LoadRunOptions,
): Promise<LoadSummary> {
  try {
    return await loadFile(store, brandId, request, origin, options);
  } catch (error) {
    // The DuckDB store's own statements may have mapped it for reads (duckdb-errors.ts).
    if (isOutOfMemory(error) || isOutOfMemory((error as { cause?: unknown } | null)?.cause))
      throw new LoadOutOfMemoryError(error);
    throw error;
  }
}

/** `loadRecordsFile`: the fast path, or the file's diagnosis and the rows it read. */
async function loadFile(
  store: RecordLoads,
  brandId: string,
  request: StagingRequest,
  origin: LoadOrigin,
  { progress, memoryMb }: LoadRunOptions,
): Promise<LoadSummary> {
  const onReplacing = () => progress.phase("replacing");
  // Rates are only ever added: what covers the file now still covers it when the load commits.
  const rateStarts = await store.fxRateStarts();
  try {
    if (stagesLoads(store)) {
      // A Parquet file is staged as a view over it: its rows are read from the file again rather
      // than written into a table (record-staging.ts `StagingOptions.overFile`).
      const stage = async (connection: Parameters<typeof stageRecords>[0], staging: string) => {
        const { rows, unchanged } = await stageRecords(connection, staging, request, progress, {
          overFile: true,
          rateStarts,
        });
        return { rows, rolledUp: true, ...(unchanged ? { unchanged } : {}) };
      };
      return await store.replaceRecordsStaged(brandId, stage, origin, onReplacing);
    }
    const scratch = await openScratch(memoryMb);
    return await handOver(store, brandId, origin, onReplacing, {
      write: async (files) => {
        const staging = "staged_records";
        await stageRecords(scratch.connection, staging, request, progress, { rateStarts });
        progress.phase("writing");
        return writeStoredLoad(
          scratch.connection,
          `SELECT ${STAGING_COLUMNS.join(", ")} FROM ${staging}`,
          brandId,
          files,
          store.storedFileFormat,
          rolledUpTableOf(staging),
        );
      },
      close: () => scratch.close(),
    });
  } catch (error) {
    if (!(error instanceof RecordsNotClean)) throw error;
  }
  const { path, format, mapping } = request;
  const file = await readRecordsFile(path, {
    format,
    mapping,
    progress,
    rateStarts,
    ...(memoryMb ? { memoryMb } : {}),
  });
  return handOver(store, brandId, origin, onReplacing, {
    write: (files) => {
      progress.phase("writing");
      return file.exportLoad(brandId, files, store.storedFileFormat);
    },
    close: () => file.close(),
  });
}

/** A scratch DuckDB holding a checked load: `write` hands it over, `close` frees it (idempotent). */
interface CheckedScratch {
  write: (files: StoredLoadFiles) => Promise<StoredRows>;
  close: () => void;
}

/**
 * `scratch.write` puts the checked rows in the store's stored-records format
 * (`StoredRecordsFile`), then the store reads them itself. A Parquet file is written before the
 * store's transaction, and the scratch is closed before it starts, so that the two DuckDBs never
 * hold memory at once. CSV bytes are written by the scratch while PostgreSQL's `COPY` reads them
 * (copy-pipe.ts), so it is closed once the store is done: it holds its staged rows meanwhile,
 * within its memory limit, and the copy's side a chunk at a time.
 */
async function handOver(
  store: RecordLoads,
  brandId: string,
  origin: LoadOrigin,
  onReplacing: () => void,
  scratch: CheckedScratch,
): Promise<LoadSummary> {
  let directory: string | undefined;
  try {
    directory = await makeWorkDir("load");
    const files = {
      path: join(directory, `records.${store.storedFileFormat}`),
      rolledUpPath: join(directory, "rolled-up.csv"),
      recordIdsPath: join(directory, "record-ids.csv"),
    };
    const rows = await scratch.write(files);
    if ("path" in rows) scratch.close();
    const { rolledUpPath, recordIdsPath } = files;
    return await store.replaceRecordsFromStoredFile(
      brandId,
      { rows, rolledUpPath, recordIdsPath, onReplacing },
      origin,
    );
  } finally {
    scratch.close();
    if (directory !== undefined) await rm(directory, { recursive: true, force: true });
  }
}
