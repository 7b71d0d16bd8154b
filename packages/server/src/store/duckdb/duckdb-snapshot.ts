/**
 * DuckDB's reads inside one snapshot (model/engine.ts `SnapshotReader`), shared by the store's
 * pages and its exports.
 */

import type { DuckDBConnection } from "@duckdb/node-api";
import type { SnapshotReader } from "../model/engine.js";
import { DUCKDB_DIALECT } from "../sql/sql-dialect.js";
import { storeError } from "./duckdb-errors.js";
import { preparedStatementsOf } from "./prepared-statements.js";

/** What starts a read transaction's snapshot: its first read of a table (`BEGIN` alone does not). */
export const SNAPSHOT_START = "SELECT 1 FROM loads LIMIT 0";

/**
 * DuckDB's reads inside one snapshot (page-reads.ts): results by column, cheaper than row objects;
 * each statement prepared once per connection (prepared-statements.ts).
 */
export function snapshotReader(
  connection: DuckDBConnection,
  generation: SnapshotReader["generation"],
): SnapshotReader {
  const statements = preparedStatementsOf(connection);
  const run: SnapshotReader["run"] = async (statement) => {
    const result = await statements.runAndReadAll(statement.sql, statement.params).catch((error: unknown) => {
      throw storeError(error);
    });
    const columns = result.getColumnsJS();
    return { rowCount: columns[0]?.length ?? 0, value: (row, column) => columns[column]?.[row] };
  };
  // A packed page's text comes as a BLOB (the dialect's `utf8`): its bytes, undecoded.
  return { dialect: DUCKDB_DIALECT, generation, run, runPacked: run };
}
