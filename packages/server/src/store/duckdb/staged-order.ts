/**
 * Whether a DuckDB load's staged rows must be sorted before they go into `records`. DuckDB prunes
 * a read by the date range of each row group (its zone maps), so what it needs of the stored order
 * is a brand's days together; the order within a day (`STORED_ORDER`'s record id, record-replace.ts)
 * is PostgreSQL's walk index's and serves DuckDB nothing. Rows staged with each day's rows
 * together and the days ascending or descending are therefore inserted as they come: a file
 * exported day by day, and every load of a single day. Not sorting them took 1.7–2.5 s off a
 * 10 M-row load's final transaction (bench/load.mjs, issue 19); at 1 M rows the gain was within
 * the noise.
 */
import type { DuckDBConnection } from "@duckdb/node-api";

/** One day of the staged rows: where its rows start and end in staging order, and how many. */
interface StagedDay {
  first: bigint;
  last: bigint;
  rows: bigint;
}

/**
 * Whether the rows of `staging` (in the order they were staged: `rowid`) come each day's rows
 * together, the days in ascending or descending order. One grouped scan of the staged rows.
 */
export async function stagedDaysInOrder(connection: DuckDBConnection, staging: string): Promise<boolean> {
  const reader = await connection.runAndReadAll(
    `SELECT min(rowid) AS first, max(rowid) AS last, count(*) AS rows FROM ${staging}
      GROUP BY date ORDER BY date`,
  );
  const days = reader.getRowObjectsJS() as unknown as StagedDay[];
  if (!days.every((day) => day.last - day.first + 1n === day.rows)) return false;
  const ascending = days.every((day, index) => index === 0 || day.first > days[index - 1]!.last);
  const descending = days.every((day, index) => index === 0 || day.last < days[index - 1]!.first);
  return ascending || descending;
}
