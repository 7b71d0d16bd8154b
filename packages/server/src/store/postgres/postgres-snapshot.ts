/**
 * PostgreSQL's reads inside one snapshot (model/engine.ts `SnapshotReader`), shared by the store's
 * pages and its exports.
 */

import type { PoolClient } from "pg";
import type { SnapshotReader } from "../model/engine.js";
import { POSTGRES_DIALECT } from "../sql/sql-dialect.js";
import { readBinaryCopy } from "./copy-to.js";

/**
 * PostgreSQL's reads inside one snapshot (page-reads.ts): results as arrays, not row objects.
 * `generation`: the snapshot's own row of the counter every data write bumps in its transaction
 * (exact), as its first statement read it; null when nothing is to be reused across snapshots.
 */
export function snapshotReader(client: PoolClient, generation: string | null): SnapshotReader {
  return {
    dialect: POSTGRES_DIALECT,
    generation: async () => generation,
    async run(statement) {
      const { rows } = await client.query<unknown[]>({
        text: statement.sql,
        values: statement.params,
        rowMode: "array",
      });
      return { rowCount: rows.length, value: (row, column) => rows[row]?.[column] };
    },
    async runPacked(statement) {
      const rows = await readBinaryCopy(client, statement);
      // The row count, a bigint: eight bytes, big-endian; the text: its UTF-8 bytes.
      return {
        rowCount: rows.length,
        value: (row, column) => {
          const bytes = rows[row]?.[column] ?? null;
          return column === 0 && bytes !== null ? Number(bytes.readBigInt64BE(0)) : bytes;
        },
      };
    },
  };
}
