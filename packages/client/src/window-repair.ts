/**
 * Window repair: a records walk by day over every field and no filter that met a load keeps what
 * it fetched of the days the load did not change. `marketingDataChanges` names the days the load
 * changed; those days (and any day whose rows the shifted pages cut) are fetched again, the others
 * kept, and page 1 asked again confirms nothing changed meanwhile.
 */

import { MdqClientError } from "./errors.js";
import { compareRecordIds } from "./record-order.js";
import type { DataChanges, Page } from "./types.js";
import type { TornWindow, WalkPlan, WalkService, WindowFetchers } from "./walk-types.js";

/**
 * Completes a try of a records window that met a load, fetching again only the days the load
 * changed and the days the other try's pages did not hold whole (a load before them in the sort
 * shifts them across page boundaries; each day's count comes from `marketingDataChanges`).
 * Returns the window's pages, or undefined when it cannot (a scope change, another load meanwhile,
 * a service without data versions): the caller then fetches the window again from page 1.
 * `fetchers` are the walk's own fetches (page-walk.ts), so that the repair fetches as it does.
 */
export async function repairWindow<Row>(
  service: WalkService,
  plan: WalkPlan<Row>,
  index: number,
  torn: TornWindow<Row>,
  outer: AbortSignal,
  { fetchPage, fetchWindow }: WindowFetchers,
): Promise<Page<Row>[] | undefined> {
  const repair = plan.repair;
  const keyOf = plan.keyOf;
  const window = plan.windows[index]!;
  if (!repair || !keyOf) return undefined;
  let changed: DataChanges;
  let now: DataChanges;
  try {
    plan.limits.spend(`the changes of ${window.from}..${window.to}`);
    changed = await service.dataChanges({ ...window, since: torn.fromVersion, signal: outer });
    plan.limits.spend(`the days of ${window.from}..${window.to}`);
    now = await service.dataChanges({ ...window, since: null, signal: outer });
  } catch (error) {
    if (
      error instanceof MdqClientError &&
      error.code !== "ABORTED" &&
      error.code !== "SERVER_ANSWER_INVALID" &&
      error.code !== "TIMEOUT"
    ) {
      return undefined;
    }
    throw error;
  }
  if (changed.fullResyncRequired) return undefined;
  const changedDays = new Set(changed.days.map((day) => day.date));
  const kept = new Map<string, Map<string, Row>>();
  for (const page of torn.pages) {
    for (const row of page?.rows ?? []) {
      const date = repair.dateOf(row);
      if (changedDays.has(date)) continue;
      const day = kept.get(date) ?? new Map<string, Row>();
      kept.set(date, day);
      day.set(keyOf(row), row);
    }
  }
  const refetched: string[] = [];
  const rowsOf = new Map<string, Row[]>();
  for (const day of now.days) {
    const held = kept.get(day.date);
    if (!changedDays.has(day.date) && held !== undefined && held.size === day.rows) {
      rowsOf.set(day.date, [...held.values()]);
      continue;
    }
    refetched.push(day.date);
    const dayPlan: WalkPlan<Row> = { ...plan, windows: [{ from: day.date, to: day.date }] };
    delete dayPlan.repair;
    const pages = await fetchWindow(service, dayPlan, 0, outer);
    rowsOf.set(
      day.date,
      pages.flatMap((page) => page.rows),
    );
  }
  const dates = [...rowsOf.keys()].sort();
  if (repair.newestFirst) dates.reverse();
  const rows = dates.flatMap((date) =>
    rowsOf.get(date)!.sort((a, b) => compareRecordIds(keyOf(a), keyOf(b))),
  );
  // Page 1 again: the window's version must still be the one the load made, and its first rows
  // and total those assembled here; otherwise another load came meanwhile.
  const check = await fetchPage(service, plan, index, 1, outer);
  const firstIds = check.rows.map(keyOf);
  if (
    check.pageInfo.dataVersion !== torn.toVersion ||
    check.pageInfo.totalCount !== rows.length ||
    firstIds.some((id, position) => keyOf(rows[position]!) !== id)
  ) {
    return undefined;
  }
  const pages: Page<Row>[] = [];
  for (let start = 0, page = 1; start < rows.length || page === 1; start += plan.pageSize, page += 1) {
    pages.push({
      window,
      windowIndex: index,
      windowCount: plan.windows.length,
      pageInfo: {
        ...check.pageInfo,
        page,
        hasNextPage: start + plan.pageSize < rows.length,
      },
      rows: rows.slice(start, start + plan.pageSize),
      lastInWindow: false,
    });
  }
  pages[pages.length - 1]!.lastInWindow = true;
  service.onEvent?.({ type: "window-repair", window, days: refetched });
  return pages;
}
