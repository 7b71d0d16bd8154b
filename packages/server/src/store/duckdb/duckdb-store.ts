/**
 * The embedded store: one DuckDB file in the data directory holding brands, apps, grants,
 * records, FX rates and publishes. One process writes; reads spread over a connection pool.
 */

import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import {
  type DuckDBConnection,
  DuckDBInstance,
  type DuckDBValue,
  dateValue,
  listValue,
} from "@duckdb/node-api";
import { toEpochDay } from "../../calendar.js";
import {
  DEFAULT_LOAD_MEMORY_MB,
  defaultExportConnections,
  LOAD_ALLOCATOR_FLUSH_THRESHOLD,
} from "../../config.js";
import type { InSnapshot, SqlRun } from "../model/engine.js";
import type {
  App,
  Brand,
  FxRate,
  Grants,
  LoadOrigin,
  LoadSummary,
  ParquetLoads,
  StagedLoads,
  StageRecords,
  Store,
  StoredRecord,
  StoredRecordsFile,
} from "../model/store.js";
import type { ExportSnapshot } from "../reads/export/record-export.js";
import { rolledUpTableOf } from "../sql/rollup-table.js";
import { APP_STATE_COLUMNS, type AppStateValue, appStateValues, rowMapping } from "../sql/row-mapping.js";
import { DUCKDB_DIALECT } from "../sql/sql-dialect.js";
import { SqlStore } from "../sql-store.js";
import { defaultOrigin, replaceBrandRows, STAGING_COLUMNS } from "../writes/record-replace.js";
import { stampFxChange, stampGrantChange, stampNarrowingChange } from "../writes/version-stamps.js";
import { ConnectionPool } from "./connection-pool.js";
import { storeError } from "./duckdb-errors.js";
import { duckDbExportSnapshot } from "./duckdb-export.js";
import { SNAPSHOT_START, snapshotReader } from "./duckdb-snapshot.js";
import { preparedStatementsOf } from "./prepared-statements.js";
import { DUCKDB_SCHEMA, OUTDATED_TABLES } from "./schema.js";
import { stagedDaysInOrder } from "./staged-order.js";

/** Name of the database file inside the data directory. */
export const DUCKDB_FILE = "mdq.duckdb";

/** Read connections of the DuckDB store (`readConnections`; exports read on connections of their own). */
const READ_CONNECTIONS = 4;

const APPEND_FLUSH_ROWS = 100_000;

/**
 * DuckDB's memory limit, in MB, at the least, while rows appended from JavaScript load (`mdq demo`,
 * the admin API's row loads): their staging table is sorted into `records` in one statement, which
 * for the demo's largest brand (11 M rows at `--scale 600`) ran out of memory under 128 MB. A
 * store limit above it (or DuckDB's own default) is kept.
 */
export const APPEND_MEMORY_MB = 192;

/** DuckDB's settings, as SET takes them; global to the database, never per connection. */
type Settings = Record<"threads" | "memory_limit" | "allocator_flush_threshold", string>;

type Row = Record<string, unknown>;

/** How a load's staged rows go in (`replaceStaged`). */
interface StagingOptions {
  /** Whether the rows are in `STORED_ORDER` already (record-replace.ts; then they are not sorted again). */
  sorted: boolean;
  /** Called when the rows are staged and the final transaction starts replacing (progress). */
  onReplacing?: () => void;
}

/** How an embedded store is opened. */
export interface DuckDbOptions {
  /** Threads per statement (`MDQ_DUCKDB_THREADS`); 0 or absent: one per core, DuckDB's default. */
  threads?: number;
  /**
   * DuckDB's memory limit in MB (`MDQ_DUCKDB_MEMORY_MB`); past it, a load's staging and sorting
   * spill to `<file>.tmp`. 0 or absent: DuckDB's default (80% of the machine's memory).
   */
  memoryMb?: number;
  /**
   * DuckDB's memory limit in MB while a file load runs (`MDQ_LOAD_MEMORY_MB`; absent:
   * `DEFAULT_LOAD_MEMORY_MB`), whatever the store's own: the load's statements spill past it.
   */
  loadMemoryMb?: number;
  /**
   * Connections an export writes its windows on while it is the only export open
   * (`MDQ_DUCKDB_EXPORT_CONNECTIONS`; absent: `defaultExportConnections()`): store/duckdb/duckdb-export.ts.
   */
  exportConnections?: number;
}

