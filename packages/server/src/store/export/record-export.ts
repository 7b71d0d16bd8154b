/**
 * The bulk export's read (CONTRACT §7): a brand's records of a range, ascending by (date, record
 * id), from ONE snapshot, in batches as the engine produces them. The SQL is the query planner's
 * keyset page of the day sort (`planRecordsPage`) over the whole range, and the money is converted
 * by `MoneyConverter` with the stored FX rates, exactly as `marketingRecords`' day-sort pages are:
 * the same numbers to the bit. Before the first row, the snapshot answers the data version, the
 * exact number of rows that follow, and the missing-rate verdict (`UNSUPPORTED_CURRENCY`).
 */
import { type MarketingRecord, RECORD_FIELDS, type RecordField } from "@mdq/contract";
import type { CurrencyCode } from "../../currencies.js";
import type { SnapshotReader } from "../page-reads.js";
import {
  type PlannedRecordsPage,
  planDataVersion,
  planFxRates,
  planRecordsDayCurrencies,
  planRecordsPage,
  type SortBoundary,
} from "../query-planner.js";
import type { RecordsQuery, RowScope } from "../query-request.js";
import { FxHistory, MoneyConverter } from "../record-money.js";
import { MissingFxRateError } from "../store.js";

/** A validated export request: the rows of `scope` in `currency`, after `after` when resuming. */
export interface ExportQuery {
  scope: RowScope;
  currency: CurrencyCode;
  /** The last row a previous response delivered; null for the whole range. */
  after: { date: string; recordId: string } | null;
}

/** One batch of rows, column by column, each column named by its `MarketingRecord` field. */
export interface ExportBatch {
  rowCount: number;
  columns: { readonly [Field in RecordField]: readonly MarketingRecord[Field][] };
}

