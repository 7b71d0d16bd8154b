/**
 * An export's walk (`RecordExport.batches`, and a text export's first window): its rows as
 * `marketingRecords` reads them (reads/records/records-reader.ts `readRecordsPages`), keyset pages of the day sort,
 * text kept as the engine's bytes, money converted by record-money.ts.
 *
 * The range is cut into windows of whole days (`walkWindows`), each read from its first day as a
 * walk of its own, so that no window waits for the one before it: while the export is the only
 * one open, the next window's statement runs (on the snapshot's next reader, DuckDB's second
 * connection; PostgreSQL's one connection queues it) while the main thread writes this one's
 * batches. A window is one statement but for a day larger than a window, whose pages follow each
 * other from the last one's boundary. Every walk is the export's alone (a generation of its own:
 * nothing is shared with other readers), and the snapshot reads one data version throughout. It
 * starts from the export's facts, data version and rates, so each statement reads rows.
 */
import { randomUUID } from "node:crypto";
import { RECORD_FIELDS } from "@mdq/contract";
import type { CurrencyCode } from "../../../currencies.js";
import type { SnapshotReader } from "../../model/engine.js";
import type { RecordsQuery, RowScope, SortBoundary } from "../../model/query-request.js";
import type { RecordsPage } from "../../model/store.js";
import type { DayRates } from "../../sql/record-money.js";
import { readRecordsPages } from "../records/records-reader.js";
import { type DayCount, rememberBoundary, WalkMemory } from "../walk-memory.js";

/** The walk's order: `marketingRecords`' day sort, ascending (date, then record id). */
const DAY_ORDER: RecordsQuery["sort"] = [{ field: "DATE_DAY", direction: "ASC" }];

/** What an export walks, as the export's facts found it. */
export interface ExportWalk {
  /** The rows' range: from the resumed row's day when resuming. */
  scope: RowScope;
  currency: CurrencyCode;
  /** The resumed row, when it falls in the range: the walk goes on after it. */
  resumed: SortBoundary | null;
  /** The walked range's rows per day (the export's facts, from the walk's first day). */
  days: DayCount[];
  /** The FX rates of the export's range, read once for its missing-rate verdict. */
  rates: () => Promise<DayRates>;
}

/** The snapshot's side of a walk. */
export interface WalkReaders {
  /**
   * Readers of one snapshot, at least one (the first reads the export's facts): the walk's
   * statements go to them in turn.
   */
  readers: readonly SnapshotReader[];
  /**
   * Whether the next statement may run while this one's batches are written: only while this is
   * the only export open.
   */
  readAhead(): boolean;
}

/** A window of the walk: whole days, read from the first as a walk of its own. */
export interface WalkWindow {
  from: string;
  to: string;
  /** Its days and their rows (all of them, the resumed day's too). */
  days: DayCount[];
  /** The rows it holds after the resumed row, when it starts on its day. */
  rows: number;
  /** The resumed row when the window starts on its day. */
  resumed: SortBoundary | null;
}

/**
 * `walk.days` cut into windows of whole days of about `firstRows` rows for the first (so the first
 * bytes come early) and `laterRows` for the others (a day larger is a window of its own); `rows`
 * is the walk's exact count, which differs from the days' sum by the resumed day's rows up to the
 * resumed row.
 */
export function walkWindows(
  walk: ExportWalk,
  rows: number,
  firstRows: number,
  laterRows: number,
): WalkWindow[] {
  const windows: WalkWindow[] = [];
  let days: DayCount[] = [];
  let held = 0;
  const cut = () => {
    windows.push({ from: days[0]!.day, to: days[days.length - 1]!.day, days, rows: held, resumed: null });
    days = [];
    held = 0;
  };
  for (const day of walk.days) {
    if (days.length > 0 && held + day.rows > (windows.length === 0 ? firstRows : laterRows)) cut();
    days.push(day);
    held += day.rows;
  }
  if (days.length > 0) cut();
  const first = windows[0];
  if (first === undefined) return [];
  first.resumed = walk.resumed;
  first.rows -= windows.reduce((sum, window) => sum + window.rows, 0) - rows;
  return first.rows > 0 ? windows : windows.slice(1);
}

/** Where a statement of a window's walk starts: its window and page. */
interface WindowPage {
  window: number;
  page: number;
}

/** One statement of a window's walk: `pages` pages from its page. */
interface WindowRead extends WindowPage {
  pages: number;
}

