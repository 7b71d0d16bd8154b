/**
 * The last step of every load, one algorithm for both engines: the load's rows (in a staging
 * table, or copied from a file straight into `records`, `LoadedRows`) replace the brand's rows
 * they cover (whole days, or (day, data source) pairs with `--replace sources`), and the load is
 * logged and stamped with a data version. Every statement binds its values with `Statement.bind`
 * (sql/statement.ts `bound`) and is SQL both engines read alike; the caller's transaction makes it all or nothing.
 */
import { randomBytes } from "node:crypto";
import type { SqlDialect, SqlRun } from "../model/engine.js";
import type { LoadOrigin, LoadSummary } from "../model/store.js";
import { RecordIdConflictError } from "../model/store-errors.js";
import { rolledUpTableOf } from "../sql/rollup-table.js";
import { bound } from "../sql/statement.js";
import { rollUpLoad, rollUpStaged } from "./record-rollup.js";
import { type ReplaceScope, replacedBy } from "./replace-scope.js";
import { stampLoad } from "./version-stamps.js";

/** The columns of a staging table, in the order a stored-records file holds them. */
export const STAGING_COLUMNS = [
  "record_id",
  "date",
  "market",
  "data_source",
  "channel",
  "campaign_id",
  "campaign_name",
  "impressions",
  "clicks",
  "spend_e4",
  "conversions_e4",
  "revenue_e4",
  "currency",
] as const;

/** The columns of `records`: the brand, then the stored columns. */
export const RECORDS_COLUMNS = ["brand_id", ...STAGING_COLUMNS] as const;

/**
 * The order a load inserts its rows in: a brand's days together (DuckDB's zone maps), and, within
 * them, PostgreSQL's walk index's own order (`records_brand_date`, migration 5: brand, date
 * descending, record id). Inserted in its index's order, a B-tree only appends; inserted
 * ascending, each row went before the last one inserted, every full page split in half, and the
 * index grew to 1.8× its compact size. Measured (PostgreSQL 15, 2026-11-26): inserting 1 M rows
 * 4.72 s → 4.36 s, their index 148 MB → 82 MB; the demo at scale 30, its index 253 MB → 145 MB.
 */
export const STORED_ORDER = "date DESC, record_id";

/**
 * A load's rows as its store holds them when the final transaction starts: in a staging table,
 * or still in a file that `write` copies straight into `records` once the rows it replaces are
 * gone, its rollup (`rolledUpRowsOf`) already in a table (PostgreSQL's load of a checked file:
 * `COPY` into `records` skips the staging table's write, its `ANALYZE` and a row-by-row
 * `INSERT`, bench/README.md "Loads").
 */
export type LoadedRows =
  | {
      /** The staging table (a name of ours, never input), with `STAGING_COLUMNS`. */
      staging: string;
      /** Rows in the staging table. */
      rows: number;
      /**
       * Whether the staging table's rows may be inserted as they are: already in `STORED_ORDER`,
       * or, on DuckDB, whose reads need only a brand's days together, with their days together
       * and in order (duckdb/staged-order.ts).
       */
      sorted: boolean;
      /** Whether the stager rolled the rows up already, into `rolledUpTableOf(staging)`. */
      rolledUpByStager: boolean;
    }
  | {
      /** The load's rows rolled up (`rolledUpRowsOf`'s columns; a name of ours, never input). */
      rolledUp: string;
      /** Makes a table of the load's record ids (`record_id`) for the clash check; resolves with its name. */
      recordIds: () => Promise<string>;
      /** Writes the load's rows, in `STORED_ORDER`, into `records`; resolves with how many. */
      write: () => Promise<number>;
    };

/** A load ready to replace the brand's rows, in the caller's transaction. */
export interface StagedLoad {
  brandId: string;
  loaded: LoadedRows;
  origin: LoadOrigin;
}

/**
 * Whether the brand has rows the load leaves alone: rows of days (or of (day, data source) pairs,
 * with `--replace sources`) outside the load, read from the day row counts the loads keep exact.
 */
async function keepsRows(
  run: SqlRun,
  dialect: SqlDialect,
  brandId: string,
  replace: ReplaceScope,
  rolledUp: string,
): Promise<boolean> {
  const [found] = await run(
    ...bound(
      dialect,
      (bind) => `SELECT count(*) AS kept FROM (SELECT 1 FROM day_row_counts d
      WHERE d.brand_id = ${bind(brandId)} AND NOT ${replacedBy(replace, rolledUp, "d")} LIMIT 1) AS any_kept`,
    ),
  );
  return Number(found?.["kept"] ?? 0) > 0;
}

/** The origin of a load made without one: the API, today (UTC). */
export function defaultOrigin(): LoadOrigin {
  return { processingDate: new Date().toISOString().slice(0, 10), source: "api" };
}

