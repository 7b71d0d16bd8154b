/**
 * The PostgreSQL store (`MDQ_DATABASE_URL`): the same behaviour as the DuckDB store, for any
 * number of service instances sharing one database. The SQL of reads comes from the same query
 * planner in the PostgreSQL dialect; every brand-owned table is keyed by brand and every query
 * filtered by it (docs/storage.md).
 */

import { createHash, randomBytes } from "node:crypto";
import type pg from "pg";
import type { PoolClient } from "pg";
import type { InSnapshot, SqlRun } from "../model/engine.js";
import type {
  App,
  Brand,
  FxRate,
  Grants,
  KeyRingStore,
  LoadOrigin,
  LoadSummary,
  Store,
  StoredRecord,
  StoredRecordsFile,
} from "../model/store.js";
import { SchemaVersionError } from "../model/store-errors.js";
import type { ExportSnapshot } from "../reads/export/record-export.js";
import { ROLLED_UP_COLUMNS, rolledUpTablePostgres } from "../sql/rollup-table.js";
import { appStateValues, rowMapping } from "../sql/row-mapping.js";
import { POSTGRES_DIALECT } from "../sql/sql-dialect.js";
import { SqlStore } from "../sql-store.js";
import {
  defaultOrigin,
  type LoadedRows,
  RECORDS_COLUMNS,
  replaceBrandRows,
} from "../writes/record-replace.js";
import { stampFxChange, stampGrantChange, stampNarrowingChange } from "../writes/version-stamps.js";
import { copyCsv, copyRecords } from "./copy-records.js";
import { LATEST_SCHEMA_VERSION, schemaVersion } from "./migrations.js";
import { storeError } from "./postgres-errors.js";
import { postgresExportSnapshot } from "./postgres-export.js";
import {
  createPostgresPool,
  DEFAULT_POOL_SIZE,
  type PostgresConnectionOptions,
  UNBOUNDED_QUERY,
} from "./postgres-pool.js";
import { snapshotReader } from "./postgres-snapshot.js";

type Row = Record<string, unknown>;

type Params = (string | number | bigint | boolean | Date | string[] | null)[];

/** Raised when the database's schema is not the one this release needs; names what to do. */
export { SchemaVersionError } from "../model/store-errors.js";

/** How a store is opened: its connection, and how many of its pool's connections exports may hold. */
export interface PostgresStoreOptions extends PostgresConnectionOptions {
  /** Pool connections exports may hold at once (`MDQ_EXPORT_CONCURRENCY`); absent: 0. */
  exportConnections?: number;
}

/**
 * Opens the store of a migrated database: connects once to check that it answers and that its
 * schema is current (SchemaVersionError otherwise; StoreUnavailableError when it is down).
 * @example const store = await openPostgresStore({ url: config.databaseUrl, poolSize: 10 });
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const pool = createPostgresPool(options);
  try {
    const client = await pool.connect();
    try {
      const version = await schemaVersion(client);
      if (version !== LATEST_SCHEMA_VERSION) throw new SchemaVersionError(version, LATEST_SCHEMA_VERSION);
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw storeError(error);
  }
  return new PostgresStore(pool, options.exportConnections);
}

/** The PostgreSQL implementation of `Store`; it keeps the signing key ring for every instance. */
export class PostgresStore extends SqlStore implements Store, KeyRingStore {
  readonly engine = "postgres" as const;
  /** The pool less the connections exports may hold, at least 1. */
  readonly readConnections: number;
  protected readonly dialect = POSTGRES_DIALECT;
  protected readonly rowsAs = rowMapping(dateOrNull);

  /** `exportConnections`: connections of `pool` that exports may hold (`PostgresStoreOptions`). */
  constructor(
    private readonly pool: pg.Pool,
    exportConnections = 0,
  ) {
    super();
    this.readConnections = Math.max(1, (pool.options.max ?? DEFAULT_POOL_SIZE) - exportConnections);
  }

