/**
 * The export's snapshot on PostgreSQL: a pooled connection, one REPEATABLE READ READ ONLY
 * transaction, and the rows read through a cursor (pg-cursor) one batch at a time, as fast as the
 * client takes them. The statement timeout does not apply inside it (`SET LOCAL`): an export is
 * long by design and bounded instead by the instance's export slots (`MDQ_EXPORT_CONCURRENCY`).
 * However the export ends, the connection goes back to the pool, or is discarded when it cannot
 * even roll back, so aborted exports never leak pool slots.
 */
import { setTimeout as delay } from "node:timers/promises";
import type pg from "pg";
import type { PoolClient } from "pg";
import Cursor from "pg-cursor";
import { storeError } from "../postgres/postgres-errors.js";
import { UNBOUNDED_QUERY } from "../postgres/postgres-pool.js";
import { snapshotReader } from "../postgres/postgres-store.js";
import type { ExportSnapshot, ResultColumns } from "./record-export.js";

/** How long a cursor's close may take before its connection is given up. */
const CURSOR_CLOSE_WAIT_MS = 1000;

/** Rows per cursor read: about a DuckDB chunk's worth of memory a few times over. */
const CURSOR_ROWS = 8192;

/** Opens a PostgreSQL export snapshot on a connection of `pool`. */
export async function postgresExportSnapshot(pool: pg.Pool): Promise<ExportSnapshot> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw storeError(error);
  }
  let ended = false;
  /** Set when the connection cannot be trusted to answer again (its cursor would not close). */
  let broken = false;
  const end = async () => {
    if (ended) return;
    ended = true;
    if (broken) {
      client.release(true);
      return;
    }
    try {
      await client.query("ROLLBACK");
      client.release();
    } catch {
      client.release(true);
    }
  };
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    await client.query("SET LOCAL statement_timeout = 0");
  } catch (error) {
    await end();
    throw storeError(error);
  }
  const reader = snapshotReader(client);
  return {
    reader: {
      ...reader,
      run: (statement) => reader.run(statement).catch((error: unknown) => Promise.reject(storeError(error))),
    },
    async *stream(plan): AsyncIterable<ResultColumns> {
      // node-postgres reads its client-side query timeout off the submitted query, when it is
      // submitted, and would apply it to the cursor as a whole: an export is exempt.
      const cursor = client.query(
        Object.assign(new Cursor(plan.sql, plan.params, { rowMode: "array" }), UNBOUNDED_QUERY),
      );
      try {
        for (;;) {
          const rows = (await cursor.read(CURSOR_ROWS)) as unknown[][];
          if (rows.length === 0) return;
          const width = rows[0]!.length;
          const columns = Array.from({ length: width }, () => new Array<unknown>(rows.length));
          for (let row = 0; row < rows.length; row += 1) {
            const values = rows[row]!;
            for (let column = 0; column < width; column += 1) columns[column]![row] = values[column];
          }
          yield { rowCount: rows.length, columns };
        }
      } finally {
        // A cursor whose connection died never hears `readyForQuery`, so its close never settles:
        // wait a moment, then treat the connection as broken (discarded, not returned).
        const closed = await Promise.race([
          cursor.close().then(
            () => true,
            () => false,
          ),
          delay(CURSOR_CLOSE_WAIT_MS).then(() => false),
        ]);
        if (!closed) broken = true;
      }
    },
    end,
  };
}
