/**
 * The checkpoint of a sync: `<out>.checkpoint.json`, rewritten atomically (temporary file, fsync,
 * rename) after every page is safely in `<out>.partial`. It says how far the partial file is
 * good; anything past `offset` is a page whose checkpoint was never written, and is cut off.
 */
import { rm } from "node:fs/promises";
import { partialPath, readTextIfPresent, writeTextAtomically } from "../atomic-files.js";
import type { MarketingFilter } from "../types.js";

/** What a sync asks for. A checkpoint is resumed only by a sync asking for exactly the same. */
export interface SyncParameters {
  baseUrl: string;
  brandClientId: string;
  from: string;
  to: string;
  format: string;
  currency: string;
  pageSize: number;
  windowDays: number;
  filter: MarketingFilter | null;
  /** Present (true) for a CSV sync with `--raw-csv`: its cells are not neutralised. */
  rawCsv?: true;
  /** `FILE_SHAPE` of the partial file (record-formats.ts); absent in checkpoints of shape 1. */
  fileShape?: number;
}

/** A ≤ 90-day window already written in full. */
export interface CompletedWindow {
  from: string;
  to: string;
  rows: number;
  pages: number;
  dataVersion: string | null;
}

/** The state of a sync after its last complete page. */
export interface SyncCheckpoint {
  version: 1;
  parameters: SyncParameters;
  /** Windows written in full, in order. */
  completed: CompletedWindow[];
  /** The window being written (the next one after `completed`), or null when all are done. */
  current: {
    from: string;
    to: string;
    /** Byte length of the partial file when this window started: where a restart cuts back to. */
    startOffset: number;
    /** Pages of this window written: the next page to fetch is `page + 1`. */
    page: number;
    rows: number;
    /** The version of the window's data its pages were read from; null before its first page. */
    dataVersion: string | null;
  } | null;
  /** Rows in the partial file. */
  rows: number;
  /** Pages written, over every window. */
  pages: number;
  /** Byte length of the partial file after the last complete page. */
  offset: number;
  updatedAt: string;
}

/** Where a sync to `out` keeps its in-progress data and its checkpoint. */
export function syncPaths(out: string) {
  return {
    out,
    partial: `${out}.partial`,
    checkpoint: `${out}.checkpoint.json`,
    checkpointTemp: partialPath(`${out}.checkpoint.json`),
    converting: `${out}.converting`,
  };
}

/** The checkpoint at `path`, or null if there is none or it cannot be read as one. */
export async function readCheckpoint(path: string): Promise<SyncCheckpoint | null> {
  const text = await readTextIfPresent(path);
  if (text === undefined) return null;
  try {
    const checkpoint = JSON.parse(text) as SyncCheckpoint;
    return checkpoint.version === 1 && typeof checkpoint.offset === "number" ? checkpoint : null;
  } catch {
    return null;
  }
}

/** Whether two parameter sets ask for the same download (key order does not matter). */
export function sameParameters(a: SyncParameters, b: SyncParameters): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : inner,
  );
}

/** Writes the checkpoint so that a crash leaves either the previous one or this one, whole. */
export function writeCheckpoint(paths: ReturnType<typeof syncPaths>, checkpoint: SyncCheckpoint) {
  return writeTextAtomically(paths.checkpoint, `${JSON.stringify(checkpoint, null, 2)}\n`, 0o600);
}

/** Removes the checkpoint (after the output file is in place). */
export async function removeCheckpoint(paths: ReturnType<typeof syncPaths>) {
  await rm(paths.checkpoint, { force: true });
  await rm(paths.checkpointTemp, { force: true });
}
