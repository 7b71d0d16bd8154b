/**
 * What a walk of a records query's pages learns once and every later page reuses, per (query
 * without its page, data generation): the count with its missing-rate verdict, the rows per day,
 * the data version, and where each served page ended in the sort order, so that page k + 1 of the
 * default sort is a keyset read from page k's boundary instead of an offset scan (issue 11); and,
 * per generation, the stored FX rates every walk converts with.
 *
 * Entries are valid for one data generation only: the generation is part of the key, and it is
 * read inside the page's own snapshot (`SnapshotReader.generation`), so nothing learned under one
 * generation answers a snapshot of another. Memory is bounded by the number of walks kept.
 */

import { LRUCache } from "lru-cache";
import type { RecordsQuery, SortBoundary } from "../model/query-request.js";
import type { DayRates } from "../sql/record-money.js";

/** Where a page ended in its sort: the last row's sort keys and record id (reads/records/records-plan.ts). */
export type PageBoundary = SortBoundary;

/** A count's answer: rows in range and a sample conversion lacking a rate, if any. */
export interface WalkCount {
  total: number;
  missingRate: { currency: string; date: string } | null;
}

/** What one walk (a query under one generation) has learned so far. */
export interface Walk {
  count?: WalkCount;
  dataVersion?: string;
  /** Page number → where that page ended in the query's sort. */
  boundaries: Map<number, PageBoundary>;
  /** The query's rows per day, in day order (`YYYY-MM-DD`), once a keyset page has needed them. */
  days?: DayCount[];
}

/** Rows of a query on one day. */
export interface DayCount {
  day: string;
  rows: number;
}

/**
 * The query's range narrowed to the days the page after `after` can span: from the boundary's
 * day (or the range's first day in sort order) through as many further days as hold `pageSize`
 * rows on their own, or through its last day with rows when the rest holds fewer (a walk's last
 * read). The engine then reads only those days (zone maps, an index range) instead of every day
 * left in the range, and writes each row's line before its cut (reads/records/records-plan.ts
 * `planPackedRecordsPage`). Null when no day with rows is left.
 */
export function pageDays(
  days: readonly DayCount[],
  direction: "ASC" | "DESC",
  after: PageBoundary | null,
  pageSize: number,
): { from: string; to: string } | null {
  const ordered = direction === "DESC" ? [...days].reverse() : days;
  let start = 0;
  if (after) {
    start = ordered.findIndex((entry) =>
      direction === "DESC" ? entry.day <= after.keys[0]! : entry.day >= after.keys[0]!,
    );
    if (start === -1) return null;
  }
  let rows = 0;
  for (let index = start; index < ordered.length; index += 1) {
    // The boundary's day may have no rows left after it: only the days after it are counted.
    if (index > start || after === null) rows += ordered[index]!.rows;
    if (rows >= pageSize || index === ordered.length - 1) {
      const [first, last] = [ordered[start]!.day, ordered[index]!.day];
      return direction === "DESC" ? { from: last, to: first } : { from: first, to: last };
    }
  }
  return null;
}

/** Walks kept at most: each is a few numbers, a day list and one boundary per served page. */
const MAX_WALKS = 512;

/** Boundaries kept per walk at most (a 2 M-row range at 1000-row pages). */
const MAX_BOUNDARIES = 2000;

/** FX histories kept at most: one per generation and calendar year asked (a few thousand rates each). */
const MAX_FX_HISTORIES = 64;

/** The remembered walks of one store. */
export class WalkMemory {
  private readonly walks = new LRUCache<string, Walk>({ max: MAX_WALKS });
  private readonly fxHistories = new LRUCache<string, Promise<DayRates>>({ max: MAX_FX_HISTORIES });

  /**
   * The stored FX rates a range (reads/records/records-reader.ts asks calendar years) can use under `generation`,
   * read with `read` the first time: every walk and aggregate of its days (each app, window,
   * currency, page size) converts and checks with them.
   */
  fxHistory(
    generation: string,
    range: { from: string; to: string },
    read: () => Promise<DayRates>,
  ): Promise<DayRates> {
    const key = `${generation}\u0000${range.from}\u0000${range.to}`;
    let history = this.fxHistories.get(key);
    if (history === undefined) {
      history = read();
      this.fxHistories.set(key, history);
      history.catch(() => this.fxHistories.delete(key));
    }
    return history;
  }

  /** The walk of `query` (its page aside) under `generation`, created empty when new. */
  walkOf(generation: string, query: RecordsQuery): Walk {
    const key = `${generation}\u0000${JSON.stringify({ ...query, page: { pageSize: query.page.pageSize } })}`;
    let walk = this.walks.get(key);
    if (walk === undefined) {
      walk = { boundaries: new Map() };
      this.walks.set(key, walk);
    }
    return walk;
  }
}

/** Remembers where page `page` of `walk` ended. */
export function rememberBoundary(walk: Walk, page: number, boundary: PageBoundary): void {
  if (walk.boundaries.size >= MAX_BOUNDARIES && !walk.boundaries.has(page)) return;
  walk.boundaries.set(page, boundary);
}
