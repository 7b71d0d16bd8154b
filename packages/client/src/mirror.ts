/**
 * `mirror`: a day-partitioned local copy of a brand's records kept exactly in sync (CONTRACT §6).
 *
 * Layout: `DIR/date=YYYY-MM-DD/records.<csv|ndjson|parquet>` (Hive partitions, rows ordered by
 * recordId) and the state in `DIR/_mdq_mirror.json`: the service's `dataVersion` after the last
 * complete run, and for every day held, the day's version and rows.
 *
 * A run asks `marketingDataChanges` twice per ≤ 366 days, both answered from the service's version
 * tables: since the stored version (to learn whether the caller's scope changed: then every day is
 * copied again) and with `since: null` (every day that has visible rows, with its current version).
 * A day is downloaded when the copy lacks it or holds another version or row count; a day folder
 * that the service no longer lists (emptied, or outside the range) is removed. Each day's file is
 * written to a hidden partial file, fsynced and renamed over the old one, and the state is written
 * (also by rename) after each batch of days, so a killed run leaves every day either complete or
 * untouched and the next run converges to the same bytes a fresh mirror writes.
 */
import { createWriteStream } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { finished } from "node:stream/promises";
import { spoolToParquet } from "./cli/parquet-writer.js";
import { csvEncoding, ndjsonEncoding, type SyncFormat } from "./cli/record-formats.js";
import { acquireSyncLock } from "./cli/sync-lock.js";
import type { MdqClient } from "./client.js";
import { toEpochDay } from "./date-windows.js";
import { MdqClientError } from "./errors.js";
import type { ChangedDay, Currency, MarketingRecord } from "./types.js";

/** The state file's name inside the mirror directory. */
export const MIRROR_STATE_FILE = "_mdq_mirror.json";
const STATE_FORMAT = 1;
/**
 * Days downloaded per walk of consecutive days: the state is written after each, so an
 * interrupted run keeps what the finished walks wrote. 30 days is one request window's work at
 * most and keeps a batch's rows in memory small.
 */
const BATCH_DAYS = 30;

/** What to mirror, and where. */
export interface MirrorOptions {
  dir: string;
  from: string;
  to: string;
  /** Currency of spend and revenue; the service's default (EUR) when omitted. */
  currency?: Currency;
  format: SyncFormat;
  signal?: AbortSignal;
  /** Told what the run does (progress lines). */
  onProgress?: (event: MirrorProgress) => void;
}

/** What a run is doing. */
export type MirrorProgress =
  | {
      type: "plan";
      daysChecked: number;
      toDownload: number;
      toRemove: number;
      fullResync: boolean;
      reason?: string;
    }
  | { type: "day"; date: string; rows: number; done: number; of: number };

/** What a run did: the `--json` summary (CONTRACT §6). */
export interface MirrorSummary {
  daysChecked: number;
  daysDownloaded: number;
  rows: number;
  bytes: number;
  seconds: number;
  dataVersion: string;
  fullResync: boolean;
}

interface HeldDay {
  dataVersion: string;
  rows: number;
}

interface MirrorState {
  format: number;
  baseUrl: string;
  brandClientId: string;
  currency: string;
  fileFormat: SyncFormat;
  from: string;
  to: string;
  /** After the last complete run; null until one completed. */
  dataVersion: string | null;
  days: Record<string, HeldDay>;
}

const DAY_FOLDER = /^date=(\d{4}-\d{2}-\d{2})$/;

function dayFolder(dir: string, date: string): string {
  return join(dir, `date=${date}`);
}

/** Orders records as the files hold them: by recordId, in the service's byte order ("C" collation). */
function byRecordId(a: MarketingRecord, b: MarketingRecord): number {
  return Buffer.compare(Buffer.from(a.recordId), Buffer.from(b.recordId));
}

async function readState(dir: string): Promise<MirrorState | undefined> {
  try {
    const state = JSON.parse(await readFile(join(dir, MIRROR_STATE_FILE), "utf8")) as MirrorState;
    return state.format === STATE_FORMAT && typeof state.days === "object" ? state : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" || error instanceof SyntaxError) return undefined;
    throw error;
  }
}

