/**
 * The bulk export's read (CONTRACT §7): a brand's records of a range, ascending by (date, record
 * id), from ONE snapshot. Before the first row, the snapshot answers the data version, the exact
 * number of rows that follow and the missing-rate verdict: the walk's own facts
 * (reads/records/records-reader.ts `walkFacts`, the same statement and rule as `marketingRecords`).
 *
 * The engine writes the bytes of NDJSON and CSV (and, on DuckDB, Parquet) itself (export-sql.ts)
 * from the planner's export read (`planRecordsExport`, money converted in SQL as GraphQL converts
 * it), cut into windows of whole days (`exportWindows`: a small first one, so the first byte comes
 * early, then larger ones, so no statement sorts more than a window's rows), read one after
 * another in the snapshot. A text format's first window, and the other formats (Arrow), are
 * written from batches (export/records-writer.ts) that `marketingRecords`' own read path reads
 * (export-walk.ts, reads/records/records-reader.ts `readRecordsPages`): keyset pages of the day sort, text kept as
 * the engine's bytes.
 */
import { type ExportFormat, RECORD_FIELDS, type RecordField } from "@mdq/contract";
import type { CurrencyCode } from "../../../currencies.js";
import type { PlannedSql } from "../../model/engine.js";
import type { RecordsQuery, RowScope, SortBoundary } from "../../model/query-request.js";
import { type RecordsPage, type RecordValue, recordValue } from "../../model/store.js";
import { missingRateError } from "../../model/store-errors.js";
import type { DayRates } from "../../sql/record-money.js";
import { readFxHistory } from "../fx-rates/fx-rates-reader.js";
import { planRecordsPage } from "../records/records-plan.js";
import { walkFacts } from "../records/records-reader.js";
import { planDataVersion } from "../versions/versions-plan.js";
import type { DayCount } from "../walk-memory.js";
import { type PlannedExport, planRecordsExport } from "./export-plan.js";
import { type LineFormat, planExportParquet } from "./export-sql.js";
import { type ExportWalk, type WalkReaders, walkBatches, walkWindows } from "./export-walk.js";

/** A validated export request: the rows of `scope` in `currency`, after `after` when resuming. */
export interface ExportQuery {
  scope: RowScope;
  currency: CurrencyCode;
  /** The last row a previous response delivered; null for the whole range. */
  after: { date: string; recordId: string } | null;
}

/**
 * One batch of rows, column by column in `RECORD_FIELDS` order: a records page as the GraphQL
 * layer gets it (store.ts `RecordsPage`), so a value is `recordValue`'s (`batchValues`).
 */
export type ExportBatch = RecordsPage;

/** The values of `field` in `batch`, as GraphQL serialises them (store.ts `recordValue`). */
export function batchValues(batch: ExportBatch, field: RecordField): readonly RecordValue[] {
  const column = batch.columns[batch.fields.indexOf(field)]!;
  if (!("utf8" in column) && column.places === 0) return column.values;
  return Array.from({ length: batch.rowCount }, (_, row) => recordValue(column, row));
}

/** An open export: its facts, then its rows once; `close` ends the snapshot (idempotent). */
export interface RecordExport {
  /** The exact number of rows `batches` yields. */
  readonly rowCount: number;
  /** The store's data version of the range (decimal text; `pageInfo.dataVersion`'s number). */
  readonly dataVersion: string;
  /**
   * The body's rows in `format` as the engine writes them (NDJSON and CSV lines, CRLF for CSV,
   * no header; a whole Parquet file), or null when the format is written from `batches`. A text
   * format's first window comes as a batch of `batches`' walk, for the format's own writer to
   * write (export/records-writer.ts): a statement building lines plans in about twice the time of
   * one over the rows' columns, and COPY holds its bytes back to its end, while these are the
   * first the client waits for. Iterate once; ending early closes the export.
   */
  engineBody(format: ExportFormat): AsyncIterable<Uint8Array | ExportBatch> | null;
  /**
   * The rows in (date, record id) order, as `marketingRecords` reads them; iterate once. Ending the
   * iteration early closes the export.
   */
  batches(): AsyncIterable<ExportBatch>;
  close(): Promise<void>;
}