/** Opens (creating if needed) the DuckDB store of a data directory; `:memory:` for tests. */
export async function openDuckDbStore(
  dataDir: string | ":memory:",
  options: DuckDbOptions = {},
): Promise<DuckDbStore> {
  let path = ":memory:";
  if (dataDir !== ":memory:") {
    await mkdir(dataDir, { recursive: true });
    path = join(dataDir, DUCKDB_FILE);
  }
  const threads = options.threads ?? 0;
  const memoryMb = options.memoryMb ?? 0;
  const instance = await DuckDBInstance.create(path, {
    ...(threads > 0 ? { threads: String(threads) } : {}),
    ...(memoryMb > 0 ? { memory_limit: `${memoryMb}MB` } : {}),
  });
  const writer = await instance.connect();
  for (const { table, found } of OUTDATED_TABLES)
    if ((await writer.runAndReadAll(found)).currentRowCount > 0) await writer.run(`DROP TABLE ${table}`);
  for (const statement of DUCKDB_SCHEMA) await writer.run(statement);
  const readers = await ConnectionPool.open(instance, READ_CONNECTIONS);
  const [served] = (
    await writer.runAndReadAll(
      `SELECT current_setting('threads')::VARCHAR AS threads, current_setting('memory_limit') AS memory_limit,
        current_setting('allocator_flush_threshold') AS allocator_flush_threshold`,
    )
  ).getRowObjectsJS() as Settings[];
  const loading: Settings = {
    threads: String(availableParallelism()),
    memory_limit: `${options.loadMemoryMb ?? DEFAULT_LOAD_MEMORY_MB}MB`,
    allocator_flush_threshold: LOAD_ALLOCATOR_FLUSH_THRESHOLD,
  };
  const appending: Settings = {
    threads: served!.threads,
    memory_limit:
      memoryMb > 0 && memoryMb < APPEND_MEMORY_MB ? `${APPEND_MEMORY_MB}MB` : served!.memory_limit,
    allocator_flush_threshold: LOAD_ALLOCATOR_FLUSH_THRESHOLD,
  };
  const exportConnections = options.exportConnections ?? defaultExportConnections();
  return new DuckDbStore(
    instance,
    writer,
    readers,
    { served: served!, loading, appending },
    exportConnections,
  );
}

/** The DuckDB implementation of `Store`; it loads Parquet natively. */
export class DuckDbStore extends SqlStore implements Store, ParquetLoads, StagedLoads {
  readonly engine = "duckdb" as const;
  readonly readConnections = READ_CONNECTIONS;
  protected readonly dialect = DUCKDB_DIALECT;
  protected readonly rowsAs = rowMapping(dateOrNull);
  private writeQueue: Promise<unknown> = Promise.resolve();
  /** Completed writes since the store opened (page-cache.ts). */
  private generation = 0;
  /** Writes asked and writes finished, failed ones too: equal when none is under way. */
  private writesAsked = 0;
  private writesSettled = 0;

  constructor(
    private readonly instance: DuckDBInstance,
    private readonly writer: DuckDBConnection,
    private readonly readers: ConnectionPool,
    private readonly settings: { served: Settings; loading: Settings; appending: Settings },
    private readonly exportConnections: number,
  ) {
    super();
  }

  /**
   * A read's rows. Not prepared once and kept, as the page reads are: DuckDB (1.5.6) plans a sort by
   * a text column with the column's statistics when it prepares, and a statement prepared while
   * `brands` was empty, run after the demo's brands were added, answered their ids cut to one
   * character (or crashed the process): the brand list of `mdq demo` (cli demo.test.ts).
   */
  protected async rows(sql: string, params: DuckDBValue[] = []): Promise<Row[]> {
    return this.readers.use(async (connection) => {
      try {
        return (await connection.runAndReadAll(sql, params)).getRowObjectsJS();
      } catch (error) {
        throw storeError(error);
      }
    });
  }

  /**
   * Runs `work` on the single writer connection, one write at a time; each completed write starts
   * a new data generation (this process is the file's only writer, so the count is exact).
   */
  private write<Result>(work: (connection: DuckDBConnection) => Promise<Result>): Promise<Result> {
    this.writesAsked += 1;
    const next = this.writeQueue.then(() => work(this.writer));
    this.writeQueue = next.catch(() => undefined);
    return next.then(
      (result) => {
        this.generation += 1;
        this.writesSettled += 1;
        return result;
      },
      (error: unknown) => {
        this.writesSettled += 1;
        throw error;
      },
    );
  }

