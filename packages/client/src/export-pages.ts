/**
 * Window pages read through the bulk export (CONTRACT §7): what `sync` and `mirror` download. One
 * export per window instead of a page walk: a body reads one snapshot, so a load landing while it
 * streams cannot tear the window; a connection that breaks is resumed `after=` the last whole row
 * with the same data version, and when that version is gone (409 DATA_VERSION_GONE) the window
 * is read again from its start, as a page walk restarts a window that met a load.
 *
 * The answer is distrusted as a page is (answer-validation.ts): every row is a whole record of
 * its types with its date inside the window, rows are strictly ascending by (date, recordId), they
 * add up to `MDQ-Row-Count`, which is itself no more than the walk's request limit could read, and
 * the body takes no more bytes per row than a page answer may. Each request counts against the
 * walk's limits (run-limits.ts). A window is handed over only once whole, cut into pages of
 * `pageSize` rows (the unit `sync` checkpoints), so a window's rows are exactly the page walk's.
 */
import { MAX_PAGE_SIZE } from "@mdq/contract";
import { exportRowsCheck } from "./answer-validation.js";
import type { DateWindow } from "./date-windows.js";
import { MdqClientError } from "./errors.js";
import { MAX_WINDOW_RESTARTS, prefetchedWindows } from "./page-walk.js";
import { type ExportAccess, type ExportOptions, exportBatches } from "./record-export.js";
import type { RunLimits } from "./run-limits.js";
import type { MarketingRecord, Page } from "./types.js";

/** One download of windows through the export. */
export interface ExportPlan {
  windows: DateWindow[];
  /** Rows per handed-over page. */
  pageSize: number;
  /** The walk's request count and deadline; its signal is the walk's. */
  limits: RunLimits;
  currency?: ExportOptions["currency"];
  filter?: ExportOptions["filter"];
}

/** Whether `error` says the service has no export route (an MDQ from before CONTRACT §7). */
export function isExportMissing(error: unknown): boolean {
  return error instanceof MdqClientError && error.status === 404;
}

/**
 * Every window's pages, oldest window first; the next window is exported while the current one is
 * being consumed. Throws what the first failing window throws (404 when the service has no
 * export: see `isExportMissing`) before any page of that window is handed over.
 * @example for await (const page of exportPages(access, plan)) write(page.rows);
 */
export function exportPages(access: ExportAccess, plan: ExportPlan): AsyncGenerator<Page<MarketingRecord>> {
  return prefetchedWindows(plan.limits, plan.windows.length, (index, signal) =>
    exportWindow(access, plan, index, signal),
  );
}

/** One window, whole and from one data version: read again from its start when a resume finds the version gone. */
async function exportWindow(
  access: ExportAccess,
  plan: ExportPlan,
  index: number,
  signal: AbortSignal,
): Promise<Page<MarketingRecord>[]> {
  const window = plan.windows[index]!;
  const options: ExportOptions = {
    ...window,
    signal,
    ...(plan.currency === undefined ? {} : { currency: plan.currency }),
    ...(plan.filter === undefined ? {} : { filter: plan.filter }),
  };
  const check = exportRowsCheck(window);
  const maxRows = plan.limits.maxRequests * MAX_PAGE_SIZE;
  for (let restarts = 0; ; restarts += 1) {
    const rows: MarketingRecord[] = [];
    let dataVersion = "";
    try {
      for await (const batch of exportBatches(access, options, {
        onRequest: (resume) =>
          plan.limits.spend(`the export of ${window.from}..${window.to}${resume ? " (resumed)" : ""}`),
        maxBytes: (rowCount) => {
          if (rowCount > maxRows) {
            throw new MdqClientError(
              "SERVER_ANSWER_INVALID",
              `the export of ${window.from}..${window.to} announces ${rowCount} rows, more than the ${maxRows} this range's requests could read`,
            );
          }
          return access.retry.maxBodyBytes * Math.max(1, Math.ceil(rowCount / MAX_PAGE_SIZE));
        },
        check,
      })) {
        dataVersion = batch.dataVersion;
        for (const record of batch.records) rows.push(record);
      }
      return pagesOf(access, plan, index, rows, dataVersion);
    } catch (error) {
      if (!(error instanceof MdqClientError && error.code === "DATA_VERSION_GONE")) throw error;
      if (restarts >= MAX_WINDOW_RESTARTS) {
        throw new MdqClientError(
          "DATA_CHANGED",
          `the data of ${window.from}..${window.to} changed on each of ${restarts + 1} tries (${error.message})`,
        );
      }
      access.onEvent?.({ type: "window-restart", window, reason: error.message });
    }
  }
}

/** A whole window's rows as pages of `pageSize` (one empty page for an empty window), told to `onEvent`. */
function pagesOf(
  access: ExportAccess,
  plan: ExportPlan,
  index: number,
  rows: MarketingRecord[],
  dataVersion: string,
): Page<MarketingRecord>[] {
  const window = plan.windows[index]!;
  const pages: Page<MarketingRecord>[] = [];
  for (let start = 0, page = 1; start < rows.length || page === 1; start += plan.pageSize, page += 1) {
    const hasNextPage = start + plan.pageSize < rows.length;
    const pageRows = rows.slice(start, start + plan.pageSize);
    access.onEvent?.({ type: "page", window, page, rows: pageRows.length, totalCount: rows.length });
    pages.push({
      window,
      windowIndex: index,
      windowCount: plan.windows.length,
      pageInfo: { page, pageSize: plan.pageSize, totalCount: rows.length, hasNextPage, dataVersion },
      rows: pageRows,
      lastInWindow: !hasNextPage,
    });
  }
  return pages;
}