/** An open export: its facts, then its rows once; `close` ends the snapshot (idempotent). */
export interface RecordExport {
  /** The exact number of rows `batches` yields. */
  readonly rowCount: number;
  /** The store's data version of the range (decimal text; `pageInfo.dataVersion`'s number). */
  readonly dataVersion: string;
  /** The rows in (date, record id) order; iterate once. Ending the iteration early closes the export. */
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

/** A chunk of a streamed result, column by column, as the engine's driver gives it. */
export interface ResultColumns {
  rowCount: number;
  columns: readonly (readonly unknown[])[];
}

/** One engine's snapshot for an export: planned reads, then one planned statement streamed. */
export interface ExportSnapshot {
  reader: SnapshotReader;
  /** Streams a planned statement's result in chunks, with the consumer's pace (backpressure). */
  stream(plan: PlannedRecordsPage): AsyncIterable<ResultColumns>;
  /** Ends the snapshot and gives its connection back; safe to call twice. */
  end(): Promise<void>;
}

/** Every record field, in the order the export writes them. */
const ALL_FIELDS: readonly RecordField[] = RECORD_FIELDS;

/** The planner's request for the export's rows: every field, the day sort ascending, one page of `rows`. */
function recordsQueryOf(query: ExportQuery, scope: RowScope, rows: number): RecordsQuery {
  return {
    scope,
    currency: query.currency,
    fields: ALL_FIELDS,
    sort: [{ field: "DATE_DAY", direction: "ASC" }],
    page: { page: 1, pageSize: rows },
  };
}

/** The row an export resumes after, as the planner's boundary of the day sort. */
function boundaryOf(after: { date: string; recordId: string }): SortBoundary {
  return { keys: [after.date], recordId: after.recordId };
}

/**
 * Opens an export on `snapshot`: reads the data version, the rows per day and source currency
 * (the count, and the missing-rate verdict of `marketingRecords`: the least `CUR YYYY-MM-DD` whose
 * conversion lacks a rate, naming the source currency when its rate lacks, else the target), the
 * FX history, and plans the rows. On any failure the snapshot is ended before the error is thrown.
 */
export async function openExport(snapshot: ExportSnapshot, query: ExportQuery): Promise<RecordExport> {
  try {
    const { reader } = snapshot;
    const dialect = reader.dialect;
    const versionTable = await reader.run(planDataVersion(query.scope, dialect));
    const dataVersion = String(versionTable.rowCount === 0 ? 0 : (versionTable.value(0, 0) ?? 0));
    const rates = await reader.run(planFxRates(dialect));
    const history = new FxHistory(
      Array.from({ length: rates.rowCount }, (_, index) => ({
        currency: String(rates.value(index, 0)),
        date: String(rates.value(index, 1)),
        rateE6: BigInt(rates.value(index, 2) as bigint | string | number),
      })),
    );
    const perDay = await reader.run(planRecordsDayCurrencies(recordsQueryOf(query, query.scope, 1), dialect));
    const after = query.after as { date: string; recordId: string } | null;
    let rowCount = 0;
    let sample: string | null = null;
    for (let index = 0; index < perDay.rowCount; index += 1) {
      const day = String(perDay.value(index, 0));
      const currency = String(perDay.value(index, 1));
      if (after === null || day > after.date) rowCount += Number(perDay.value(index, 2));
      if (currency === query.currency) continue;
      const sourceRate = history.rateOn(currency, day);
      if (sourceRate !== undefined && history.rateOn(query.currency, day) !== undefined) continue;
      const missing = `${sourceRate === undefined ? currency : query.currency} ${day}`;
      if (sample === null || missing < sample) sample = missing;
    }
    // The whole range's verdict: a resumed export refuses as the first did.
    if (sample !== null) throw new MissingFxRateError(sample.slice(0, 3), sample.slice(4));
    if (after !== null && after.date >= query.scope.from && after.date <= query.scope.to) {
      const day = { ...query.scope, from: after.date, to: after.date };
      const idsOnly = {
        ...recordsQueryOf(query, day, Number.MAX_SAFE_INTEGER),
        fields: ["recordId"] as const,
      };
      rowCount += (await reader.run(planRecordsPage(idsOnly, dialect, { after: boundaryOf(after) })))
        .rowCount;
    }
    const converter = new MoneyConverter(query.currency, history);
    const from = after && after.date > query.scope.from ? after.date : query.scope.from;
    const plan = planRecordsPage(
      recordsQueryOf(query, { ...query.scope, from }, Math.max(rowCount, 0)),
      dialect,
      {
        after: after === null ? null : boundaryOf(after),
      },
    );
    return new SnapshotExport(snapshot, plan, converter, query.currency, rowCount, dataVersion);
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
    private readonly plan: PlannedRecordsPage,
    private readonly converter: MoneyConverter,
    private readonly currency: CurrencyCode,
    readonly rowCount: number,
    readonly dataVersion: string,
  ) {}

  async *batches(): AsyncIterable<ExportBatch> {
    if (this.started) throw new Error("an export's rows are read once");
    this.started = true;
    try {
      if (this.rowCount === 0) return;
      for await (const chunk of this.snapshot.stream(this.plan)) {
        if (chunk.rowCount > 0) yield this.batchOf(chunk);
      }
    } finally {
      await this.snapshot.end();
    }
  }

  close(): Promise<void> {
    return this.snapshot.end();
  }

  /** A chunk's columns as record fields, amounts converted as `marketingRecords` converts them. */
  private batchOf(chunk: ResultColumns): ExportBatch {
    const { fields, boundaryColumns, sourceCurrencyColumn } = this.plan;
    const column = (field: RecordField) => chunk.columns[fields.indexOf(field)]!;
    const days = chunk.columns[boundaryColumns.date]!;
    const sources = chunk.columns[sourceCurrencyColumn]!;
    const money = (field: "spend" | "revenue") => {
      const amounts = column(field);
      const converted = new Array<number>(chunk.rowCount);
      for (let row = 0; row < chunk.rowCount; row += 1) {
        const value = this.converter.convert(amounts[row], String(sources[row]), String(days[row]));
        // The count found every rate the range needs before the first row (rule 7).
        if (value === null) throw new MissingFxRateError(String(sources[row]), String(days[row]));
        converted[row] = value;
      }
      return converted;
    };
    const numbers = (field: RecordField) => column(field).map(Number);
    const texts = (field: RecordField) => column(field).map(String);
    return {
      rowCount: chunk.rowCount,
      columns: {
        recordId: texts("recordId"),
        date: texts("date"),
        market: texts("market"),
        dataSource: texts("dataSource"),
        channel: texts("channel"),
        campaignId: texts("campaignId"),
        campaignName: texts("campaignName"),
        impressions: numbers("impressions"),
        clicks: numbers("clicks"),
        spend: money("spend"),
        conversions: numbers("conversions"),
        revenue: money("revenue"),
        currency: new Array<CurrencyCode>(chunk.rowCount).fill(this.currency),
      },
    };
  }
}
