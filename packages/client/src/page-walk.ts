/**
 * Page walks: every page of every window of a range, each window fetched whole and consistent
 * before any of it is handed over (client.ts explains why).
 *
 * Exactly-once across a reload: page 1 first (for `totalCount` and `dataVersion`), then the other
 * pages, `concurrency` at a time. If any page reports another `dataVersion` or `totalCount` than
 * page 1, or the pages do not add up to `totalCount`, or a recordId repeats, the window is fetched
 * again from page 1 and nothing of the failed try is handed over, unless the walk can be repaired
 * (window-repair.ts). Every page is validated (answer-validation.ts) and counted against the
 * walk's limits (run-limits.ts) before it is used.
 */
import { checkPage } from "./answer-validation.js";
import { MdqClientError } from "./errors.js";
import { isObject } from "./http-transport.js";
import { abortedError } from "./request-budget.js";
import type { RunLimits } from "./run-limits.js";
import type { Page } from "./types.js";
import type { TornWindow, WalkPlan, WalkService } from "./walk-types.js";
import { repairWindow } from "./window-repair.js";

/** Fresh tries of one window after its data changed, before DATA_CHANGED. */
export const MAX_WINDOW_RESTARTS = 5;

/**
 * Windows in order; the next window is fetched while the current one is being consumed.
 * @example for await (const page of walkPages(client, plan)) write(page.rows);
 */
export function walkPages<Row>(service: WalkService, plan: WalkPlan<Row>): AsyncGenerator<Page<Row>> {
  return prefetchedWindows(plan.limits, plan.windows.length, (index, signal) =>
    fetchWindow(service, plan, index, signal),
  );
}

/**
 * The pages of `count` windows in order, each window fetched whole by `fetch` while the one before
 * it is being consumed; the walk's `limits` end with it.
 */
export async function* prefetchedWindows<Row>(
  limits: RunLimits,
  count: number,
  fetch: (index: number, signal: AbortSignal) => Promise<Page<Row>[]>,
): AsyncGenerator<Page<Row>> {
  const stop = new AbortController();
  const signal = AbortSignal.any([limits.signal, stop.signal]);
  const start = (index: number) => {
    const fetching = fetch(index, signal);
    fetching.catch(() => undefined);
    return fetching;
  };
  let next = count > 0 ? start(0) : undefined;
  try {
    for (let index = 0; index < count; index += 1) {
      const pages = await next!;
      next = index + 1 < count ? start(index + 1) : undefined;
      yield* pages;
    }
  } finally {
    stop.abort();
    limits.close();
  }
}

/** One window, whole and consistent: restarted from page 1 whenever its data changed meanwhile. */
export async function fetchWindow<Row>(
  service: WalkService,
  plan: WalkPlan<Row>,
  index: number,
  outer: AbortSignal,
): Promise<Page<Row>[]> {
  const window = plan.windows[index]!;
  for (let restarts = 0; ; restarts += 1) {
    const torn = await tryWindow(service, plan, index, outer);
    if (Array.isArray(torn)) return torn;
    if (restarts === 0 && torn.toVersion !== undefined) {
      const repaired = await repairWindow(service, plan, index, torn, outer, { fetchPage, fetchWindow });
      if (repaired) return repaired;
    }
    if (restarts >= MAX_WINDOW_RESTARTS) {
      throw new MdqClientError(
        "DATA_CHANGED",
        `the data of ${window.from}..${window.to} changed on each of ${restarts + 1} tries (${torn.reason})`,
      );
    }
    service.onEvent?.({ type: "window-restart", window, reason: torn.reason });
  }
}

/** Fetches every page of a window; returns them, or why the window must be fetched again. */
async function tryWindow<Row>(
  service: WalkService,
  plan: WalkPlan<Row>,
  index: number,
  outer: AbortSignal,
): Promise<Page<Row>[] | TornWindow<Row>> {
  const first = await fetchPage(service, plan, index, 1, outer);
  const { totalCount, dataVersion } = first.pageInfo;
  const pageCount = Math.max(1, Math.ceil(totalCount / plan.pageSize));
  const pages: Page<Row>[] = [first];
  let torn: string | undefined;
  let toVersion: string | undefined;
  let failure: unknown;
  let nextPage = 2;
  const stop = new AbortController();
  const signal = AbortSignal.any([outer, stop.signal]);
  // A walk that can be repaired goes on after meeting a load: its pages keep the unchanged days.
  const goingOn = () => torn === undefined || (plan.repair !== undefined && toVersion !== undefined);
  const worker = async () => {
    while (goingOn() && failure === undefined && nextPage <= pageCount) {
      const number = nextPage;
      nextPage += 1;
      try {
        const page = await fetchPage(service, plan, index, number, signal);
        pages[number - 1] = page;
        if (page.pageInfo.dataVersion !== dataVersion) {
          torn ??= `dataVersion ${dataVersion} became ${page.pageInfo.dataVersion}`;
          toVersion ??= page.pageInfo.dataVersion;
        } else if (page.pageInfo.totalCount !== totalCount) {
          torn ??= `totalCount ${totalCount} became ${page.pageInfo.totalCount}`;
        }
        // The try is lost (unless it will be repaired): stop the other requests of this try.
        if (!goingOn()) stop.abort();
      } catch (error) {
        if (torn === undefined && failure === undefined) failure = error;
        stop.abort();
      }
    }
  };
  const workers = Math.min(plan.concurrency, pageCount - 1);
  await Promise.all(Array.from({ length: workers }, worker));
  if (failure !== undefined) throw failure;
  const tornBy = (reason: string): TornWindow<Row> => ({
    reason,
    fromVersion: dataVersion,
    ...(toVersion === undefined ? {} : { toVersion }),
    pages,
  });
  if (torn !== undefined) return tornBy(torn);
  let rows = 0;
  const keys = plan.keyOf ? new Set<string>() : undefined;
  for (const page of pages) {
    rows += page.rows.length;
    if (keys) {
      for (const row of page.rows) {
        const key = plan.keyOf!(row);
        if (keys.has(key)) return tornBy(`recordId ${key} came twice`);
        keys.add(key);
      }
    }
  }
  if (rows !== totalCount) return tornBy(`the pages hold ${rows} rows, not totalCount ${totalCount}`);
  pages[pages.length - 1]!.lastInWindow = true;
  return pages;
}

/** One page of a window, validated. */
export async function fetchPage<Row>(
  service: WalkService,
  plan: WalkPlan<Row>,
  index: number,
  page: number,
  signal: AbortSignal,
): Promise<Page<Row>> {
  if (signal.aborted) throw abortedError(signal);
  const window = plan.windows[index]!;
  plan.limits.spend(`${plan.field} page ${page} of ${window.from}..${window.to}`);
  const result = await service.graphql(
    plan.query,
    { ...plan.variables, dateRange: window, pagination: { page, pageSize: plan.pageSize } },
    signal,
  );
  const pageInfos = result.extensions["pageInfo"];
  const checked = checkPage(
    result.data[plan.field],
    isObject(pageInfos) ? pageInfos[plan.field] : undefined,
    {
      field: plan.field,
      window,
      page,
      pageSize: plan.pageSize,
    },
  );
  const rows = plan.rowsOf(checked.rows, window);
  service.onEvent?.({
    type: "page",
    window,
    page,
    rows: rows.length,
    totalCount: checked.pageInfo.totalCount,
  });
  return {
    window,
    windowIndex: index,
    windowCount: plan.windows.length,
    pageInfo: checked.pageInfo,
    rows,
    lastInWindow: false,
  };
}