/**
 * The rows of `windows` in order, in batches of `pageSize` rows (a window's last one shorter),
 * each window's first statement reading `firstPages` pages when it is the walk's first window and
 * `laterPages()` pages otherwise (asked at each statement: the export may have company by then).
 * While `readAhead()` holds, the next statement is started before this one's batches are handed
 * on, on the next reader. Throws when a window holds fewer or more rows than it counted.
 */
export async function* walkBatches(
  readers: WalkReaders,
  walk: ExportWalk,
  windows: readonly WalkWindow[],
  options: { pageSize: number; firstPages: number; laterPages(): number; dataVersion: string },
): AsyncIterable<RecordsPage> {
  const { pageSize } = options;
  const generation = `export ${randomUUID()}`;
  const walks = new WalkMemory();
  const queries = windows.map((window): RecordsQuery => {
    const query: RecordsQuery = {
      scope: { ...walk.scope, from: window.from, to: window.to },
      currency: walk.currency,
      fields: RECORD_FIELDS,
      sort: DAY_ORDER,
      page: { page: 1, pageSize },
    };
    const memory = walks.walkOf(generation, query);
    memory.days = window.days;
    memory.count = { total: window.days.reduce((sum, day) => sum + day.rows, 0), missingRate: null };
    memory.dataVersion = options.dataVersion;
    if (window.resumed !== null) rememberBoundary(memory, 0, window.resumed);
    return query;
  });
  // The statements in order: the next to start, and the rows of its window not yet asked for.
  let next: WindowPage | null = windows.length > 0 ? { window: 0, page: 1 } : null;
  let unasked = windows[0]?.rows ?? 0;
  const plan = (): WindowRead | null => {
    if (next === null) return null;
    const perRead = next.window === 0 && next.page === 1 ? options.firstPages : options.laterPages();
    const read: WindowRead = { ...next, pages: Math.min(perRead, Math.ceil(unasked / pageSize)) };
    unasked -= read.pages * pageSize;
    if (unasked > 0) next = { window: read.window, page: read.page + read.pages };
    else if (read.window + 1 < windows.length) {
      next = { window: read.window + 1, page: 1 };
      unasked = windows[read.window + 1]!.rows;
    } else next = null;
    return read;
  };
  const started: { read: WindowRead; pages: Promise<RecordsPage[]> }[] = [];
  let turn = 0;
  const start = () => {
    const read = plan();
    if (read === null) return;
    const reader = readers.readers[turn++ % readers.readers.length]!;
    const walker: SnapshotReader = { ...reader, generation: async () => generation };
    const query = queries[read.window]!;
    const readPages = () =>
      readRecordsPages(
        walker,
        { ...query, page: { page: read.page, pageSize } },
        walks,
        read.pages,
        walk.rates,
      );
    // A page after a window's first reads from the boundary the statement before it remembers.
    const previous = started[started.length - 1];
    const pages = read.page > 1 && previous !== undefined ? previous.pages.then(readPages) : readPages();
    // Awaited in its turn; failing meanwhile, it must not surface unhandled.
    pages.catch(() => undefined);
    started.push({ read, pages });
  };
  // Statements running while batches are written: one a reader while alone, else none.
  const ahead = () => (readers.readAhead() ? readers.readers.length : 0);
  let windowLeft = windows[0]?.rows ?? 0;
  let window = 0;
  /** The snapshot counted the rows: fewer would cut the body short of its MDQ-Row-Count. */
  const whole = () => {
    if (windowLeft > 0) throw new Error(`an export's walk ended ${windowLeft} rows before a window's count`);
  };
  try {
    start();
    while (started.length > 0) {
      const { read, pages } = started.shift()!;
      const batches = await pages;
      if (read.window !== window) {
        whole();
        window = read.window;
        windowLeft = windows[window]!.rows;
      }
      for (const batch of batches) {
        if (batch.rowCount === 0)
          throw new Error(`an export's walk ended ${windowLeft} rows before a window's count`);
        if (batch.rowCount > windowLeft)
          throw new Error(`an export's walk read ${batch.rowCount - windowLeft} rows past a window's count`);
        windowLeft -= batch.rowCount;
      }
      // The next statements run on the engine while these batches are written (the main thread).
      while (started.length < ahead() && next !== null) start();
      yield* batches;
      if (started.length === 0) start();
    }
    whole();
  } finally {
    // Statements started for a consumer that left: the snapshot ends after them.
    await Promise.allSettled(started.map((entry) => entry.pages));
  }
}