  async dataGeneration(): Promise<string> {
    return String(this.generation);
  }

  /**
   * Whether no write has been under way since this was called: none running then, none asked or
   * finished since. Snapshots begun in between read the same data, one generation's (this process
   * is the file's only writer).
   */
  private quietSince(): () => boolean {
    const before = { asked: this.writesAsked, settled: this.writesSettled };
    return () =>
      before.asked === before.settled &&
      this.writesAsked === before.asked &&
      this.writesSettled === before.settled;
  }

  /** A write (`write`) under `settings`: global and outside transactions, set before, restored after. */
  private writeUnder<Result>(
    settings: Settings | undefined,
    work: (connection: DuckDBConnection) => Promise<Result>,
  ): Promise<Result> {
    return this.write(async (connection) => {
      if (settings) await applySettings(connection, settings);
      try {
        return await work(connection);
      } finally {
        if (settings) await applySettings(connection, this.settings.served);
      }
    });
  }

  /** A write (`write`) in one transaction, under `settings` when given (`writeUnder`). */
  private transaction<Result>(
    work: (connection: DuckDBConnection) => Promise<Result>,
    settings?: Settings,
  ): Promise<Result> {
    return this.writeUnder(settings, (connection) => inTransaction(connection, work));
  }

  /**
   * Runs `read` in one read transaction on one pooled connection: one snapshot. Its own
   * statements (`BEGIN`, the snapshot's start, `COMMIT`) are prepared once per connection, as its
   * reads are: run as text, each was extracted, prepared and run anew at every page (three of
   * them: 0.82 ms of CPU against 0.35 prepared, bench/README.md "Where a DuckDB cold-walk page's
   * CPU goes").
   */
  protected readonly snapshot: InSnapshot = (read) =>
    this.readers.use(async (connection) => {
      const statements = preparedStatementsOf(connection);
      const run = (sql: string) => statements.runAndReadAll(sql, []);
      const generation = this.generation;
      const quiet = this.quietSince();
      await run("BEGIN TRANSACTION");
      let result: Awaited<ReturnType<typeof read>>;
      try {
        result = await read(
          snapshotReader(connection, async () => {
            // The snapshot starts at its first read of a table (now); it holds exactly the
            // generation seen before BEGIN if no write was under way then or has been asked since.
            await run(SNAPSHOT_START);
            return quiet() ? String(generation) : null;
          }),
        );
      } catch (error) {
        // A failed statement aborts DuckDB's transaction: only a rollback ends it.
        await run("ROLLBACK");
        throw error;
      }
      await run("COMMIT");
      return result;
    });

  async createBrand(brand: Brand): Promise<void> {
    await this.write((connection) =>
      connection.run("INSERT INTO brands VALUES (?, ?, make_timestamp(CAST(? AS BIGINT) * 1000))", [
        brand.brandId,
        brand.name,
        brand.createdAt.getTime(),
      ]),
    );
  }

  async createApp(app: App): Promise<void> {
    const values = [app.appClientId, app.brandId, app.name, ...appStateValues(app), app.createdAt].map(
      duckDbValue,
    );
    await this.write((connection) =>
      connection.run(
        `INSERT INTO apps VALUES (${values.map((value) => value.sql).join(", ")})`,
        values.flatMap((value) => value.params),
      ),
    );
  }

  async updateApp(app: App): Promise<void> {
    const state = appStateValues(app).map(duckDbValue);
    const assignments = APP_STATE_COLUMNS.map((column, index) => `${column} = ${state[index]!.sql}`);
    await this.transaction(async (connection) => {
      const [before] = await sqlRun(connection)(
        "SELECT markets, data_sources FROM apps WHERE app_client_id = $1",
        [app.appClientId],
      );
      await connection.run(`UPDATE apps SET name = ?, ${assignments.join(", ")} WHERE app_client_id = ?`, [
        app.name,
        ...state.flatMap((value) => value.params),
        app.appClientId,
      ]);
      await stampNarrowingChange(sqlRun(connection), DUCKDB_DIALECT, before, app);
    });
  }

  async removeGrants(brandId: string, grants: Partial<Grants>): Promise<void> {
    await this.changeGrants(brandId, "remove", grants, async (connection) => {
      for (const market of grants.markets ?? []) {
        await connection.run("DELETE FROM grants WHERE brand_id = ? AND kind = 'market' AND value = ?", [
          brandId,
          market,
        ]);
      }
      for (const dataSource of grants.dataSources ?? []) {
        await connection.run("DELETE FROM grants WHERE brand_id = ? AND kind = 'data_source' AND value = ?", [
          brandId,
          dataSource,
        ]);
      }
    });
  }

