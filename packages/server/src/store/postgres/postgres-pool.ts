/**
 * The connection pool of a PostgreSQL store: sized by `MDQ_DATABASE_POOL_SIZE`, every statement
 * bounded by `MDQ_DATABASE_STATEMENT_TIMEOUT_MS` on the server and a little more on the client
 * (a database that vanished mid-query answers nothing), connecting bounded so that a database
 * that is down fails fast, and connection errors of idle or checked-out clients absorbed so that
 * they never crash the process (the next query on such a client fails, and is answered 503).
 */
import pg from "pg";

/** How a store connects. */
export interface PostgresConnectionOptions {
  /** `postgres://` connection string (may hold a password: never logged, never in a message). */
  url: string;
  /** Connections kept by this instance (`MDQ_DATABASE_POOL_SIZE`). */
  poolSize?: number;
  /** Longest a statement may run (`MDQ_DATABASE_STATEMENT_TIMEOUT_MS`). */
  statementTimeoutMs?: number;
  /** Longest wait for a connection, new or from the pool. */
  connectTimeoutMs?: number;
  /** Told about errors of connections nobody was using (the pool replaces them). */
  onConnectionError?: (error: Error) => void;
}

/** Connections of a pool whose size is not given (`MDQ_DATABASE_POOL_SIZE`'s default). */
export const DEFAULT_POOL_SIZE = 10;
const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** Client-side slack over the server's statement timeout before a query is given up. */
const CLIENT_TIMEOUT_SLACK_MS = 5_000;

/**
 * The settings of every session of a store (libpq `options`; the growth bench gives the engine's
 * own SQL the same ones):
 * - `jit=off`: JIT compilation costs tens of milliseconds and pays off only on queries far longer
 *   than a page or a 90-day aggregate; the per-day rate table's estimates could trigger it.
 * - `enable_mergejoin=off`: every join MDQ makes meets a range's rows with a small table (the
 *   per-day rates, a day's counts). Grouped by campaign, the planner underestimates the partial
 *   sums tenfold (62 k for 621 k at scale 150) and picks merge joins that sort, and spill, the
 *   whole window; a hash join of the small side does the same in one pass (bench/README.md).
 * - `DateStyle=ISO`: a date's own text is `YYYY-MM-DD` whatever the server's or the role's
 *   default, so the planner writes a day as that text (sql-dialect.ts `formatDate`) instead of
 *   `to_char` (0.15 against 0.39 µs a value; a records page of 10,000 rows spends 3 of its 30 ms
 *   of PostgreSQL CPU formatting days with `to_char`). Only the output style is set:
 *   the day order of date input stays the server's (MDQ binds dates as `YYYY-MM-DD`, read alike
 *   in every order).
 */
export const POSTGRES_SESSION_OPTIONS = "-c jit=off -c enable_mergejoin=off -c DateStyle=ISO";

/** Opens (lazily: no connection is made yet) the pool of a store. */
export function createPostgresPool(options: PostgresConnectionOptions): pg.Pool {
  const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    statement_timeout: statementTimeoutMs,
    query_timeout: statementTimeoutMs + CLIENT_TIMEOUT_SLACK_MS,
    keepAlive: true,
    application_name: "mdq",
    options: POSTGRES_SESSION_OPTIONS,
  });
  const report = options.onConnectionError ?? (() => undefined);
  // An idle client's error arrives here; without a listener it would be thrown.
  pool.on("error", (error) => report(error));
  // A checked-out client has no pool listener between its queries: keep one on it for life.
  pool.on("connect", (client) => {
    client.on("error", () => undefined);
  });
  return pool;
}

/** Query options for statements exempt from the timeouts (loads and migrations can be long). */
export const UNBOUNDED_QUERY = { query_timeout: 2_147_483_647 } as const;

/**
 * Clears the read-timeout timer node-postgres started when `query`, a stream, was submitted
 * with a `query_timeout` (as `UNBOUNDED_QUERY` does). pg clears that timer only when the query
 * calls its `callback`, which pg-copy-streams' COPY TO never does (brianc/node-pg-copy-streams#156,
 * brianc/node-postgres#3219; pg-cursor neither, which exports used for Arrow): each export statement left a
 * timer of 24.8 days holding its query and connection, and a process that had exported could not
 * exit on its own. Call it once the query is done with, however it ended.
 */
export function endReadTimeout(query: object): void {
  (query as { callback?: () => void }).callback?.();
}
