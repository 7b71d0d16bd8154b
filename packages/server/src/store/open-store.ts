/**
 * Chooses the store of a configuration: the embedded DuckDB file in the data directory, or
 * PostgreSQL when `MDQ_DATABASE_URL` is set. The service never changes a PostgreSQL schema; an
 * operator runs `mdq migrate` (`migrateDatabase`) first, and the service refuses to start until
 * they have.
 */
import pg from "pg";
import type { ServiceConfig } from "../config.js";
import { openDuckDbStore } from "./duckdb/duckdb-store.js";
import type { Store } from "./model/store.js";
import { applyMigrations } from "./postgres/migrations.js";
import { storeError } from "./postgres/postgres-errors.js";
import { openPostgresStore } from "./postgres/postgres-store.js";
import { openReplicaRouter } from "./postgres/replica-router.js";

/** Options of `openStore` beyond the configuration. */
export interface OpenStoreOptions {
  /** Told about errors of idle PostgreSQL connections (the pool replaces them); e.g. a logger. */
  onConnectionError?: (error: Error) => void;
}

/**
 * Opens the store `config` names. PostgreSQL must answer and be migrated: otherwise this throws
 * StoreUnavailableError or SchemaVersionError (whose message tells the operator to run `mdq migrate`).
 * @example const store = await openStore(loadConfig());
 */
export async function openStore(config: ServiceConfig, options: OpenStoreOptions = {}): Promise<Store> {
  if (config.databaseUrl === null)
    return openDuckDbStore(config.dataDir, {
      threads: config.duckdbThreads,
      memoryMb: config.duckdbMemoryMb,
      loadMemoryMb: config.loadMemoryMb,
      exportConnections: config.duckdbExportConnections,
    });
  const connection = {
    url: config.databaseUrl,
    poolSize: config.databasePoolSize,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    exportConnections: config.exportConcurrency,
    ...(options.onConnectionError ? { onConnectionError: options.onConnectionError } : {}),
  };
  // Read replicas (CONTRACT §9): brand reads on standbys that replayed the brand's latest version.
  if (config.databaseReplicaUrls.length > 0) return openReplicaRouter(connection, config.databaseReplicaUrls);
  return openPostgresStore(connection);
}

/** Connecting for a migration gives up after this long (a database that is down fails fast). */
const MIGRATE_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Brings a PostgreSQL database's schema up to date (`mdq migrate`); safe to run from several
 * places at once and again at any time. Returns the migrations applied and the version reached.
 * @example const { applied, current } = await migrateDatabase(process.env.MDQ_DATABASE_URL!);
 */
export async function migrateDatabase(url: string): Promise<{ applied: string[]; current: number }> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: MIGRATE_CONNECT_TIMEOUT_MS,
    application_name: "mdq migrate",
  });
  // A connection lost between statements surfaces on the next one; never as an uncaught error.
  client.on("error", () => undefined);
  try {
    await client.connect();
    return await applyMigrations(client);
  } catch (error) {
    throw storeError(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}
