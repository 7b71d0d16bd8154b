/** A fresh PostgreSQL database per test file, on the machine's server (127.0.0.1:5432, trust auth). */
import { randomBytes } from "node:crypto";
import pg from "pg";

export const POSTGRES_HOST = "127.0.0.1";
export const POSTGRES_PORT = 5432;
/** The machine's server trusts local connections; `root` is its superuser here, as in CI. */
export const POSTGRES_USER = process.env["PGUSER"] ?? "root";

/** A connected client on `database`, as the superuser (for set-up, locks and checks). */
export async function connectTo(database: string): Promise<pg.Client> {
  const client = new pg.Client({ host: POSTGRES_HOST, port: POSTGRES_PORT, user: POSTGRES_USER, database });
  await client.connect();
  return client;
}

export interface TestDatabase {
  name: string;
  /** Its URL through `host:port` (a gate's address, say) or directly. */
  url(hostPort?: string): string;
  drop(): Promise<void>;
}

async function onMaintenance<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = await connectTo("postgres");
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates an empty database named `mdq_<prefix>_<random>`. */
export async function createTestDatabase(prefix: string): Promise<TestDatabase> {
  const name = `mdq_${prefix}_${randomBytes(4).toString("hex")}`;
  await onMaintenance((client) => client.query(`CREATE DATABASE ${name}`));
  return {
    name,
    url: (hostPort = `${POSTGRES_HOST}:${POSTGRES_PORT}`) =>
      `postgres://${POSTGRES_USER}@${hostPort}/${name}`,
    drop: () =>
      onMaintenance((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}
