/**
 * What every walk's plan (operations/records.ts, aggregate.ts, sync.ts) is set up with: the
 * client's brand and limits, the variables every query shares, the windows of the range, and the
 * page settings and limits of one walk.
 */
import { inclusiveDayCount, MAX_PAGE_SIZE } from "@mdq/contract";
import { type DateWindow, MAX_WINDOW_DAYS, splitDateRange, type WindowAlignment } from "../date-windows.js";
import { MdqClientError } from "../errors.js";
import { type RunLimitSettings, RunLimits } from "../run-limits.js";
import type { AggregateOptions, RecordField, RecordsOptions } from "../types.js";
import type { WalkPlan } from "../walk-types.js";

/** The largest page the service allows: the fewest requests. */
const DEFAULT_PAGE_SIZE = MAX_PAGE_SIZE;
const DEFAULT_CONCURRENCY = 2;

/** What a plan needs of the client: whose data it reads, and how much a walk may do. */
export interface PlanContext {
  brandClientId: string;
  runLimits: RunLimitSettings;
}

/** The variables of every records or aggregate query: the brand, currency, filter and sort. */
export function commonVariables(
  context: PlanContext,
  options: AggregateOptions | RecordsOptions<RecordField>,
  sort: unknown[] | undefined,
): Record<string, unknown> {
  return {
    clientId: context.brandClientId,
    ...(options.currency === undefined ? {} : { currency: options.currency }),
    ...(options.filter === undefined ? {} : { filter: options.filter }),
    ...(sort === undefined || sort.length === 0 ? {} : { sort }),
  };
}

/** The windows, page settings and limits of one walk over `windows`. */
export function walkSettings(
  context: PlanContext,
  options: { pageSize?: number; concurrency?: number; signal?: AbortSignal },
  windows: DateWindow[],
): Pick<WalkPlan<unknown>, "windows" | "pageSize" | "concurrency" | "limits"> {
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(pageSize)) throw new MdqClientError("INVALID_CONFIG", "pageSize must be an integer");
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new MdqClientError("INVALID_CONFIG", "concurrency must be a positive integer");
  }
  const days = windows.reduce((sum, window) => sum + inclusiveDayCount(window.from, window.to), 0);
  return { windows, pageSize, concurrency, limits: new RunLimits(context.runLimits, days, options.signal) };
}

/** The range's windows, newest first when the walk's sort asks for it. */
export function windowsOf(
  options: { from: string; to: string; windowDays?: number },
  align: WindowAlignment,
  newestFirst: boolean,
): DateWindow[] {
  const windows = splitDateRange(options.from, options.to, {
    maxDays: options.windowDays ?? MAX_WINDOW_DAYS,
    align,
  });
  return newestFirst ? windows.reverse() : windows;
}