/**
 * Replaces the brand's rows covered by the load with its rows, logs the load and stamps its days.
 * Throws `RecordIdConflictError` (the caller rolls back) when a record id of the load names a
 * record of the brand that the load leaves alone.
 *
 * Rows are inserted in `STORED_ORDER`.
 */
export async function replaceBrandRows(
  run: SqlRun,
  dialect: SqlDialect,
  load: StagedLoad,
): Promise<LoadSummary> {
  const { brandId, loaded, origin } = load;
  const replace = origin.replace ?? "days";
  // The load's days, sources, counts and sums, a few rows per day: what every statement below
  // but the insert and the clash check reads.
  const rolledUp = "staging" in loaded ? rolledUpTableOf(loaded.staging) : loaded.rolledUp;
  if ("staging" in loaded && !loaded.rolledUpByStager) await rollUpStaged(run, loaded.staging);
  // A record id names one record of the brand: it may move within the replaced rows, but may not
  // collide with a record this load leaves alone. Whether the load leaves any is read from the
  // day row counts (a few rows per day): a reload or a first load has nothing to check. The rows
  // left alone are found first, then joined with the load's: joined first, DuckDB hashed every
  // staged row against every row of the brand (a reload of 10 M rows, none left alone: 1.1 s,
  // and the server's peak RSS at 509 MB; on 1 M rows 76–114 ms against 19–21 ms now).
  if (await keepsRows(run, dialect, brandId, replace, rolledUp)) {
    const loadedIds = "staging" in loaded ? loaded.staging : await loaded.recordIds();
    const clashes = await run(
      ...bound(
        dialect,
        (bind) => `WITH kept AS (SELECT r.record_id, r.date FROM records r
          WHERE r.brand_id = ${bind(brandId)} AND NOT ${replacedBy(replace, rolledUp, "r")})
        SELECT s.record_id, ${dialect.formatDate("k.date")} AS kept_day FROM kept k
        JOIN ${loadedIds} s ON s.record_id = k.record_id ORDER BY s.record_id LIMIT 5`,
      ),
    );
    if (clashes.length > 0) {
      throw new RecordIdConflictError(
        clashes.map((clash) => ({
          recordId: String(clash["record_id"]),
          keptDay: String(clash["kept_day"]),
        })),
      );
    }
  }
  await run(
    ...bound(
      dialect,
      (bind) =>
        `DELETE FROM records WHERE brand_id = ${bind(brandId)} AND ${replacedBy(replace, rolledUp, "records")}`,
    ),
  );
  const columns = STAGING_COLUMNS.join(", ");
  let rows: number;
  if ("staging" in loaded) {
    await run(
      ...bound(
        dialect,
        (bind) => `INSERT INTO records (brand_id, ${columns})
        SELECT CAST(${bind(brandId)} AS VARCHAR), ${columns} FROM ${loaded.staging}${loaded.sorted ? "" : ` ORDER BY ${STORED_ORDER}`}`,
      ),
    );
    rows = loaded.rows;
  } else {
    rows = await loaded.write();
  }
  await stampLoad(run, dialect, { brandId, rolledUp, replace, now: new Date() });
  await rollUpLoad(run, dialect, { brandId, rolledUp, replace });
  const [range] = await run(
    `SELECT ${dialect.formatDate("min(date)")} AS first_day, ${dialect.formatDate("max(date)")} AS last_day,
      count(DISTINCT date) AS days, coalesce(sum(rows), 0) AS rows FROM ${rolledUp}`,
  );
  // A file and its rollup are written together (load/records-reader.ts `writeStoredLoad`):
  // should they disagree, neither is trusted.
  if (!("staging" in loaded) && Number(range?.["rows"] ?? 0) !== rows) {
    throw new Error(`the load wrote ${rows} rows, its rollup counts ${String(range?.["rows"])}`);
  }
  await run(`DROP TABLE ${rolledUp}`);
  const firstDay = (range?.["first_day"] as string | null | undefined) ?? null;
  const lastDay = (range?.["last_day"] as string | null | undefined) ?? null;
  const loadId = `load_${randomBytes(8).toString("hex")}`;
  await run(
    ...bound(
      dialect,
      (
        bind,
      ) => `INSERT INTO loads (load_id, brand_id, processing_date, loaded_at, source, rows, first_day, last_day)
      VALUES (${bind(loadId)}, ${bind(brandId)}, CAST(${bind(origin.processingDate)} AS DATE), now(), ${bind(origin.source)},
        CAST(${bind(String(rows))} AS BIGINT), CAST(${bind(firstDay)} AS DATE), CAST(${bind(lastDay)} AS DATE))`,
    ),
  );
  return {
    loadId,
    rows,
    days: Number(range?.["days"] ?? 0),
    from: firstDay,
    to: lastDay,
    processingDate: origin.processingDate,
  };
}
