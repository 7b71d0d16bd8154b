/**
 * `mirror`: a day-partitioned local copy of a brand's records kept exactly in sync (CONTRACT §6).
 *
 * Layout: `DIR/date=YYYY-MM-DD/records.<csv|ndjson|parquet>` (Hive partitions, rows ordered by
 * recordId) and the state in `DIR/_mdq_mirror.json` (mirror-state.ts): the service's
 * `dataVersion` after the last complete run, and for every day the mirror wrote, the day's version
 * and rows.
 *
 * A run asks `marketingDataChanges` twice per ≤ 366 days, both answered from the service's version
 * tables: since the stored version (to learn whether the caller's scope changed: then every day is
 * copied again) and with `since: null` (every day that has visible rows, with its current version).
 * A day is downloaded when the copy lacks it or holds another version or row count; a day the
 * state holds that the service no longer lists (emptied, or outside the range) is removed. Each
 * day's file is written to a partial file, fsynced and renamed over the old one (atomic-files.ts),
 * and the state is written (also by rename) after each batch of days, so a killed run leaves every
 * day either complete or untouched and the next run converges to the same bytes a fresh mirror
 * writes.
 *
 * The mirror distrusts the service and the directory: every answer is validated (dates inside the
 * range, each once) before any file is touched; every path is built from validated values and
 * checked to stay inside DIR (contained-paths.ts); only files the state says the mirror wrote are
 * ever removed; a first run into a non-empty directory that is not a mirror refuses unless
 * `force`, and a listing with no days for a mirror that holds rows refuses unless `allowEmpty`.
 */
import { createWriteStream } from "node:fs";
import { mkdir, open, readdir, rm, rmdir, stat } from "node:fs/promises";
import { finished } from "node:stream/promises";
import { replaceAtomically } from "./atomic-files.js";
import type { MdqClient } from "./client.js";
import { pathInside } from "./contained-paths.js";
import { toEpochDay } from "./date-windows.js";
import { MdqClientError } from "./errors.js";
import { MIRROR_STATE_FILE, type MirrorState, readMirrorState, writeMirrorState } from "./mirror-state.js";
import { spoolToParquet } from "./parquet-writer.js";
import { partialEncoding, SYNC_FORMATS, type SyncFormat } from "./record-formats.js";
import { compareRecordIds } from "./record-order.js";
import { acquireSyncLock } from "./sync-lock.js";
import type { ChangedDay, Currency, MarketingRecord } from "./types.js";

export { MIRROR_STATE_FILE } from "./mirror-state.js";

/** The lock file of a mirror directory. */
const LOCK_FILE = `${MIRROR_STATE_FILE}.lock`;
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
  /** CSV cells as sent; by default formula-like text cells get a leading `'` (record-formats.ts). */
  rawCsv?: boolean;
  /** Mirror into a non-empty directory that is not a mirror (its other files are left alone). */
  force?: boolean;
  /** Accept a listing with no days for a mirror that holds rows (removing every day it wrote). */
  allowEmpty?: boolean;
  /** Walk GraphQL pages instead of the bulk export (`--page-walk`); the files are the same. */
  pageWalk?: boolean;
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

/** The path of a day's file (or of another name in its folder), checked to stay inside `dir`. */
function dayPath(dir: string, date: string, name: string): string {
  return pathInside(dir, [`date=${date}`, name]);
}

/** Orders records as the files hold them: by recordId, in the service's byte order ("C" collation). */
function byRecordId(a: MarketingRecord, b: MarketingRecord): number {
  return compareRecordIds(a.recordId, b.recordId);
}

/**
 * Removes the files the mirror writes for a day in `format` (and their partial leftovers), then the
 * day's folder if that left it empty: never anything else.
 */