/**
 * A capability of a store that streams an export from one snapshot (both engines). Opening reads
 * the facts; the snapshot (a connection, a transaction) stays held until the rows are read or
 * `close` is called. Throws MissingFxRateError when a conversion lacks a rate.
 */
export interface RecordExports {
  openRecordExport(query: ExportQuery): Promise<RecordExport>;
}

/** Whether `store` can export (checked once, where the export route is registered). */
export function exportsRecords(store: object): store is RecordExports {
  return typeof (store as Partial<RecordExports>).openRecordExport === "function";
}

/**
 * One engine's snapshot for an export: planned reads, then the rows' statements, one after another
 * (its walk's on `readers`, export-walk.ts).
 */
export interface ExportSnapshot extends WalkReaders {
  /**
   * The body of a text format for the windows' rows, window after window, with the consumer's
   * pace: NDJSON as the bytes of `planExportLines`'s lines, each followed by `\n`; CSV as
   * `planExportCsvCells`'s cells quoted by the engine's CSV writer, each record ending CRLF.
   */
  copyText(format: LineFormat, windows: readonly WindowRead[]): AsyncIterable<Uint8Array>;
  /** The rows written as one Parquet file, in `planExportParquet`'s columns, window after window. */
  copyParquet(rows: ParquetRows): AsyncIterable<Uint8Array>;
  /** Ends the snapshot and gives its connection back; safe to call twice. */
  end(): Promise<void>;
}

/** One window of an export's rows: its read, in every format's turn (text, Parquet, batches). */
export interface WindowRead {
  plan: PlannedExport;
  /** Its rows. */
  rows: number;
  /** Whether it holds more than `WINDOW_ROWS` rows (one day that large: export-sql.ts `linesOrder`). */
  oversized: boolean;
}

/** An export's rows for `ExportSnapshot.copyParquet`, in the Parquet file's columns. */
export interface ParquetRows {
  windows: readonly PlannedSql[];
  currency: CurrencyCode;
}

/**
 * Rows of the first window: few, so that the first byte comes early. A PostgreSQL Parquet export
 * writes the first window's CSV, then its Parquet, before its first bytes: 132–157 ms with 4,096
 * rows (whole days) at scales 30 and 150, 76 ms with 1,024 (bench/README.md "18l").
 */
export const FIRST_WINDOW_ROWS = 1024;
/**
 * Rows of a later window: enough that a statement's start (DuckDB plans it again each time, and
 * builds its day rates) costs little against its rows, and below a DuckDB row group (122,880
 * rows), past which a statement's order is not kept through its projection on more than one
 * thread (export-sql.ts `linesOrder`). 65,536 rows a window before: five statements for scale
 * 150's 90 days where there are now three (bench/README.md "18p").
 */
const WINDOW_ROWS = 114_688;

/** Rows of a batch of `RecordExport.batches` (an Arrow record batch): a page of its walk. */
const BATCH_ROWS = 4096;
/**
 * Batches each statement of `batches` reads after its first (one page, so the first bytes come
 * early), while the export is the only one open: 16,384 rows, whose unpacking (reads/records/records-reader.ts) is
 * one step of the main thread that no other request can interrupt, about an export turn's slice
 * (export/export-turns.ts). GraphQL's p99 under 4 Arrow exports at scale 150 (DuckDB, idle 6 ms):
 * 77–88 ms reading 65,536 rows a statement, 29 ms reading 16,384, 20 ms reading 8,192; one export
 * alone 292 k, 267 k and 253 k rows/s (bench/README.md "18o"); alone and reading ahead, 32,768
 * rows a statement were no faster than 16,384 ("18s").
 */
const BATCHES_PER_READ = 4;
/**
 * Batches a statement reads beside other exports (4,096 rows, one page): there the steps of every
 * export's main-thread work come between GraphQL's requests. Halving them took GraphQL's p99
 * under 4 Arrow exports from 6.1× to 3.7× idle ("18s"), and halving them again (8,192 → 4,096
 * rows) from 5.2× to 3.1× at scale 150, at the cost of the 4 exports' own throughput together,
 * 322 k → 246 k rows/s; an export alone reads 4 pages a statement either way ("18u").
 */
