/**
 * A small pool of DuckDB connections: queries on one connection run one at a time, so reads
 * spread over several to use DuckDB's parallelism across concurrent requests.
 */
import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";

export class ConnectionPool {
  private readonly idle: DuckDBConnection[] = [];
  private readonly waiting: ((connection: DuckDBConnection) => void)[] = [];
  private readonly all: DuckDBConnection[] = [];

  private constructor() {}

  /** Opens `size` connections on `instance`. */
  static async open(instance: DuckDBInstance, size: number): Promise<ConnectionPool> {
    const pool = new ConnectionPool();
    for (let index = 0; index < size; index += 1) {
      const connection = await instance.connect();
      pool.all.push(connection);
      pool.idle.push(connection);
    }
    return pool;
  }

  /** Runs `work` with a connection of its own, returning the connection afterwards. */
  async use<Result>(work: (connection: DuckDBConnection) => Promise<Result>): Promise<Result> {
    const connection =
      this.idle.pop() ?? (await new Promise<DuckDBConnection>((resolve) => this.waiting.push(resolve)));
    try {
      return await work(connection);
    } finally {
      const next = this.waiting.shift();
      if (next) next(connection);
      else this.idle.push(connection);
    }
  }

  close(): void {
    for (const connection of this.all) connection.closeSync();
  }
}
