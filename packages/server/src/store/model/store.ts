/**
 * The storage interfaces every engine implements (DuckDB embedded, PostgreSQL shared), split by
 * what callers need: each caller depends on the narrowest one (`BrandDirectory`, `RecordReads`,
 * `RecordLoads`, `DataGeneration`, `StoreConnection`); `Store` is all of them. What only some
 * engines can do is a capability interface (`ParquetLoads`, `KeyRingStore`), checked once.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import type { MarketingRecord, ReplaceScope } from "@mdq/contract";
import type { CurrencyCode } from "../../currencies.js";
import type { AggregateQuery, RecordField, RecordsQuery } from "./query-request.js";

/** A brand: the tenant that owns data. `brandId` is the brand client ID of the spec. */
export interface Brand {
  brandId: string;
  name: string;
  createdAt: Date;
}

/** A registered application of a brand; it authenticates at the token endpoint. */
export interface App {
  appClientId: string;
  brandId: string;
  name: string;
  /** Hex SHA-256 of the current secret (secrets are ≥ 256-bit random, so a fast hash is sound). */
  secretHash: string;
  /** The secret before the last rotation, accepted until `previousSecretExpiresAt`. */
  previousSecretHash: string | null;
  previousSecretExpiresAt: Date | null;
  /** Narrowing of the brand's grants for this app; null means "all the brand's". */
  markets: string[] | null;
  dataSources: string[] | null;
  revokedAt: Date | null;
  createdAt: Date;
}

/** What a brand may read: sets of markets and of data sources (CONTRACT §3 rule 1). */
export interface Grants {
  markets: string[];
  dataSources: string[];
}

/** One day's reference rate: units of `currency` per 1 EUR, in millionths. */
export interface FxRate {
  currency: CurrencyCode;
  date: string;
  rateE6: bigint;
}

/**
 * A marketing record as stored: money and conversions in ten-thousandths (exact), in the
 * record's source currency.
 */
export type StoredRecord = Omit<MarketingRecord, "spend" | "conversions" | "revenue" | "currency"> & {
  spendE4: bigint;
  conversionsE4: bigint;
  revenueE4: bigint;
  currency: CurrencyCode;
};

/** Readiness facts for one brand and processing date (CONTRACT §3 rule 8). */
export interface ReadinessFacts {
  published: boolean;
  lastProcessedAt: Date | null;
  availableThrough: string | null;
  /** The brand's latest data version (writes/version-stamps.ts), as decimal text. */
  dataVersion: string;
}

/** What one load changed: it replaced the brand's rows on `days`. */
export interface LoadSummary {
  loadId: string;
  rows: number;
  days: number;
  from: string | null;
  to: string | null;
  processingDate: string;
}

/** Where a load came from and which processing date it belongs to. */
export interface LoadOrigin {
  processingDate: string;
  source: string;
  /** What the load replaces: whole days (default) or the (day, data source) pairs in it. */
  replace?: ReplaceScope;
}

/** The file formats a store reads a checked load from: Parquet (DuckDB) or CSV (PostgreSQL's COPY). */
export type StoredFileFormat = "parquet" | "csv";

/**
 * A checked load as files an engine reads itself (load/records-reader.ts `writeStoredLoad`): the
 * brand's rows as rows of `records` (`brand_id`, then `STAGING_COLUMNS` of record-replace.ts) in
 * `STORED_ORDER`, Parquet or CSV without a header (`StoredFileFormat`); the same rows rolled up
 * (sql/rollup-table.ts `rolledUpRowsOf`) and their record ids, each CSV without a header.
 * PostgreSQL reads the rollup into a temporary table, the record ids only when the load leaves
 * rows of the brand to check them against, and copies the rows straight into `records`; DuckDB
 * stages the rows and rolls them up itself.
 */
export interface StoredRecordsFile {
  rows: StoredRows;
  rolledUpPath: string;
  recordIdsPath: string;
  /** Called when the rows are staged and the final transaction starts replacing (progress). */
  onReplacing?: () => void;
}

/**
 * A checked load's rows: a file DuckDB reads by its path (Parquet), or the CSV bytes PostgreSQL's
 * `COPY` reads as the load's scratch DuckDB writes them (load/copy-pipe.ts): the copy runs while
 * they are written, not after. The bytes end only once they are all written; a failed write fails
 * their iteration, so the copy fails and its transaction rolls back. A reader that stops early
 * awaits the generator's `return()`: the writing has stopped once it resolves.
 */