  async addGrants(brandId: string, grants: Partial<Grants>): Promise<void> {
    await this.changeGrants(brandId, "add", grants, async (connection) => {
      for (const market of grants.markets ?? []) {
        await connection.run("INSERT OR IGNORE INTO grants VALUES (?, 'market', ?)", [brandId, market]);
      }
      for (const dataSource of grants.dataSources ?? []) {
        await connection.run("INSERT OR IGNORE INTO grants VALUES (?, 'data_source', ?)", [
          brandId,
          dataSource,
        ]);
      }
    });
  }

  /** Runs `work` on the brand's grants; stamps a scope change when they differ afterwards. */
  private changeGrants(
    brandId: string,
    change: "add" | "remove",
    grants: Partial<Grants>,
    work: (connection: DuckDBConnection) => Promise<void>,
  ): Promise<void> {
    return this.transaction(async (connection) => {
      const grantsNow = async () =>
        JSON.stringify(
          await sqlRun(connection)(
            "SELECT kind, value FROM grants WHERE brand_id = $1 ORDER BY kind, value",
            [brandId],
          ),
        );
      const before = await grantsNow();
      await work(connection);
      if ((await grantsNow()) !== before)
        await stampGrantChange(sqlRun(connection), DUCKDB_DIALECT, brandId, change, grants);
    });
  }

  async upsertFxRates(rates: FxRate[]): Promise<void> {
    await this.transaction(async (connection) => {
      const staging = `fx_staging_${randomBytes(6).toString("hex")}`;
      await connection.run(`CREATE TEMP TABLE ${staging} (currency VARCHAR, date DATE, rate_e6 BIGINT)`);
      const appender = await connection.createAppender(staging, null, "temp");
      for (const rate of rates) {
        appender.appendVarchar(rate.currency);
        appender.appendDate(dateValue(toEpochDay(rate.date)));
        appender.appendBigInt(rate.rateE6);
        appender.endRow();
      }
      appender.closeSync();
      await stampFxChange(sqlRun(connection), DUCKDB_DIALECT, { staging, now: new Date() });
      await connection.run(
        `INSERT OR REPLACE INTO fx_rates SELECT * FROM ${staging} ORDER BY currency, date`,
      );
      await connection.run(`DROP TABLE ${staging}`);
    });
  }

  async replaceRecords(
    brandId: string,
    records: AsyncIterable<StoredRecord> | Iterable<StoredRecord>,
    origin: LoadOrigin = defaultOrigin(),
  ): Promise<LoadSummary> {
    // Rows appended from JavaScript (`mdq demo`, the API) load on the served threads under
    // `APPEND_MEMORY_MB`: under the load's settings the demo's brands (up to 11 M rows) ran out of
    // memory (`mdq demo --scale 600`).
    return this.replaceStaged(
      brandId,
      origin,
      { sorted: false, settings: this.settings.appending },
      async (connection, staging) => {
        await connection.run(
          `CREATE TEMP TABLE ${staging} AS SELECT ${STAGING_COLUMNS.join(", ")} FROM records LIMIT 0`,
        );
        const appender = await connection.createAppender(staging, null, "temp");
        const dates = new Map<string, ReturnType<typeof dateValue>>();
        let count = 0;
        try {
          for await (const record of records) {
            let date = dates.get(record.date);
            if (!date) {
              date = dateValue(toEpochDay(record.date));
              dates.set(record.date, date);
            }
            appender.appendVarchar(record.recordId);
            appender.appendDate(date);
            appender.appendVarchar(record.market);
            appender.appendVarchar(record.dataSource);
            appender.appendVarchar(record.channel);
            appender.appendVarchar(record.campaignId);
            appender.appendVarchar(record.campaignName);
            appender.appendBigInt(BigInt(record.impressions));
            appender.appendBigInt(BigInt(record.clicks));
            appender.appendBigInt(record.spendE4);
            appender.appendBigInt(record.conversionsE4);
            appender.appendBigInt(record.revenueE4);
            appender.appendVarchar(record.currency);
            appender.endRow();
            count += 1;
            if (count % APPEND_FLUSH_ROWS === 0) appender.flushSync();
          }
        } catch (error) {
          // The records failed mid-way: the appender is closed before its table is dropped.
          try {
            appender.closeSync();
          } catch {
            // The records' own error is the one to report.
          }
          throw error;
        }
        appender.closeSync();
        return { rows: count, rolledUp: false };
      },
    );
  }