  /** One statement on any pooled connection. */
  protected async rows(sql: string, params: Params = []): Promise<Row[]> {
    try {
      return (await this.pool.query(sql, params)).rows;
    } catch (error) {
      throw storeError(error);
    }
  }

  /**
   * Runs `work` in one transaction opened with `begin` (one or more statements, without
   * parameters), given the rows of its last statement. On failure the transaction is rolled back
   * (a connection that cannot even do that is discarded) and the error mapped.
   */
  private async transaction<Result>(
    begin: string,
    work: (client: PoolClient, begun: Row[]) => Promise<Result>,
  ): Promise<Result> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw storeError(error);
    }
    try {
      const begun: pg.QueryResult<Row> | pg.QueryResult<Row>[] = await client.query(begin);
      const result = await work(client, (Array.isArray(begun) ? begun.at(-1) : begun)?.rows ?? []);
      await client.query("COMMIT");
      client.release();
      return result;
    } catch (error) {
      try {
        await client.query("ROLLBACK");
        client.release();
      } catch {
        client.release(true);
      }
      throw storeError(error);
    }
  }

  /**
   * Runs `read` in one REPEATABLE READ READ ONLY transaction: one snapshot, whose generation is
   * read by its first statement, sent with BEGIN: one round trip, not two (each statement sent is
   * a `writev` of 0.22 ms of the main thread's CPU, in a profile of 60 first pages of walks).
   */
  protected readonly snapshot: InSnapshot = (read) =>
    this.transaction(BEGIN_SNAPSHOT, (client, begun) => read(snapshotReader(client, generationOf(begun[0]))));

  async createBrand(brand: Brand): Promise<void> {
    await this.rows("INSERT INTO brands (brand_id, name, created_at) VALUES ($1, $2, $3)", [
      brand.brandId,
      brand.name,
      brand.createdAt,
    ]);
  }

  async createApp(app: App): Promise<void> {
    await this.rows(
      `INSERT INTO apps (app_client_id, brand_id, name, secret_hash, previous_secret_hash,
        previous_secret_expires_at, markets, data_sources, revoked_at, created_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [app.appClientId, app.brandId, app.name, ...appStateValues(app), app.createdAt],
    );
  }

  async updateApp(app: App): Promise<void> {
    await this.transaction("BEGIN", async (client) => {
      const [before] = (
        await client.query("SELECT markets, data_sources FROM apps WHERE app_client_id = $1 FOR UPDATE", [
          app.appClientId,
        ])
      ).rows;
      await client.query(
        `UPDATE apps SET name = $2, secret_hash = $3, previous_secret_hash = $4,
          previous_secret_expires_at = $5, markets = $6, data_sources = $7, revoked_at = $8
          WHERE app_client_id = $1`,
        [app.appClientId, app.name, ...appStateValues(app)],
      );
      await stampNarrowingChange(sqlRun(client), POSTGRES_DIALECT, before, app);
    });
  }

  async addGrants(brandId: string, grants: Partial<Grants>): Promise<void> {
    await this.changeGrants(
      brandId,
      "add",
      grants,
      `INSERT INTO grants (brand_id, kind, value)
        SELECT CAST($1 AS text), 'market', unnest(CAST($2 AS text[]))
        UNION ALL SELECT CAST($1 AS text), 'data_source', unnest(CAST($3 AS text[]))
        ON CONFLICT DO NOTHING RETURNING 1`,
    );
  }

  async removeGrants(brandId: string, grants: Partial<Grants>): Promise<void> {
    await this.changeGrants(
      brandId,
      "remove",
      grants,
      `DELETE FROM grants WHERE brand_id = $1
        AND ((kind = 'market' AND value = ANY($2)) OR (kind = 'data_source' AND value = ANY($3)))
        RETURNING 1`,
    );
  }

  /** Runs a grant statement ($1 brand, $2 markets, $3 data sources); stamps a scope change when it changed a row. */
  private async changeGrants(
    brandId: string,
    change: "add" | "remove",
    grants: Partial<Grants>,
    statement: string,
  ): Promise<void> {
    await this.transaction("BEGIN", async (client) => {
      const changed = await client.query(statement, [
        brandId,
        grants.markets ?? [],
        grants.dataSources ?? [],
      ]);
      if ((changed.rowCount ?? 0) > 0)
        await stampGrantChange(sqlRun(client), POSTGRES_DIALECT, brandId, change, grants);
    });
  }

  async upsertFxRates(rates: FxRate[]): Promise<void> {
    // One row per key (the last wins), as INSERT OR REPLACE gives: ON CONFLICT may not touch a
    // row twice in one statement.
    const latest = new Map<string, FxRate>();
    for (const rate of rates) latest.set(`${rate.currency} ${rate.date}`, rate);
    const unique = [...latest.values()];
    // One transaction: the rates and their data version (which bumps the data generation) change together.
    await this.transaction("BEGIN", async (client) => {
      const staging = `fx_staging_${randomBytes(6).toString("hex")}`;
      await client.query(
        `CREATE TEMP TABLE ${staging} ON COMMIT DROP AS
          SELECT * FROM unnest(CAST($1 AS text[]), CAST($2 AS date[]), CAST($3 AS bigint[])) AS s(currency, date, rate_e6)`,
        [
          unique.map((rate) => rate.currency),
          unique.map((rate) => rate.date),
          unique.map((rate) => rate.rateE6.toString()),
        ],
      );
      const changed = await stampFxChange(sqlRun(client), POSTGRES_DIALECT, { staging, now: new Date() });
      if (!changed) return;
      await client.query(
        `INSERT INTO fx_rates (currency, date, rate_e6) SELECT currency, date, rate_e6 FROM ${staging}
          ON CONFLICT (currency, date) DO UPDATE SET rate_e6 = excluded.rate_e6`,
      );
    });
  }

  /**
   * In one transaction: the records are streamed with COPY into a temporary table, then — under
   * a per-brand advisory lock, so loads of one brand from several instances queue — they replace
   * the brand's rows they cover (record-replace.ts) and the load is logged. Readers see the old
   * rows or the new; an error or a crash at any point changes nothing.
   */
  async replaceRecords(
    brandId: string,
    records: AsyncIterable<StoredRecord> | Iterable<StoredRecord>,
    origin: LoadOrigin = defaultOrigin(),
  ): Promise<LoadSummary> {
    return this.replaceLoaded(brandId, origin, undefined, async (client, run) => {
      const staging = `records_staging_${randomBytes(6).toString("hex")}`;
      await run(
        `CREATE TEMP TABLE ${staging} (
          record_id text COLLATE "C", date date, market text COLLATE "C", data_source text COLLATE "C",
          channel text COLLATE "C", campaign_id text COLLATE "C", campaign_name text COLLATE "C",
          impressions bigint, clicks bigint, spend_e4 bigint, conversions_e4 bigint, revenue_e4 bigint,
          currency text COLLATE "C") ON COMMIT DROP`,
      );
      const rows = await copyRecords(client, staging, records);
      await run(`ANALYZE ${staging}`);
      return { staging, rows, sorted: false, rolledUpByStager: false };
    });
  }

  /** PostgreSQL reads a checked load as CSV, with COPY (`StoredRecordsFile`). */
  readonly storedFileFormat = "csv" as const;

  /**
   * Like `replaceRecords`, but the rows go straight into `records` (COPY of their CSV, after the
   * rows they replace are deleted; a load's scratch DuckDB writes it meanwhile, load/copy-pipe.ts),
   * with no staging table: the load's rollup, and its record ids when the brand keeps rows to
   * check them against, are all the replace reads before them, each from a file of its own. A
   * first load of 1 M rows (2026-11-28): `COPY` into `records` 6.4–7.6 s against a staging
   * table's `COPY` (1.3 s), `ANALYZE` (0.2 s) and rollup (0.4 s), then `INSERT … SELECT` (6.3 s);
   * with `records_brand_record` dropped, 3.2–3.9 s against 4.9–5.6 s of the insert alone. That
   * index stays: it is the clash check's (bench/README.md "Loads").
   */
  async replaceRecordsFromStoredFile(
    brandId: string,
    file: StoredRecordsFile,
    origin: LoadOrigin,
  ): Promise<LoadSummary> {
    return this.replaceLoaded(brandId, origin, file.onReplacing, async (client, run) => {
      const rolledUp = `records_rolled_up_${randomBytes(6).toString("hex")}`;
      await run(rolledUpTablePostgres(rolledUp));
      await copyCsv(client, rolledUp, ROLLED_UP_COLUMNS, { path: file.rolledUpPath });
      return {
        rolledUp,
        recordIds: async () => {
          const recordIds = `records_ids_${randomBytes(6).toString("hex")}`;
          await run(`CREATE TEMP TABLE ${recordIds} (record_id text COLLATE "C") ON COMMIT DROP`);
          await copyCsv(client, recordIds, ["record_id"], { path: file.recordIdsPath });
          await run(`ANALYZE ${recordIds}`);
          return recordIds;
        },
        write: () => copyCsv(client, "records", RECORDS_COLUMNS, file.rows),
      };
    });
  }

  /**
   * In one transaction: `load` brings the load's rows in (into a temporary table, dropped at
   * commit) or readies them to be copied, then the shared replace runs under the brand's lock.
   */
  private async replaceLoaded(
    brandId: string,
    origin: LoadOrigin,
    onReplacing: (() => void) | undefined,
    load: (client: PoolClient, run: SqlRun) => Promise<LoadedRows>,
  ): Promise<LoadSummary> {
    const summary = await this.transaction("BEGIN", async (client) => {
      const run: SqlRun = async (text, values = []) =>
        (await client.query({ text, values: values as Params, ...UNBOUNDED_QUERY })).rows;
      await run("SET LOCAL statement_timeout = 0");
      const loaded = await load(client, run);
      await run("SELECT pg_advisory_xact_lock($1)", [loadLockKey(brandId)]);
      onReplacing?.();
      return replaceBrandRows(run, POSTGRES_DIALECT, { brandId, loaded, origin });
    });
    if (summary.rows > 0) await this.vacuumBrandPartition(brandId);
    return summary;
  }

  /**
   * Vacuums the partition holding the brand and refreshes its statistics, once the load has
   * committed (best effort). The statistics, so that the first reads after a load are planned
   * with its new size and days (autovacuum gets there only after 10% of a partition changed; a
   * plan made without them can be 100× slower; ANALYZE reads a sample of at most 30 000 rows).
   * The vacuum, so that the rows a load replaced stop weighing on the next one: their dead
   * tuples and index entries stayed until autovacuum came, and each reload's `COPY` grew slower
   * (1 M rows replaced six times in a row: 5.0 s, 7.5, 8.1, then 9.5, 13.2, 13.1 s) where, vacuumed
   * after each, every reload takes as long as the first (the whole load, vacuum included, 8.2–9.3
   * s against 8.4–18.9; bench/README.md "Loads", issue 19's eleventh pass). It also marks the new
   * pages all-visible, so that counts answered from the walk index need no heap visit from the
   * first read on. It takes the lock ANALYZE took (SHARE UPDATE EXCLUSIVE: reads and writes go
   * on). The summary tables are analyzed too: without statistics, readiness's last day scanned
   * every row of the brand in `day_row_counts` (70 ms at demo scale 30) instead of one backward
   * index probe (0.2 ms).
   */
  private async vacuumBrandPartition(brandId: string): Promise<void> {
    try {
      const [row] = await this.rows(
        "SELECT tableoid::regclass::text AS partition FROM records WHERE brand_id = $1 LIMIT 1",
        [brandId],
      );
      const partition = row?.["partition"];
      if (typeof partition === "string" && /^records_p\d+$/.test(partition)) {
        await this.pool.query({ text: `VACUUM (ANALYZE) ${partition}`, ...UNBOUNDED_QUERY });
      }
      await this.pool.query({ text: "ANALYZE day_row_counts, record_rollup", ...UNBOUNDED_QUERY });
    } catch {
      // Statistics only steer plans, and autovacuum will come.
    }
  }

  async hasLoad(brandId: string, processingDate: string): Promise<boolean> {
    const [row] = await this.rows(
      "SELECT EXISTS (SELECT 1 FROM loads WHERE brand_id = $1 AND processing_date = CAST($2 AS date)) AS found",
      [brandId, processingDate],
    );
    return row?.["found"] === true;
  }

  async publish(brandId: string, processingDate: string, publishedAt: Date): Promise<void> {
    await this.rows(
      `INSERT INTO publishes (brand_id, processing_date, published_at) VALUES ($1, CAST($2 AS date), $3)
        ON CONFLICT (brand_id, processing_date) DO UPDATE SET published_at = excluded.published_at`,
      [brandId, processingDate, publishedAt],
    );
  }

  async readKeyRing(): Promise<string | undefined> {
    const [row] = await this.rows("SELECT document FROM key_ring WHERE id = 1");
    return row ? String(row["document"]) : undefined;
  }

  async writeKeyRing(document: string): Promise<void> {
    await this.rows(
      `INSERT INTO key_ring (id, document, updated_at) VALUES (1, $1, now())
        ON CONFLICT (id) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at`,
      [document],
    );
  }

  /**
   * Writes the key ring only if it is still `expected` (absent when undefined): instances that
   * start or rotate at the same time cannot overwrite each other's keys.
   */
  async swapKeyRing(expected: string | undefined, next: string): Promise<boolean> {
    const swapped = await this.rows(
      expected === undefined
        ? `INSERT INTO key_ring (id, document, updated_at) VALUES (1, $1, now())
            ON CONFLICT (id) DO NOTHING RETURNING 1 AS swapped`
        : "UPDATE key_ring SET document = $2, updated_at = now() WHERE id = 1 AND document = $1 RETURNING 1 AS swapped",
      expected === undefined ? [next] : [expected, next],
    );
    return swapped.length === 1;
  }

  async dataGeneration(): Promise<string> {
    const [row] = await this.rows(GENERATION_SQL);
    return generationOf(row);
  }

  /** CONTRACT §7: an export from one REPEATABLE READ snapshot (store/reads/export/ and each engine's export). */
  protected exportSnapshot(alone: () => boolean): Promise<ExportSnapshot> {
    return postgresExportSnapshot(this.pool, alone);
  }

  async ping(): Promise<void> {
    await this.rows("SELECT 1");
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** Statements of writes/version-stamps.ts on a PostgreSQL connection. */
function sqlRun(client: PoolClient): SqlRun {
  return async (sql, params = []) => (await client.query(sql, params as unknown[])).rows;
}

/** The region's data generation: the counter every data write bumps in its transaction. */
const GENERATION_SQL = "SELECT generation FROM data_generation WHERE id = 1";

/** A read snapshot's BEGIN with its first statement, the generation it reads (one simple query). */
const BEGIN_SNAPSHOT = `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; ${GENERATION_SQL}`;

function generationOf(row: Row | undefined): string {
  return String(row?.["generation"] ?? 0);
}

/** The advisory lock key of a brand's loads: 64 bits of a hash of its id. */
function loadLockKey(brandId: string): string {
  return createHash("sha256").update(`mdq load ${brandId}`).digest().readBigInt64BE(0).toString();
}

function dateOrNull(value: unknown): Date | null {
  return value instanceof Date ? value : null;
}
