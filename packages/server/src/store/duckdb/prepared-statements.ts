/**
 * The prepared statements of a DuckDB connection, kept by their SQL text: a walk asks the same
 * statement at every page with other parameters (a page's SQL holds no value, reads/records/records-plan.ts),
 * so DuckDB parses and plans it once per connection instead of once per page, and a read takes
 * one trip to libuv's pool instead of three (`DuckDBConnection.run` with parameters extracts,
 * prepares, then runs). The most recently used `CAPACITY` statements are kept; the others are
 * destroyed. Closing the connection destroys what it prepared.
 */
import type {
  DuckDBConnection,
  DuckDBPreparedStatement,
  DuckDBResultReader,
  DuckDBValue,
} from "@duckdb/node-api";

/** Statements kept per connection: a few walks' pages and their facts, with room to spare. */
const CAPACITY = 32;

/** A connection's kept statements. */
class PreparedStatements {
  /** In order of last use, the least recent first (a Map keeps insertion order). */
  private readonly statements = new Map<string, DuckDBPreparedStatement>();

  constructor(private readonly connection: DuckDBConnection) {}

  /** SQL texts whose kept statement a read is running now. */
  private readonly running = new Set<string>();

  /**
   * Runs `sql` with `params` and reads its whole result; a statement already running (a read that
   * did not wait for the one before) runs unprepared instead, as `DuckDBConnection` runs it.
   */
  async runAndReadAll(sql: string, params: readonly DuckDBValue[]): Promise<DuckDBResultReader> {
    if (this.running.has(sql)) return this.connection.runAndReadAll(sql, params as DuckDBValue[]);
    this.running.add(sql);
    try {
      const prepared = await this.prepared(sql);
      prepared.bind(params as DuckDBValue[]);
      return await prepared.runAndReadAll();
    } finally {
      this.running.delete(sql);
    }
  }

  /** `sql` prepared: the kept statement, marked as the most recent, or a new one kept. */
  private async prepared(sql: string): Promise<DuckDBPreparedStatement> {
    const kept = this.statements.get(sql);
    if (kept) {
      this.statements.delete(sql);
      this.statements.set(sql, kept);
      return kept;
    }
    const prepared = await this.connection.prepare(sql);
    this.statements.set(sql, prepared);
    if (this.statements.size > CAPACITY) {
      const [oldestSql, oldest] = this.statements.entries().next().value as [string, DuckDBPreparedStatement];
      this.statements.delete(oldestSql);
      oldest.destroySync();
    }
    return prepared;
  }
}

const byConnection = new WeakMap<DuckDBConnection, PreparedStatements>();

/** The kept prepared statements of `connection`. */
export function preparedStatementsOf(connection: DuckDBConnection): PreparedStatements {
  let statements = byConnection.get(connection);
  if (!statements) {
    statements = new PreparedStatements(connection);
    byConnection.set(connection, statements);
  }
  return statements;
}
