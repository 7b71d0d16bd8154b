/**
 * The export's snapshot on PostgreSQL: a pooled connection, one REPEATABLE READ READ ONLY
 * transaction. The text formats are written by the server itself, `COPY (...) TO STDOUT` read
 * through pg-copy-streams (its stream pauses the connection's socket when the client reads
 * slowly); so is Parquet's CSV, which a scratch DuckDB writes as Parquet (parquet-from-csv.ts);
 * Arrow, and a text export's first window, are read through the snapshot's reader by
 * `marketingRecords`' read path (export-walk.ts), a statement of up to 16,384 rows at a time (one
 * queued ahead while the export is the only one open), as fast as the client takes them. The
 * statement timeout does not apply inside it (`SET LOCAL`): an export is long by design and
 * bounded instead by the instance's export slots (`MDQ_EXPORT_CONCURRENCY`). Nor do nested loops:
 * the planner takes the target currency's rates (`day_rates t`, a CTE filtered by currency) for
 * one row and would scan them again for every record of a window, as
 * it did for the first window (48 of its 73 ms at scale 30; hash-joined, 6 ms). Only here: a
 * campaign aggregate, which hash-joins those rates already, took 236–259 ms with nested loops
 * off against 146–166 with them (scale 10, `EXPLAIN ANALYZE`), so the stores' sessions keep them.
 * The COPYs are exempt from node-postgres's client-side timeout too (`UNBOUNDED_QUERY`); the
 * reader's statements (the facts; a read of up to 16,384 rows, where a 283,500-row Arrow export
 * took 1.8 s at scale 150) keep it: the statement timeout plus 5 s.
 * However the export ends, the connection goes back to the pool, or is discarded when it cannot
 * even roll back, so aborted exports never leak pool slots.
 */
import type pg from "pg";
import type { PoolClient } from "pg";
import type { PlannedSql, SnapshotReader } from "../model/engine.js";
import { crlfRecords, LINE_QUOTE, planExportText } from "../reads/export/export-sql.js";
import type { ExportSnapshot } from "../reads/export/record-export.js";
import { copyStream } from "./copy-to.js";
import { parquetFromCsv } from "./parquet-from-csv.js";
import { storeError } from "./postgres-errors.js";
import { endReadTimeout, UNBOUNDED_QUERY } from "./postgres-pool.js";
import { snapshotReader } from "./postgres-snapshot.js";

/**
 * COPY options writing one text column as NDJSON lines: a quote (`LINE_QUOTE`), a delimiter and a
 * NULL marker that no line holds or is (loads refuse control characters, and JSON escapes them,
 * CR and LF too), so no line is quoted.
 */
const LINES = `FORMAT csv, QUOTE E'\\x${LINE_QUOTE.toString(16).padStart(2, "0")}', DELIMITER E'\\x02', NULL E'\\x03'`;

/**
 * COPY options writing `planExportCsvCells`'s cells as CSV records, as csv-writer.ts quotes them:
 * PostgreSQL quotes a field holding the delimiter, the quote, CR or LF, and a field equal to its
 * NULL text, so that text is a control character no cell holds (loads refuse them), or it would
 * quote every empty cell. It ends each record with LF alone: `crlfRecords` puts the CR before it.
 * Its own CSV writer over the cells costs less than lines built in SQL: one 52,920-row window at
 * scale 30 took 470–525 ms as cells, 660–880 as NDJSON lines (bench/README.md "18l").
 */
const CSV_CELLS = `FORMAT csv, NULL E'\\x03'`;

/**
 * Opens a PostgreSQL export snapshot on a connection of `pool`; its walk reads ahead while `alone`
 * (the only export open).
 */
export async function postgresExportSnapshot(pool: pg.Pool, alone: () => boolean): Promise<ExportSnapshot> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw storeError(error);
  }
  let ended = false;
  /** Set when the connection cannot be trusted to answer again (a COPY failed or was left running). */
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
    // One simple query, one round trip: the snapshot and its settings (above).
    await client.query(
      "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL statement_timeout = 0; SET LOCAL enable_nestloop = off",
    );
  } catch (error) {
    await end();
    throw storeError(error);
  }
  // An export reuses nothing across snapshots, so it never needs the generation.
  const reader = snapshotReader(client, null);
  const failingAsStoreErrors: SnapshotReader = {
    ...reader,
    run: (statement) => reader.run(statement).catch((error: unknown) => Promise.reject(storeError(error))),
  };
  return {
    // One connection: a statement read ahead waits on it for the one before.
    readers: [failingAsStoreErrors],
    copyText(format, windows) {
      const body = copied(
        windows.map((window) => planExportText(format, window.plan, reader.dialect, window.oversized)),
        format === "ndjson" ? LINES : CSV_CELLS,
      );
      return format === "ndjson" ? body : crlfRecords(body);
    },
    copyParquet: ({ windows, currency }) =>
      parquetFromCsv(
        windows.map((window) => copied([window], "FORMAT csv")),
        currency,
      ),
    readAhead: alone,
    end,
  };

  /** `statements` written by PostgreSQL with `COPY ... TO STDOUT (options)`, one after another. */
  async function* copied(statements: Iterable<PlannedSql>, options: string): AsyncIterable<Uint8Array> {
    for (const statement of statements) {
      const copy = copyStream(client, statement, options, UNBOUNDED_QUERY);
      try {
        yield* copy;
      } catch (error) {
        broken = true;
        throw storeError(error);
      } finally {
        // Stopped early, the COPY is still running on the connection: it cannot be reused.
        if (!copy.readableEnded) broken = true;
        endReadTimeout(copy);
      }
    }
  }
}