export type StoredRows = { path: string } | { bytes: () => AsyncGenerator<Uint8Array> };

/** A brand's data at a glance, for `mdq status`. */
export interface BrandDataStatus {
  rows: number;
  firstDay: string | null;
  lastDay: string | null;
  lastPublishedAt: Date | null;
  lastPublishedDate: string | null;
}

/** A page of rows read column-wise plus the total number of rows matching the query. */
export interface PageResult<Row> {
  rows: Row[];
  totalCount: number;
  /**
   * Changes whenever a load replaces any of the brand's days in the range: a client walking pages
   * restarts when it changes between pages (each page is read from one snapshot).
   */
  dataVersion: string;
}

/** A value of a records page: text, a number, or null where a conversion lacks a rate. */
export type RecordValue = string | number | null;

/**
 * One field's values in a records page, `rowCount` long: text as stored, or numbers as whole
 * multiples of 10^-`places` — `impressions` and `clicks` whole (0 places), `conversions` in
 * ten-thousandths (4), `spend` and `revenue` in the query's currency's minor units
 * (record-money.ts `convertMinor`) — so that a field's value is `values[row] / 10 ** places`
 * (`recordValue`), and its JSON is written from the whole number's digits.
 */
export interface ValueColumn {
  readonly values: readonly RecordValue[];
  readonly places: number;
}

/**
 * One text field's values in a records page kept as the UTF-8 bytes the engine handed back
 * (Arrow's string layout: one byte array, offsets into it), so that no string is made for a value
 * the GraphQL layer only copies into the response: value `row` is `utf8[starts[at], starts[at + 1]
 * - 1)` with `at = row * stride + offset` (the values of a row follow one another, each followed by
 * one separator byte; store/reads/records/packed-page.ts). `textValue` reads one as a string.
 */
export interface Utf8Column {
  readonly utf8: Uint8Array;
  readonly starts: Int32Array;
  readonly stride: number;
  readonly offset: number;
  /**
   * Whether no byte of `utf8` but the separators is a `"`, a `\\` or a control character: none
   * of its values holds a character JSON escapes, so their bytes are their JSON as they are.
   */
  readonly plain: boolean;
}

/** A records page's column: values, or text as UTF-8 bytes. */
export type RecordColumn = ValueColumn | Utf8Column;

/**
 * A `marketingRecords` page in columns, whatever its sort and filter: one `RecordColumn` per
 * field of `fields` (the query's, in its order), `currency` the query's, so that the GraphQL
 * layer writes the page's JSON straight from it (graphql/records-json.ts). A page is never
 * changed once read: caches share it.
 */
export interface RecordsPage {
  readonly fields: readonly RecordField[];
  readonly rowCount: number;
  readonly columns: readonly RecordColumn[];
  readonly totalCount: number;
  /** As `PageResult.dataVersion`. */
  readonly dataVersion: string;
}

/** The value GraphQL serialises for row `row` of `column`. */
export function recordValue(column: RecordColumn, row: number): RecordValue {
  if ("utf8" in column) return textValue(column, row);
  const value = column.values[row]!;
  return column.places === 0 || typeof value !== "number" ? value : value / 10 ** column.places;
}

/** The text of row `row` of a `Utf8Column`. */
export function textValue(column: Utf8Column, row: number): string {
  const at = row * column.stride + column.offset;
  const { utf8, starts } = column;
  return Buffer.from(utf8.buffer, utf8.byteOffset, utf8.length).toString(
    "utf8",
    starts[at]!,
    starts[at + 1]! - 1,
  );
}

/** Per currency that has at least one stored rate, the day of its first rate (`YYYY-MM-DD`). */
export type FxRateStarts = ReadonlyMap<string, string>;

/**
 * Days of one brand stored in `currency` before that currency's first rate (or with no rate at
 * all): no read of those days can convert their money until the operator loads the rates.
 */
export interface UnreadableDays {
  brandId: string;
  currency: string;
  /** The first rate of `currency` stored, or null when there is none. */
  firstRate: string | null;
  /** The first and last such day (`YYYY-MM-DD`), and how many days there are. */
  from: string;
  to: string;
  days: number;
}
export {
  isExpectedStoreError,
  MissingFxRateError,
  RecordIdConflictError,
  StoreError,
  type StoreErrorCode,
  StoreUnavailableError,
} from "./store-errors.js";

