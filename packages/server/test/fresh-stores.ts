/**
 * Runs a check on a fresh, empty store of each engine: DuckDB in memory, PostgreSQL in a new
 * migrated database dropped afterwards. For tests of store behaviour both engines must share.
 */
import { createTestDatabase } from "@mdq/test-support";
import { openDuckDbStore } from "../src/store/duckdb/duckdb-store.js";
import type { Store } from "../src/store/model/store.js";
import { migrateDatabase } from "../src/store/open-store.js";
import { openPostgresStore } from "../src/store/postgres/postgres-store.js";
import type { RecordExports } from "../src/store/reads/export/record-export.js";

/** A store of either engine, its exports included. */
export type FreshStore = Store & RecordExports;

/** Runs `check` on a fresh in-memory DuckDB store. */
export async function onDuckDb(check: (store: FreshStore) => Promise<void>): Promise<void> {
  const store = await openDuckDbStore(":memory:");
  try {
    await check(store);
  } finally {
    await store.close();
  }
}

/** Runs `check` on a fresh store in a new, migrated PostgreSQL database. */
export async function onPostgres(check: (store: FreshStore) => Promise<void>): Promise<void> {
  const database = await createTestDatabase();
  try {
    await migrateDatabase(database.url);
    await onPostgresAt(database.url, check);
  } finally {
    await database.drop();
  }
}

/** Runs `check` on a store opened on the (migrated) PostgreSQL database at `url`, closed after. */
export async function onPostgresAt(url: string, check: (store: FreshStore) => Promise<void>): Promise<void> {
  const store = await openPostgresStore({ url, poolSize: 2 });
  try {
    await check(store);
  } finally {
    await store.close();
  }
}
