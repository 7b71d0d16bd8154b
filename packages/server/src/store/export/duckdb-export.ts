/**
 * The export's snapshot on DuckDB: a connection of its own (not one of the page readers, so a
 * slow client never starves GraphQL), one read transaction, and the rows streamed chunk by chunk
 * (`connection.stream` + `fetchChunk`: DuckDB produces the next chunk only when it is asked for).
 */
import type { DuckDBInstance, DuckDBValue } from "@duckdb/node-api";
import { snapshotReader } from "../duckdb/duckdb-store.js";
import type { ExportSnapshot, ResultColumns } from "./record-export.js";

/** Opens a DuckDB export snapshot on a new connection of `instance`. */
export async function duckDbExportSnapshot(instance: DuckDBInstance): Promise<ExportSnapshot> {
  const connection = await instance.connect();
  let ended = false;
  try {
    await connection.run("BEGIN TRANSACTION");
  } catch (error) {
    connection.closeSync();
    throw error;
  }
  return {
    // An export reuses nothing across snapshots, so it never needs the generation.
    reader: snapshotReader(connection, async () => null),
    async *stream(plan): AsyncIterable<ResultColumns> {
      const result = await connection.stream(plan.sql, plan.params as DuckDBValue[]);
      for (;;) {
        const chunk = await result.fetchChunk();
        if (chunk === null || chunk.rowCount === 0) return;
        yield { rowCount: chunk.rowCount, columns: chunk.getColumns() };
      }
    },
    async end() {
      if (ended) return;
      ended = true;
      // A read-only transaction: nothing to keep, and closing the connection ends it either way.
      await connection.run("ROLLBACK").catch(() => undefined);
      connection.closeSync();
    },
  };
}