/** Brands, their apps and grants: what authentication reads and the admin API writes. */
export interface BrandDirectory {
  findBrand(brandId: string): Promise<Brand | undefined>;
  listBrands(): Promise<Brand[]>;
  findApp(appClientId: string): Promise<App | undefined>;
  listApps(brandId?: string): Promise<App[]>;
  brandGrants(brandId: string): Promise<Grants>;
  createBrand(brand: Brand): Promise<void>;
  createApp(app: App): Promise<void>;
  /** Replaces the app's mutable state: secrets, revocation, narrowing. */
  updateApp(app: App): Promise<void>;
  addGrants(brandId: string, grants: Partial<Grants>): Promise<void>;
  removeGrants(brandId: string, grants: Partial<Grants>): Promise<void>;
}

/** What the GraphQL queries read: readiness, and pages of records and aggregates. */
export interface RecordReads {
  readiness(brandId: string, processingDate: string, grants: Grants): Promise<ReadinessFacts>;
  /** The days of a range whose visible data changed after a version (CONTRACT §6 rule 2). */
  dataChanges(request: DataChangesRequest): Promise<DataChanges>;
  /**
   * The records page `query` asks, first in the list, then up to `pages - 1` pages after it read in
   * the same statement (read-ahead: what a walk asks next, kept by the page cache); a page past the
   * end comes alone, empty.
   */
  queryRecords(query: RecordsQuery, pages?: number): Promise<RecordsPage[]>;
  queryAggregate(query: AggregateQuery): Promise<PageResult<Record<string, unknown>>>;
}

/** What an operator's loads write and check: FX rates, records, publishes and load status. */
export interface RecordLoads {
  upsertFxRates(rates: FxRate[]): Promise<void>;
  /** The first day of each currency's stored rates (reads/fx-coverage/): what a load checks its rows against. */
  fxRateStarts(): Promise<FxRateStarts>;
  /** The days stored in a currency before its first rate, of every brand or of `brandId` (reads/fx-coverage/). */
  unreadableDays(brandId?: string): Promise<UnreadableDays[]>;
  /**
   * Replaces every record of `brandId` on the days present in `records`, atomically (readers see
   * the old rows or the new, never a mix; a failure or a crash changes nothing), and logs the load.
   */
  replaceRecords(
    brandId: string,
    records: AsyncIterable<StoredRecord> | Iterable<StoredRecord>,
    origin?: LoadOrigin,
  ): Promise<LoadSummary>;
  /** The format of file `replaceRecordsFromStoredFile` reads. */
  readonly storedFileFormat: StoredFileFormat;
  /**
   * Like `replaceRecords`, from a file of stored records that the engine reads itself (DuckDB's
   * `read_parquet`, PostgreSQL's `COPY FROM STDIN` fed from the file): no JavaScript object per
   * row, and memory independent of the file's size.
   */
  replaceRecordsFromStoredFile(
    brandId: string,
    file: StoredRecordsFile,
    origin: LoadOrigin,
  ): Promise<LoadSummary>;
  /** Whether a load for `processingDate` has completed for the brand. */
  hasLoad(brandId: string, processingDate: string): Promise<boolean>;
  brandDataStatus(brandId: string): Promise<BrandDataStatus>;
  publish(brandId: string, processingDate: string, publishedAt: Date): Promise<void>;
}

/** A token that changes whenever records or FX rates change (a load, an FX upsert). */
export interface DataGeneration {
  /** Read cheaply before a page, so answered pages can be cached per generation (page-cache.ts). */
  dataGeneration(): Promise<string>;
}