/** Writes `text` to `path` atomically: a partial file beside it, fsynced, renamed over it. */
async function writeAtomically(path: string, write: (partial: string) => Promise<void>): Promise<void> {
  const partial = `${path}.partial`;
  await write(partial);
  const handle = await open(partial, "r+");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(partial, path);
}

async function writeState(dir: string, state: MirrorState): Promise<void> {
  await writeAtomically(join(dir, MIRROR_STATE_FILE), async (partial) => {
    const handle = await open(partial, "w", 0o644);
    try {
      await handle.writeFile(`${JSON.stringify(state, null, 2)}\n`);
    } finally {
      await handle.close();
    }
  });
}

/** The day folders present in the mirror directory, and leftovers of an interrupted run removed. */
async function heldFolders(dir: string): Promise<Set<string>> {
  const dates = new Set<string>();
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const match = DAY_FOLDER.exec(entry.name);
    if (!entry.isDirectory() || !match) continue;
    dates.add(match[1]!);
    for (const file of await readdir(join(dir, entry.name))) {
      if (file.endsWith(".partial")) await rm(join(dir, entry.name, file), { force: true });
    }
  }
  return dates;
}

async function fileExists(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** Writes one day's file (rows already ordered) atomically; returns its size in bytes. */
async function writeDay(
  dir: string,
  date: string,
  format: SyncFormat,
  rows: MarketingRecord[],
): Promise<number> {
  const folder = dayFolder(dir, date);
  await mkdir(folder, { recursive: true });
  const path = join(folder, `records.${format}`);
  const encoding = format === "csv" ? csvEncoding : ndjsonEncoding;
  const text = `${encoding.header}${encoding.encode(rows)}`;
  await writeAtomically(path, async (partial) => {
    if (format !== "parquet") {
      const handle = await open(partial, "w", 0o644);
      try {
        await handle.writeFile(text);
      } finally {
        await handle.close();
      }
      return;
    }
    const spool = `${partial}.ndjson.partial`;
    const stream = createWriteStream(spool, { mode: 0o600 });
    stream.end(text);
    await finished(stream);
    try {
      await spoolToParquet(spool, partial);
    } finally {
      await rm(spool, { force: true });
    }
  });
  return (await stat(path)).size;
}

/** Groups dates (ascending) into runs of consecutive days, each at most `BATCH_DAYS` long. */
function consecutiveRuns(dates: string[]): { from: string; to: string; dates: string[] }[] {
  const runs: { from: string; to: string; dates: string[] }[] = [];
  for (const date of dates) {
    const run = runs.at(-1);
    if (run && toEpochDay(date) === toEpochDay(run.to) + 1 && run.dates.length < BATCH_DAYS) {
      run.to = date;
      run.dates.push(date);
    } else {
      runs.push({ from: date, to: date, dates: [date] });
    }
  }
  return runs;
}

/** Every day of `from..to`. */
function daysIn(from: string, to: string): number {
  return toEpochDay(to) - toEpochDay(from) + 1;
}

/**
 * Brings `options.dir` in line with the service: the first run downloads every day of the range,
 * later runs only the days that changed (CONTRACT §6, `mdq-client mirror`).
 * @example const summary = await mirror(client, { dir: "acme", from: "2026-01-01", to: "2026-11-22", format: "parquet" });
 */
export async function mirror(client: MdqClient, options: MirrorOptions): Promise<MirrorSummary> {
  const startedAt = Date.now();
  const { dir, from, to, format } = options;
  if (daysIn(from, to) < 1) {
    throw new MdqClientError("INVALID_DATE_RANGE", `the range ends (${to}) before it starts (${from})`);
  }
  await mkdir(dir, { recursive: true });
  const release = await acquireSyncLock(join(dir, `${MIRROR_STATE_FILE}.lock`));
  try {
    const stored = await readState(dir);
    const currency = options.currency ?? "EUR";
    if (
      stored &&
      (stored.baseUrl !== client.config.baseUrl || stored.brandClientId !== client.config.brandClientId)
    ) {
      throw new MdqClientError(
        "INVALID_CONFIG",
        `${dir} mirrors brand ${stored.brandClientId} of ${stored.baseUrl}; use another --dir for brand ${client.config.brandClientId} of ${client.config.baseUrl}`,
      );
    }
    // Another currency or file format rewrites every file.
    const sameFiles = stored !== undefined && stored.currency === currency && stored.fileFormat === format;
    let scopeChange: string | null = null;
    if (sameFiles && stored.dataVersion !== null) {
      try {
        const since = await client.dataChanges({
          from,
          to,
          since: stored.dataVersion,
          signal: options.signal,
        });
        if (since.fullResyncRequired) scopeChange = since.reason ?? "the credentials' scope changed";
      } catch (error) {
        if (!(error instanceof MdqClientError && error.code === "INVALID_DATA_VERSION")) throw error;
        scopeChange = "the stored data version is not one this service issued";
      }
    }
    const fullResync = !sameFiles || scopeChange !== null;
    const now = await client.dataChanges({ from, to, since: null, signal: options.signal });
    const listed = new Map<string, ChangedDay>(now.days.map((day) => [day.date, day]));

    const state: MirrorState = {
      format: STATE_FORMAT,
      baseUrl: client.config.baseUrl,
      brandClientId: client.config.brandClientId,
      currency,
      fileFormat: format,
      from,
      to,
      dataVersion: stored?.dataVersion ?? null,
      days: fullResync ? {} : { ...stored?.days },
    };
    const folders = await heldFolders(dir);
    const toRemove = [...folders].filter((date) => !listed.has(date)).sort();
    const toDownload: string[] = [];
    for (const day of now.days) {
      const held = state.days[day.date];
      const current =
        held !== undefined &&
        held.dataVersion === day.dataVersion &&
        held.rows === day.rows &&
        (await fileExists(join(dayFolder(dir, day.date), `records.${format}`)));
      if (!current) toDownload.push(day.date);
    }
    options.onProgress?.({
      type: "plan",
      daysChecked: daysIn(from, to),
      toDownload: toDownload.length,
      toRemove: toRemove.length,
      fullResync,
      ...(scopeChange === null ? {} : { reason: scopeChange }),
    });

    for (const date of toRemove) {
      await rm(dayFolder(dir, date), { recursive: true, force: true });
      delete state.days[date];
    }
    // Files of another format left by an earlier run with another --format.
    if (!sameFiles) {
      for (const date of listed.keys()) {
        for (const other of ["csv", "ndjson", "parquet"].filter((ext) => ext !== format)) {
          await rm(join(dayFolder(dir, date), `records.${other}`), { force: true });
        }
      }
    }
    if (toRemove.length > 0 || fullResync) await writeState(dir, state);

    let rows = 0;
    let bytes = 0;
    let done = 0;
    for (const run of consecutiveRuns(toDownload)) {
      const byDate = new Map<string, MarketingRecord[]>(run.dates.map((date) => [date, []]));
      for await (const page of client.recordPages({
        from: run.from,
        to: run.to,
        ...(options.currency === undefined ? {} : { currency: options.currency }),
        sort: [{ field: "DATE_DAY", direction: "ASC" }],
        ...(options.signal ? { signal: options.signal } : {}),
      })) {
        for (const record of page.rows) byDate.get(record.date)?.push(record);
      }
      for (const date of run.dates) {
        const dayRows = byDate.get(date)!.sort(byRecordId);
        if (dayRows.length === 0) {
          // Emptied since it was listed: the next run will not list it either.
          await rm(dayFolder(dir, date), { recursive: true, force: true });
          delete state.days[date];
        } else {
          bytes += await writeDay(dir, date, format, dayRows);
          state.days[date] = { dataVersion: listed.get(date)!.dataVersion, rows: dayRows.length };
        }
        rows += dayRows.length;
        done += 1;
        options.onProgress?.({ type: "day", date, rows: dayRows.length, done, of: toDownload.length });
      }
      await writeState(dir, state);
    }
    // Held days the listing no longer names were removed above; days outside the range too.
    for (const date of Object.keys(state.days)) if (!listed.has(date)) delete state.days[date];
    state.dataVersion = now.dataVersion;
    await writeState(dir, state);
    return {
      daysChecked: daysIn(from, to),
      daysDownloaded: toDownload.length,
      rows,
      bytes,
      seconds: Math.round((Date.now() - startedAt) / 100) / 10,
      dataVersion: now.dataVersion,
      fullResync,
    };
  } finally {
    await release();
  }
}
