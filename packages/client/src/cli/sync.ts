/**
 * `mdq-client sync`: every record of a date range into one file, exactly once, atomically, and
 * resumable.
 *
 * - Records are asked for by day, oldest first, ties by recordId (a stable order), in windows
 *   of `windowDays` days. The SDK hands over a window's pages only once the whole window was read
 *   from one `dataVersion`, so what reaches the file is never torn by a reload.
 * - Pages are appended to `<out>.partial`. After each page, the partial file is fsynced and the
 *   checkpoint (checkpoint.ts) records how far it is good: its byte length, the windows done,
 *   and the window in progress with its page, rows, start offset and `dataVersion`.
 * - A run that finds a checkpoint for the same parameters cuts the partial file back to the
 *   recorded length and goes on from the window in progress. That window is read again (the SDK
 *   reads windows whole); if its `dataVersion` is unchanged, pages already written are skipped,
 *   so the file ends byte-identical to an uninterrupted run's. If the data was reloaded
 *   meanwhile, the file is cut back to the window's start and the window is written afresh.
 * - At the end the partial file is fsynced and renamed to `<out>` (Parquet: converted first),
 *   and the checkpoint removed. `<out>` is therefore either the previous complete file or the new one.
 */
import { open, rename, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { syncDirectory } from "../atomic-files.js";
import type { MdqClient } from "../client.js";
import { splitDateRange, toEpochDay } from "../date-windows.js";
import { spoolToParquet } from "../parquet-writer.js";
import { partialEncoding, type SyncFormat } from "../record-formats.js";
import { acquireSyncLock } from "../sync-lock.js";
import type { MarketingFilter, MdqClientEvent } from "../types.js";
import {
  type CompletedWindow,
  readCheckpoint,
  removeCheckpoint,
  type SyncCheckpoint,
  type SyncParameters,
  sameParameters,
  syncPaths,
  writeCheckpoint,
} from "./checkpoint.js";
import { count, duration, type ProgressReporter, type ProgressSnapshot } from "./progress.js";

/** What to download, and how. */
export interface SyncOptions {
  from: string;
  to: string;
  out: string;
  format: SyncFormat;
  /** Currency of spend and revenue; the service's default (EUR) when omitted. */
  currency?: string;
  filter: MarketingFilter | null;
  /** Rows per request, 1000..5000. */
  pageSize: number;
  /** Days per window, 1..90: the unit the SDK reads consistently and a resume reads again. */
  windowDays: number;
  /** Requests in flight within a window. */
  concurrency: number;
  /** CSV cells as sent (`--raw-csv`); by default formula-like text cells get a leading `'`. */
  rawCsv?: boolean;
  /** Walk GraphQL pages instead of the bulk export (`--page-walk`); the file is the same. */
  pageWalk?: boolean;
  signal?: AbortSignal;
}

/** What a finished sync did. */
export interface SyncResult {
  out: string;
  rows: number;
  pages: number;
  windows: number;
  /** Rows that were already in the partial file from an interrupted run. */
  resumedRows: number;
  seconds: number;
}

/** Days in the inclusive range. */
function daysIn(window: { from: string; to: string }): number {
  return toEpochDay(window.to) - toEpochDay(window.from) + 1;
}

/** Tells progress what the SDK is doing: totals of windows as they are read, waits and restarts. */
export function syncEventHandler(progress: ProgressReporter, totals: Map<string, number>) {
  return (event: MdqClientEvent) => {
    switch (event.type) {
      case "page":
        if (event.page === 1) totals.set(event.window.from, event.totalCount);
        break;
      case "rate-limited":
        progress.note(`rate limited; waiting ${event.retryAfterSeconds} s as the service asks`);
        break;
      case "retry":
        progress.note(
          `request failed (${event.status ?? event.reason}); attempt ${event.attempt + 1} in ${duration(event.delayMs / 1000)}`,
        );
        break;
      case "window-repair":
        progress.note(
          `the data of ${event.window.from}..${event.window.to} changed while it was read; read again only ${event.days.length} day(s) it changed`,
        );
        break;
      case "export-unavailable":
        progress.note(`the service has no bulk export (HTTP 404); walking GraphQL pages from ${event.from}`);
        break;
      case "window-restart":
        progress.note(
          `the data of ${event.window.from}..${event.window.to} changed while it was read; reading it again`,
        );
        break;
      default:
        break;
    }
  };
}

/**
 * Downloads every record of `options.from..to` into `options.out`, resuming from a checkpoint.
 * `totals` is filled by {@link syncEventHandler} (installed as the client's `onEvent`).
 */
export async function runSync(
  client: MdqClient,
  options: SyncOptions,
  progress: ProgressReporter,
  totals: Map<string, number> = new Map(),
): Promise<SyncResult> {
  const startedAt = Date.now();
  const paths = syncPaths(options.out);
  const encoding = partialEncoding(options.format, options.rawCsv === true);
  const parameters: SyncParameters = {
    baseUrl: client.config.baseUrl,
    brandClientId: client.config.brandClientId,
    from: options.from,
    to: options.to,
    format: options.format,
    currency: options.currency ?? "EUR",
    pageSize: options.pageSize,
    windowDays: options.windowDays,
    filter: options.filter,
    ...(options.format === "csv" && options.rawCsv ? { rawCsv: true } : {}),
  };
  const windows = splitDateRange(options.from, options.to, { maxDays: options.windowDays });
  const release = await acquireSyncLock(`${options.out}.lock`);
  try {
    let checkpoint = await resumable(paths, parameters, progress);
    /** A run with nothing to resume: should it fail before its first page, it leaves nothing. */
    const fresh = checkpoint === null;
    const file = await open(paths.partial, checkpoint ? "r+" : "w");
    try {
      if (checkpoint) {
        await file.truncate(checkpoint.offset);
        progress.note(
          `resuming ${paths.partial}: ${count(checkpoint.rows)} rows in ${count(checkpoint.pages)} pages ` +
            `already written (${checkpoint.completed.length}/${windows.length} windows complete)`,
        );
      } else {
        const header = Buffer.from(encoding.header);
        if (header.length > 0) await file.write(header, 0, header.length, 0);
        await file.sync();
        checkpoint = {
          version: 1,
          parameters,
          completed: [],
          current: null,
          rows: 0,
          pages: 0,
          offset: header.length,
          updatedAt: new Date().toISOString(),
        };
        await writeCheckpoint(paths, checkpoint);
      }
      const state = checkpoint;
      const resumedRows = state.rows;
      for (const done of state.completed) totals.set(done.from, done.rows);
      const snapshot = (): ProgressSnapshot => {
        const known = windows.filter((window) => totals.has(window.from));
        const knownRows = known.reduce((sum, window) => sum + totals.get(window.from)!, 0);
        const knownDays = known.reduce((sum, window) => sum + daysIn(window), 0);
        const unknownDays = windows.reduce((sum, window) => sum + daysIn(window), 0) - knownDays;
        const perDay = knownDays > 0 ? knownRows / knownDays : 0;
        return {
          rows: state.rows,
          pages: state.pages,
          totalRows: Math.max(state.rows, knownRows + Math.round(unknownDays * perDay)),
          totalExact: unknownDays === 0,
          window: Math.min(windows.length, state.completed.length + 1),
          windows: windows.length,
          resumedRows,
          startedAt,
        };
      };

      const next = windows[state.completed.length];
      if (next) {
        const pages = client.syncPages({
          from: next.from,
          to: options.to,
          windowDays: options.windowDays,
          pageSize: options.pageSize,
          concurrency: options.concurrency,
          pageWalk: options.pageWalk === true,
          ...(options.currency === undefined ? {} : { currency: options.currency }),
          ...(options.filter === null ? {} : { filter: options.filter }),
          ...(options.signal ? { signal: options.signal } : {}),
        });
        for await (const page of pages) {
          const { dataVersion, page: number } = page.pageInfo;
          let current = state.current;
          if (current && current.from === page.window.from) {
            if (current.dataVersion !== null && current.dataVersion !== dataVersion) {
              progress.note(
                `the data of ${current.from}..${current.to} was reloaded since the interrupted run; writing it again`,
              );
              await file.truncate(current.startOffset);
              state.offset = current.startOffset;
              state.rows -= current.rows;
              state.pages -= current.page;
              current = { ...current, page: 0, rows: 0, dataVersion };
            }
            if (number <= current.page) continue;
          } else {
            current = {
              from: page.window.from,
              to: page.window.to,
              startOffset: state.offset,
              page: 0,
              rows: 0,
              dataVersion,
            };
          }
          const bytes = Buffer.from(encoding.encode(page.rows));
          if (bytes.length > 0) await file.write(bytes, 0, bytes.length, state.offset);
          await file.sync();
          state.offset += bytes.length;
          state.rows += page.rows.length;
          state.pages += 1;
          current = { ...current, page: number, rows: current.rows + page.rows.length, dataVersion };
          if (page.lastInWindow) {
            const done: CompletedWindow = {
              from: current.from,
              to: current.to,
              rows: current.rows,
              pages: current.page,
              dataVersion,
            };
            state.completed.push(done);
            state.current = null;
            totals.set(done.from, done.rows);
          } else {
            state.current = current;
          }
          state.updatedAt = new Date().toISOString();
          await writeCheckpoint(paths, state);
          if (page.lastInWindow) {
            progress.windowDone({ ...snapshot(), window: state.completed.length }, state.completed.at(-1)!);
          } else {
            progress.update(snapshot());
          }
        }
      }
      if (state.completed.length !== windows.length) {
        throw new Error(
          `the download ended after ${state.completed.length} of ${windows.length} windows; run it again to resume`,
        );
      }
      await file.sync();
      await file.close().catch(() => undefined);
      await finish(paths, options.format, progress);
      const seconds = (Date.now() - startedAt) / 1000;
      const fetched = state.rows - resumedRows;
      progress.done(
        snapshot(),
        `wrote ${count(state.rows)} rows (${count(state.pages)} pages, ${windows.length} windows) to ${options.out} ` +
          `in ${duration(seconds)}${seconds > 0 ? ` (${count(fetched / seconds)} rows/s)` : ""}`,
      );
      return {
        out: options.out,
        rows: state.rows,
        pages: state.pages,
        windows: windows.length,
        resumedRows,
        seconds,
      };
    } catch (error) {
      if (fresh && (checkpoint?.pages ?? 0) === 0) {
        await file.close().catch(() => undefined);
        await rm(paths.partial, { force: true });
        await removeCheckpoint(paths);
      }
      throw error;
    } finally {
      await file.close().catch(() => undefined);
    }
  } finally {
    await release();
  }
}

/** The checkpoint to resume from, or null to start afresh (none, other parameters, or a short file). */
async function resumable(
  paths: ReturnType<typeof syncPaths>,
  parameters: SyncParameters,
  progress: ProgressReporter,
): Promise<SyncCheckpoint | null> {
  const checkpoint = await readCheckpoint(paths.checkpoint);
  if (!checkpoint) return null;
  if (!sameParameters(checkpoint.parameters, parameters)) {
    progress.note(`${paths.checkpoint} is for another sync (other range, format or filter); starting afresh`);
    return null;
  }
  const size = await stat(paths.partial).then(
    (info) => info.size,
    () => -1,
  );
  if (size < checkpoint.offset) {
    progress.note(`${paths.partial} is shorter than its checkpoint says; starting afresh`);
    return null;
  }
  return checkpoint;
}

/** Puts the finished file in place: convert (Parquet) or rename, then drop the checkpoint. */
async function finish(paths: ReturnType<typeof syncPaths>, format: SyncFormat, progress: ProgressReporter) {
  if (format === "parquet") {
    progress.note(`converting ${paths.partial} to Parquet`);
    await spoolToParquet(paths.partial, paths.converting);
    await rename(paths.converting, paths.out);
    await rm(paths.partial, { force: true });
  } else {
    await rename(paths.partial, paths.out);
  }
  await syncDirectory(dirname(paths.out));
  await removeCheckpoint(paths);
}