const BATCHES_PER_READ_BESIDE = 1;

/**
 * A range of days read by one statement, and its rows: whole days, but for a first day larger
 * than the first window, whose first `FIRST_WINDOW_ROWS` rows (`take`) are the first window and
 * the rest (`skip` them) begin the second.
 */
interface ExportWindow {
  from: string;
  to: string;
  rows: number;
  /** Rows of the range's order to pass over first (an SQL `OFFSET`). */
  skip: number;
  /** The most rows to read (an SQL `LIMIT`); null for every row of the range. */
  take: number | null;
}

/**
 * `days` (rows per day, ascending) cut into windows: the first of about `FIRST_WINDOW_ROWS` rows,
 * the others of about `WINDOW_ROWS` in whole days (so a day larger than that is a window of its
 * own). A first day larger than the first window is split: its first rows, then the rest with
 * the days after it. No days: one window, the whole range.
 */
export function exportWindows(
  days: readonly DayCount[],
  scope: { from: string; to: string },
): ExportWindow[] {
  const windows: ExportWindow[] = [];
  let from = scope.from;
  let rows = 0;
  let skip = 0;
  const head = days[0];
  if (head !== undefined && head.rows > FIRST_WINDOW_ROWS) {
    windows.push({ from, to: head.day, rows: FIRST_WINDOW_ROWS, skip: 0, take: FIRST_WINDOW_ROWS });
    skip = FIRST_WINDOW_ROWS;
    rows = -FIRST_WINDOW_ROWS;
  }
  for (const [index, day] of days.entries()) {
    rows += day.rows;
    const limit = windows.length === 0 ? FIRST_WINDOW_ROWS : WINDOW_ROWS;
    const next = days[index + 1];
    if (next === undefined) break;
    if (rows + next.rows > limit) {
      windows.push({ from, to: day.day, rows, skip, take: null });
      from = next.day;
      rows = 0;
      skip = 0;
    }
  }
  windows.push({ from, to: scope.to, rows, skip, take: null });
  return windows;
}

/** The rows of `query.after`'s day after it: counted once, when a resumed export opens. */
function afterDayQuery(query: ExportQuery, after: { date: string }): RecordsQuery {
  return {
    scope: { ...query.scope, from: after.date, to: after.date },
    currency: query.currency,
    fields: ["recordId"],
    sort: [{ field: "DATE_DAY", direction: "ASC" }],
    page: { page: 1, pageSize: Number.MAX_SAFE_INTEGER },
  };
}

/**
 * Opens an export on `snapshot`: reads the walk's facts (the rows per day and source currency: the
 * count and the missing-rate verdict of `marketingRecords`), the data version, and plans the rows.
 * On any failure the snapshot is ended before the error is thrown.
 */