/** The database itself: which engine, its read connections, whether it answers, and closing it. */
export interface StoreConnection {
  readonly engine: "duckdb" | "postgres";
  /**
   * Connections records pages, aggregates and cheap reads share, at least 1 (DuckDB: its readers,
   * exports reading on connections of their own; PostgreSQL: the pool less the connections its
   * exports may hold). The heavy lane leaves one of them to cheap questions (limits/request-lanes.ts).
   */
  readonly readConnections: number;
  /** Answers when the database answers (readiness probe); throws StoreUnavailableError otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The store: every read the service makes and every write an operator makes. */
export interface Store extends StoreConnection, BrandDirectory, RecordReads, RecordLoads, DataGeneration {}

/**
 * A capability of an engine that reads Parquet natively (DuckDB): `replaceRecords` from a file in
 * stored columns (`STAGING_COLUMNS` of record-replace.ts), with no JavaScript object per row.
 */
export interface ParquetLoads {
  replaceRecordsFromParquet(brandId: string, path: string, origin: LoadOrigin): Promise<LoadSummary>;
}

/** A staging table filled (`StageRecords`). */
export interface StagedRows {
  /** How many rows it holds. */
  rows: number;
  /**
   * Whether the stager also rolled them up, into `rolledUpTableOf(staging)` (sql/rollup-table.ts
   * `rollUpStaged`), as the load's checks may (load/record-staging.ts); if not, the load does.
   */
  rolledUp: boolean;
  /**
   * When `staging` is a view over the load's file rather than a table (load/record-staging.ts
   * `StagingOptions.overFile`): throws when the file changed since its rows were checked. The
   * load calls it before it commits, and when it fails, so that it commits no row read after the
   * checks and names the cause.
   */
  unchanged?: () => Promise<void>;
}

/**
 * Fills the staging table `staging` (`STAGING_COLUMNS` of record-replace.ts), a temporary table on
 * the engine's own DuckDB connection, before the load's transaction; or makes `staging` a
 * temporary view over the load's file (`StagedRows.unchanged`).
 */
export type StageRecords = (connection: DuckDBConnection, staging: string) => Promise<StagedRows>;

/**
 * A capability of an engine that is DuckDB itself: a load's file is read and checked straight
 * into a temporary staging table of the engine's connection (load/record-staging.ts), with no
 * hand-over file. A failure of `stage` changes nothing (the table or view is dropped) and is
 * rethrown.
 */
export interface StagedLoads {
  replaceRecordsStaged(
    brandId: string,
    stage: StageRecords,
    origin: LoadOrigin,
    onReplacing?: () => void,
  ): Promise<LoadSummary>;
}

/** Whether `store` stages loads in its own database (checked once, where a load chooses its path). */
export function stagesLoads(store: object): store is StagedLoads {
  return typeof (store as Partial<StagedLoads>).replaceRecordsStaged === "function";
}

/**
 * A capability of engines shared by several instances (PostgreSQL), which must sign and verify
 * with the same keys: the signing key ring's document (JSON). An engine without it keeps the ring
 * in `<dataDir>/signing-keys.json`.
 */
export interface KeyRingStore {
  /** The document; `undefined` when no ring was written yet. */
  readKeyRing(): Promise<string | undefined>;
  /** Replaces the document. */
  writeKeyRing(document: string): Promise<void>;
  /**
   * Atomic compare-and-set: writes `next` only if the stored document is still `expected`
   * (undefined: none yet); returns whether it wrote.
   */
  swapKeyRing(expected: string | undefined, next: string): Promise<boolean>;
}

/** Whether `store` loads Parquet natively (checked once, where a load chooses its path). */
export function loadsParquet(store: object): store is ParquetLoads {
  return typeof (store as Partial<ParquetLoads>).replaceRecordsFromParquet === "function";
}

/** Whether `store` keeps the signing key ring (checked once, where the ring's storage is chosen). */
export function keepsKeyRing(store: object): store is KeyRingStore {
  const candidate = store as Partial<KeyRingStore>;
  return (
    typeof candidate.readKeyRing === "function" &&
    typeof candidate.writeKeyRing === "function" &&
    typeof candidate.swapKeyRing === "function"
  );
}

/** A day whose readable data changed after a version (CONTRACT §6 rule 2). */
export interface ChangedDay {
  date: string;
  /** The day's own version: its last load, or a later FX change that reaches it. */
  version: bigint;
  changedAt: Date;
  /** The caller's visible rows on the day now (grants and the app's narrowing applied). */
  rows: number;
}

/** What changed for a caller in a date range since a version. */
export interface DataChanges {
  /** The brand's current version (`brandVersionColumn`): what the caller passes as `since` next time. */
  version: bigint;
  /** Why the caller's visible scope changed since `since`; null when it did not. */
  scopeChange: string | null;
  days: ChangedDay[];
}

/** Who asks, for which days, since which version (null: every day that has data). */
export interface DataChangesRequest {
  brandId: string;
  appClientId: string;
  grants: Grants;
  from: string;
  to: string;
  since: bigint | null;
}