async function removeDayFiles(dir: string, date: string, format: SyncFormat): Promise<void> {
  const file = dayPath(dir, date, `records.${format}`);
  for (const path of [file, `${file}.partial`, `${file}.partial.ndjson.partial`]) {
    await rm(path, { force: true });
  }
  await rmdir(pathInside(dir, [`date=${date}`])).catch(() => undefined);
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
  rawCsv: boolean,
  rows: MarketingRecord[],
): Promise<number> {
  await mkdir(pathInside(dir, [`date=${date}`]), { recursive: true });
  const path = dayPath(dir, date, `records.${format}`);
  const encoding = partialEncoding(format, rawCsv);
  const text = `${encoding.header}${encoding.encode(rows)}`;
  await replaceAtomically(path, async (partial) => {
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

/** Refuses a first run into a directory that holds anything but the mirror's lock, unless `force`. */
async function checkFirstRun(dir: string, force: boolean): Promise<void> {
  const foreign = (await readdir(dir)).filter((name) => name !== LOCK_FILE);
  if (foreign.length === 0 || force) return;
  throw new MdqClientError(
    "MIRROR_REFUSED",
    `${dir} is not empty and holds no ${MIRROR_STATE_FILE} (it has ${foreign.slice(0, 3).join(", ")}${foreign.length > 3 ? ", ..." : ""}): ` +
      "use an empty or new --dir, or --force to mirror beside those files (they are never removed)",
  );
}

/**
 * Brings `options.dir` in line with the service: the first run downloads every day of the range,
 * later runs only the days that changed (CONTRACT §6, `mdq-client mirror`).
 * @example const summary = await mirror(client, { dir: "acme", from: "2026-01-01", to: "2026-11-22", format: "parquet" });
 */
export async function mirror(client: MdqClient, options: MirrorOptions): Promise<MirrorSummary> {
  // The first directory this run creates, if any: a run that fails with nothing written into it
  // leaves nothing on disk (issue 57).
  const created = await mkdir(options.dir, { recursive: true });
  try {
    return await mirrorInto(client, options);
  } catch (error) {
    if (created !== undefined && (await readdir(options.dir).catch(() => [null])).length === 0)
      await rm(created, { recursive: true, force: true });
    throw error;
  }
}

/** `mirror`, its directory made. */
async function mirrorInto(client: MdqClient, options: MirrorOptions): Promise<MirrorSummary> {
  const startedAt = Date.now();
  const { dir, from, to, format } = options;
  if (daysIn(from, to) < 1) {
    throw new MdqClientError("INVALID_DATE_RANGE", `the range ends (${to}) before it starts (${from})`);
  }
  if (!SYNC_FORMATS.includes(format)) {
    throw new MdqClientError(
      "INVALID_CONFIG",
      `format ${JSON.stringify(format)} is not one of ${SYNC_FORMATS.join(", ")}`,
    );
  }
  const rawCsv = options.rawCsv === true;
  const csvCells = format === "csv" && rawCsv ? "raw" : "neutralised";
  await mkdir(dir, { recursive: true });
  const release = await acquireSyncLock(pathInside(dir, [LOCK_FILE], "MIRROR_REFUSED"));
  try {
    const stored = await readMirrorState(dir);
    if (!stored) await checkFirstRun(dir, options.force === true);
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
    // Another currency, file format or CSV cell rule rewrites every file.
    const sameFiles =
      stored !== undefined &&
      stored.currency === currency &&
      stored.fileFormat === format &&
      (format !== "csv" || stored.csvCells === csvCells);
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
    // Validated (answer-validation.ts): every listed day is a calendar day of from..to, listed once.
    const now = await client.dataChanges({ from, to, since: null, signal: options.signal });
    const listed = new Map<string, ChangedDay>(now.days.map((day) => [day.date, day]));
    const heldRows = Object.values(stored?.days ?? {}).reduce((sum, day) => sum + day.rows, 0);
    if (listed.size === 0 && heldRows > 0 && options.allowEmpty !== true) {
      throw new MdqClientError(
        "MIRROR_REFUSED",
        `the service lists no days with data in ${from}..${to}, but ${dir} holds ${heldRows} rows: ` +
          "run again with --allow-empty to empty the mirror",
      );
    }

    const state: MirrorState = {
      format: 1,
      baseUrl: client.config.baseUrl,
      brandClientId: client.config.brandClientId,
      currency,
      fileFormat: format,
      csvCells,
      from,
      to,
      dataVersion: stored?.dataVersion ?? null,
      days: { ...stored?.days },
    };
    // A full copy rewrites every day: the days held stay the mirror's (to be removed if no longer
    // listed) but match no version, so an interrupted full copy is not taken for a current one.
    if (fullResync) {
      for (const [date, held] of Object.entries(state.days)) state.days[date] = { ...held, dataVersion: "" };
    }
    // Only days the state says the mirror wrote are ever removed.
    const toRemove = Object.keys(state.days)
      .filter((date) => !listed.has(date))
      .sort();
    const toDownload: string[] = [];
    for (const day of now.days) {
      const held = state.days[day.date];
      const current =
        held !== undefined &&
        held.dataVersion === day.dataVersion &&
        held.rows === day.rows &&
        (await fileExists(dayPath(dir, day.date, `records.${format}`)));
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
      await removeDayFiles(dir, date, stored!.fileFormat);
      delete state.days[date];
    }
    // Files of another format the mirror wrote before this run's --format.
    const otherFormat = stored !== undefined && stored.fileFormat !== format;
    if (otherFormat) {
      for (const date of Object.keys(state.days)) {
        await removeDayFiles(dir, date, stored.fileFormat);
        delete state.days[date];
      }
    }
    if (toRemove.length > 0 || otherFormat) await writeMirrorState(dir, state);

    let rows = 0;
    let bytes = 0;
    let done = 0;
    for (const run of consecutiveRuns(toDownload)) {
      const byDate = new Map<string, MarketingRecord[]>(run.dates.map((date) => [date, []]));
      for await (const page of client.syncPages({
        from: run.from,
        to: run.to,
        ...(options.currency === undefined ? {} : { currency: options.currency }),
        pageWalk: options.pageWalk === true,
        ...(options.signal ? { signal: options.signal } : {}),
      })) {
        for (const record of page.rows) byDate.get(record.date)?.push(record);
      }
      // The batch's answers are validated: record its days as the mirror's (pending: no version)
      // before their files are written, so that a run killed meanwhile leaves files the state
      // names, which the next run rewrites or removes.
      for (const date of run.dates) state.days[date] ??= { dataVersion: "", rows: 0 };
      await writeMirrorState(dir, state);
      for (const date of run.dates) {
        const dayRows = byDate.get(date)!.sort(byRecordId);
        if (dayRows.length === 0) {
          // Emptied since it was listed: the next run will not list it either.
          await removeDayFiles(dir, date, format);
          delete state.days[date];
        } else {
          bytes += await writeDay(dir, date, format, rawCsv, dayRows);
          state.days[date] = { dataVersion: listed.get(date)!.dataVersion, rows: dayRows.length };
        }
        rows += dayRows.length;
        done += 1;
        options.onProgress?.({ type: "day", date, rows: dayRows.length, done, of: toDownload.length });
      }
      await writeMirrorState(dir, state);
    }
    state.dataVersion = now.dataVersion;
    await writeMirrorState(dir, state);
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
