/**
 * The plan of `syncPages()`: every record of a range, oldest day first and by recordId within a
 * day, each window one bulk export (export-pages.ts); a service without the export (404) is
 * walked instead (operations/records.ts), from the window that found it missing, and so is every
 * range when `pageWalk` is set.
 */
import { MAX_PAGE_SIZE, MIN_PAGE_SIZE } from "@mdq/contract";
import { MdqClientError } from "../errors.js";
import { exportPages, isExportMissing } from "../export-pages.js";
import type { ExportAccess } from "../record-export.js";
import type { MarketingRecord, MdqClientEvent, Page, RecordsOptions, SyncPagesOptions } from "../types.js";
import { DEFAULT_RECORD_SORT } from "./records.js";
import { type PlanContext, walkSettings, windowsOf } from "./walk-settings.js";

/** What a sync needs of the client, and whether the service has the export (false after a 404). */
export interface SyncSource extends PlanContext {
  exportAccess: ExportAccess;
  exportAvailable: boolean;
  onEvent: ((event: MdqClientEvent) => void) | undefined;
  recordPages(options: RecordsOptions): AsyncGenerator<Page<MarketingRecord>>;
}

/** The pages of `options`' records, by export while the service has it, else by page walk. */
export async function* syncPages(
  source: SyncSource,
  options: SyncPagesOptions,
): AsyncGenerator<Page<MarketingRecord>> {
  let from = options.from;
  if (options.pageWalk !== true && source.exportAvailable) {
    const windows = windowsOf(options, "day", false);
    const { pageSize, limits } = walkSettings(source, options, windows);
    if (pageSize < MIN_PAGE_SIZE || pageSize > MAX_PAGE_SIZE) {
      limits.close();
      throw new MdqClientError("INVALID_CONFIG", `pageSize must be ${MIN_PAGE_SIZE}..${MAX_PAGE_SIZE}`);
    }
    let nextWindow = 0;
    try {
      for await (const page of exportPages(source.exportAccess, {
        windows,
        pageSize,
        limits,
        ...(options.currency === undefined ? {} : { currency: options.currency }),
        ...(options.filter === undefined ? {} : { filter: options.filter }),
      })) {
        if (page.lastInWindow) nextWindow = page.windowIndex + 1;
        yield page;
      }
      return;
    } catch (error) {
      if (!isExportMissing(error)) throw error;
      source.exportAvailable = false;
      from = windows[nextWindow]!.from;
      source.onEvent?.({ type: "export-unavailable", from });
    }
  }
  yield* source.recordPages({ ...options, from, sort: DEFAULT_RECORD_SORT });
}