export async function openExport(snapshot: ExportSnapshot, query: ExportQuery): Promise<RecordExport> {
  try {
    // The facts are read on the snapshot's first reader.
    const reader = snapshot.readers[0]!;
    const dialect = reader.dialect;
    const versionTable = await reader.run(planDataVersion(query.scope, dialect));
    const dataVersion = String(versionTable.rowCount === 0 ? 0 : (versionTable.value(0, 0) ?? 0));
    const walkQuery: RecordsQuery = {
      scope: query.scope,
      currency: query.currency,
      fields: RECORD_FIELDS,
      sort: [{ field: "DATE_DAY", direction: "ASC" }],
      page: { page: 1, pageSize: 1 },
    };
    // The whole range's verdict: a resumed export refuses as the first did.
    // Only the rates the range can use: the whole history costs an export ~0.3 s at 25 years.
    let history: Promise<DayRates> | undefined;
    const rates = () => {
      history ??= readFxHistory(reader, query.scope);
      return history;
    };
    const facts = await walkFacts(reader, walkQuery, null, rates);
    if (facts.count.missingRate !== null) throw missingRateError(facts.count.missingRate);
    const after = query.after;
    let days = facts.days;
    let rowCount = facts.count.total;
    let boundary: SortBoundary | null = null;
    if (after !== null) {
      days = days.filter((day) => day.day > after.date);
      rowCount = days.reduce((sum, day) => sum + day.rows, 0);
      if (after.date >= query.scope.from && after.date <= query.scope.to) {
        boundary = { keys: [after.date], recordId: after.recordId };
        const rest = await reader.run(
          planRecordsPage(afterDayQuery(query, after), dialect, { after: boundary }),
        );
        if (rest.rowCount > 0) days = [{ day: after.date, rows: rest.rowCount }, ...days];
        rowCount += rest.rowCount;
      }
    }
    const windows = rowCount === 0 ? [] : exportWindows(days, { from: days[0]!.day, to: query.scope.to });
    const reads = windows.map((window, index): WindowRead => {
      const scope = { ...query.scope, from: window.from, to: window.to };
      // The windows that begin on the resumed day: the first, and the rest of it when split.
      const after = index === 0 || window.skip > 0 ? boundary : null;
      return {
        plan: planRecordsExport(scope, query.currency, dialect, {
          after,
          skip: window.skip,
          take: window.take,
        }),
        rows: window.rows,
        oversized: window.rows > WINDOW_ROWS,
      };
    });
    // `batches` walks from the resumed row: the scope from its day, the walk's page 0 ending on it.
    const from = boundary === null ? query.scope.from : boundary.keys[0]!;
    const walk: ExportWalk = {
      scope: { ...query.scope, from },
      currency: query.currency,
      resumed: boundary,
      days: facts.days.filter((day) => day.day >= from),
      rates,
    };
    return new SnapshotExport(snapshot, reads, walk, rowCount, dataVersion);
  } catch (error) {
    await snapshot.end();
    throw error;
  }
}

/** An export over an engine's snapshot. */
class SnapshotExport implements RecordExport {
  private started = false;

  constructor(
    private readonly snapshot: ExportSnapshot,
    /** The rows' statements, window after window, each with whether it is oversized. */
    private readonly windows: readonly WindowRead[],
    private readonly walked: ExportWalk,
    readonly rowCount: number,
    readonly dataVersion: string,
  ) {}

  engineBody(format: ExportFormat): AsyncIterable<Uint8Array | ExportBatch> | null {
    if (format === "ndjson" || format === "csv") return this.once(this.textBody(format));
    // A Parquet file of no rows (its schema alone) is written from `batches`.
    if (format === "parquet" && this.windows.length > 0) {
      const { currency } = this.walked;
      return this.once(
        this.snapshot.copyParquet({
          windows: this.windows.map((window) => planExportParquet(window.plan, currency)),
          currency,
        }),
      );
    }
    return null;
  }

  batches(): AsyncIterable<ExportBatch> {
    const windows = walkWindows(this.walked, this.rowCount, BATCH_ROWS, BATCH_ROWS * BATCHES_PER_READ);
    return this.once(
      walkBatches(this.snapshot, this.walked, windows, {
        pageSize: BATCH_ROWS,
        firstPages: 1,
        laterPages: () => (this.snapshot.readAhead() ? BATCHES_PER_READ : BATCHES_PER_READ_BESIDE),
        dataVersion: this.dataVersion,
      }),
    );
  }

  close(): Promise<void> {
    return this.snapshot.end();
  }

  /** A text body: the first window as one batch of the walk, the others as the engine writes them. */
  private async *textBody(format: LineFormat): AsyncIterable<Uint8Array | ExportBatch> {
    const [first, ...rest] = this.windows;
    if (first === undefined) return;
    // One page of the first window's rows, from the walk's first day (or its resumed row).
    const { scope, days, resumed } = this.walked;
    const window = { from: scope.from, to: scope.to, days, rows: first.rows, resumed };
    yield* walkBatches(this.snapshot, this.walked, [window], {
      pageSize: first.rows,
      firstPages: 1,
      laterPages: () => 1,
      dataVersion: this.dataVersion,
    });
    if (rest.length > 0) yield* this.snapshot.copyText(format, rest);
  }

  /** Iterates `body` once, then ends the snapshot however the iteration ends. */
  private async *once<Item>(body: AsyncIterable<Item>): AsyncIterable<Item> {
    if (this.started) throw new Error("an export's rows are read once");
    this.started = true;
    try {
      if (this.rowCount === 0) return;
      yield* body;
    } finally {
      await this.snapshot.end();
    }
  }
}