  /**
   * Like `replaceRecords`, from a Parquet file in stored columns (`STAGING_COLUMNS`, in any order):
   * DuckDB reads it column by column, with no JavaScript object per row.
   */
  async replaceRecordsFromParquet(brandId: string, path: string, origin: LoadOrigin): Promise<LoadSummary> {
    return this.replaceFromParquet(brandId, origin, path, { sorted: false });
  }

  /** DuckDB reads a checked load as Parquet (`StoredRecordsFile`), and rolls it up itself. */
  readonly storedFileFormat = "parquet" as const;

  async replaceRecordsFromStoredFile(
    brandId: string,
    file: StoredRecordsFile,
    origin: LoadOrigin,
  ): Promise<LoadSummary> {
    if (!("path" in file.rows)) throw new Error("DuckDB reads a checked load from its Parquet file");
    return this.replaceFromParquet(brandId, origin, file.rows.path, {
      sorted: true,
      ...(file.onReplacing ? { onReplacing: file.onReplacing } : {}),
    });
  }

  private replaceFromParquet(
    brandId: string,
    origin: LoadOrigin,
    path: string,
    options: StagingOptions,
  ): Promise<LoadSummary> {
    return this.replaceStaged(brandId, origin, options, async (connection, staging) => {
      await connection.run(
        `CREATE TEMP TABLE ${staging} AS SELECT ${STAGING_COLUMNS.join(", ")} FROM read_parquet(?)`,
        [path],
      );
      const [row] = (
        await connection.runAndReadAll(`SELECT count(*) AS n FROM ${staging}`)
      ).getRowObjectsJS();
      return { rows: Number(row?.["n"] ?? 0), rolledUp: false };
    });
  }

  /** A load read and checked straight into a staging table of its own transaction (`StagedLoads`). */
  async replaceRecordsStaged(
    brandId: string,
    stage: StageRecords,
    origin: LoadOrigin,
    onReplacing?: () => void,
  ): Promise<LoadSummary> {
    return this.replaceStaged(
      brandId,
      origin,
      { sorted: false, ...(onReplacing ? { onReplacing } : {}) },
      stage,
    );
  }

  /**
   * `stage` fills a temporary table with the load's rows (returning how many); then, in one
   * transaction, they replace the brand's rows they cover (record-replace.ts) and the load is
   * logged. The staging table is committed before that transaction begins: DuckDB reads a table
   * at about half the speed while the transaction that wrote it is still open (1 M rows:
   * inserted into `records` in 1.0 s from the transaction's own staging table, 0.55 s from a
   * committed one; the load's checks scan it in 110 ms against 58). A temporary table is this
   * connection's alone and is never written to the database file, so committing it shows nothing
   * to anyone and leaves nothing behind a crash; it is dropped however the load ends. Staged as
   * a view over the load's file instead (a Parquet file), the rows are read from the file again
   * inside the transaction, and the file's identity is compared before the commit
   * (`StagedRows.unchanged`).
   */
  private replaceStaged(
    brandId: string,
    origin: LoadOrigin,
    { sorted, onReplacing, settings = this.settings.loading }: StagingOptions & { settings?: Settings },
    stage: StageRecords,
  ): Promise<LoadSummary> {
    return this.writeUnder(settings, async (connection) => {
      const staging = `records_staging_${randomBytes(6).toString("hex")}`;
      try {
        const { rows, rolledUp, unchanged = async () => {} } = await stage(connection, staging);
        onReplacing?.();
        const replace = async () =>
          replaceBrandRows(sqlRun(connection), DUCKDB_DIALECT, {
            brandId,
            loaded: {
              staging,
              rows,
              // Days already together and in order are all DuckDB's reads need (staged-order.ts).
              sorted: sorted || (await stagedDaysInOrder(connection, staging)),
              rolledUpByStager: rolledUp,
            },
            origin,
          });
        return await inTransaction(connection, async () => {
          const summary = await replace().catch(async (error: unknown) => {
            // A view over a file that changed (or went) fails for that reason, named.
            await unchanged();
            throw error;
          });
          await unchanged();
          return summary;
        });
      } finally {
        // The rollup of rows staged but never replaced (a failed load) is dropped too.
        await dropStaged(connection, staging);
        await connection.run(`DROP TABLE IF EXISTS ${rolledUpTableOf(staging)}`);
      }
    });
  }

