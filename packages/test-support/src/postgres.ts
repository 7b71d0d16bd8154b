/**
 * Fresh PostgreSQL databases for tests: each caller gets a uniquely named database of its own
 * (created through the `postgres` maintenance database) and drops it when done, so test files can
 * run in parallel and leave nothing behind. The server is the machine's (127.0.0.1:5432, trust
 * authentication), as in CI. Migrate with `migrateDatabase(database.url)`.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { migrateDatabase } from "@mdq/server";
import pg from "pg";

export const POSTGRES_HOST = "127.0.0.1";
export const POSTGRES_PORT = 5432;
/** The role tests connect as (named explicitly: the environment may have no USER); `root` as in CI. */
export const POSTGRES_USER = process.env["PGUSER"] ?? "root";

/** A database created for one test file. */
export interface TestDatabase {
  name: string;
  /** Its URL, straight to the server. */
  url: string;
  /** Its URL through another `host:port` (a TCP gate in front of the server, say). */
  urlVia(hostPort: string): string;
  /** Drops it, disconnecting whatever is still connected. */
  drop(): Promise<void>;
}

/** A connected client on `database`, as the superuser (for set-up, locks and checks). */
export async function connectTo(database: string): Promise<pg.Client> {
  const client = new pg.Client({
    host: POSTGRES_HOST,
    port: POSTGRES_PORT,
    user: POSTGRES_USER,
    database,
    connectionTimeoutMillis: 5_000,
  });
  await client.connect();
  return client;
}

async function onMaintenance<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = await connectTo("postgres");
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates an empty database named `mdq_<prefix>_<random hex>`. */
export async function createTestDatabase(prefix = "test"): Promise<TestDatabase> {
  if (!/^[a-z0-9_]{1,30}$/.test(prefix)) throw new Error(`bad test database prefix ${prefix}`);
  const name = `mdq_${prefix}_${randomBytes(6).toString("hex")}`;
  // The name is ours (checked prefix + hex), never input: safe to write into the statement.
  await onMaintenance((client) => client.query(`CREATE DATABASE ${name}`));
  const urlVia = (hostPort: string) => `postgres://${POSTGRES_USER}@${hostPort}/${name}`;
  return {
    name,
    url: urlVia(`${POSTGRES_HOST}:${POSTGRES_PORT}`),
    urlVia,
    async drop() {
      await onMaintenance((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** A database created as `createTestDatabase` does, with MDQ's schema migrated into it. */
export async function createMigratedDatabase(prefix = "test"): Promise<TestDatabase> {
  const database = await createTestDatabase(prefix);
  await migrateDatabase(database.url);
  return database;
}

/** A fresh database and a fresh temporary folder, both set once the enclosing `before` ran. */
export interface DatabaseAndDir {
  database: TestDatabase;
  dir: string;
}

/**
 * Creates a database (`mdq_<prefix>_…`) and a temporary folder before the enclosing `describe`,
 * and drops and removes both after it.
 */
export function useDatabaseAndDir(prefix: string): DatabaseAndDir {
  const workspace = {} as DatabaseAndDir;
  before(async () => {
    workspace.database = await createTestDatabase(prefix);
    workspace.dir = await mkdtemp(join(tmpdir(), `mdq-${prefix}-`));
  });
  after(async () => {
    await workspace.database.drop();
    await rm(workspace.dir, { recursive: true, force: true });
  });
  return workspace;
}