  async hasLoad(brandId: string, processingDate: string): Promise<boolean> {
    const [row] = await this.rows(
      "SELECT count(*) AS n FROM loads WHERE brand_id = ? AND processing_date = CAST(? AS DATE)",
      [brandId, processingDate],
    );
    return Number(row?.["n"] ?? 0) > 0;
  }

  async publish(brandId: string, processingDate: string, publishedAt: Date): Promise<void> {
    await this.write((connection) =>
      connection.run(
        "INSERT OR REPLACE INTO publishes VALUES (?, CAST(? AS DATE), make_timestamp(CAST(? AS BIGINT) * 1000))",
        [brandId, processingDate, publishedAt.getTime()],
      ),
    );
  }

  /**
   * CONTRACT §7: an export from one snapshot, on connections of its own (store/reads/export/ and each engine's export): more than
   * one only while it is the only export open, and while no write raced their start.
   */
  protected exportSnapshot(alone: () => boolean): Promise<ExportSnapshot> {
    return duckDbExportSnapshot(this.instance, {
      connections: this.exportConnections,
      sameData: this.quietSince(),
      alone,
    });
  }

  async ping(): Promise<void> {
    await this.rows("SELECT 1");
  }

  async close(): Promise<void> {
    await this.writeQueue;
    this.readers.close();
    this.writer.closeSync();
    this.instance.closeSync();
  }
}

/** Drops the staged rows `staging`: a table, or a view over the load's file (`StagedRows.unchanged`). */
async function dropStaged(connection: DuckDBConnection, staging: string): Promise<void> {
  const views = await connection.runAndReadAll(
    "SELECT 1 FROM duckdb_views() WHERE view_name = ? AND temporary",
    [staging],
  );
  await connection.run(`DROP ${views.currentRowCount > 0 ? "VIEW" : "TABLE"} IF EXISTS ${staging}`);
}

/** `work` in one transaction of `connection`: committed when it resolves, rolled back when it throws. */
async function inTransaction<Result>(
  connection: DuckDBConnection,
  work: (connection: DuckDBConnection) => Promise<Result>,
): Promise<Result> {
  await connection.run("BEGIN TRANSACTION");
  try {
    const result = await work(connection);
    await connection.run("COMMIT");
    return result;
  } catch (error) {
    await connection.run("ROLLBACK");
    throw error;
  }
}

/**
 * Sets DuckDB's global settings for what runs next: a load's (every core, its own memory limit and
 * allocator threshold; the insertion order stays kept: without it, reading NDJSON on two threads
 * ran out of 128 MB) or the served ones back. Reads running meanwhile share them. A memory limit
 * DuckDB cannot lower at once (readers pin more than it) is left as it was: the load runs under
 * the served limit rather than fail.
 */
async function applySettings(connection: DuckDBConnection, settings: Settings): Promise<void> {
  const size = (text: string) => `'${text.replace(/[^0-9A-Za-z. ]/g, "")}'`;
  await connection.run(`SET threads = ${Number(settings.threads)}`);
  await connection.run(`SET allocator_flush_threshold = ${size(settings.allocator_flush_threshold)}`);
  try {
    await connection.run(`SET memory_limit = ${size(settings.memory_limit)}`);
  } catch {
    // DuckDB could not evict enough right now; the limit stays as it was.
  }
}

/**
 * A value as DuckDB takes it: a placeholder and its parameter, or the SQL of what it cannot bind
 * (NULL of an unknown type, an empty list whose item type would be unknown).
 */
function duckDbValue(value: AppStateValue): { sql: string; params: DuckDBValue[] } {
  if (value === null) return { sql: "NULL", params: [] };
  if (value instanceof Date)
    return { sql: "make_timestamp(CAST(? AS BIGINT) * 1000)", params: [value.getTime()] };
  if (Array.isArray(value)) {
    return value.length === 0
      ? { sql: "CAST([] AS VARCHAR[])", params: [] }
      : { sql: "?", params: [listValue(value)] };
  }
  return { sql: "?", params: [value] };
}

function dateOrNull(value: unknown): Date | null {
  return value === null || value === undefined ? null : new Date(Number(value));
}

/** Statements of writes/version-stamps.ts on a DuckDB connection. */
function sqlRun(connection: DuckDBConnection): SqlRun {
  return async (sql, params = []) =>
    (await connection.runAndReadAll(sql, params as DuckDBValue[])).getRowObjectsJS();
}
