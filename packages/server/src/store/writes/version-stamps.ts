/**
 * Data versions (CONTRACT §6): every change of what a brand can read is stamped, in the write's
 * own transaction, with the next value of that brand's own counter (`brand_versions`), so that a
 * brand's versions say nothing of other brands' activity: between two of its versions lie exactly
 * its own changes.
 *
 * - a load stamps each day it replaces (`day_versions`) and refreshes the day's row counts per
 *   market and data source (`day_row_counts`), so that changes are answered without reading
 *   records;
 * - an FX load that changes a rate stamps, for every brand and from each brand's own counter, the
 *   earliest date whose conversions change (`brand_fx_versions`): every day from there on reads
 *   differently;
 * - a grant change (the brand's) or a narrowing change (an app's) stamps the scope
 *   (`scope_versions`): a client's copy may now lack or hold rows it should not, so it resyncs.
 *
 * A brand's counter is one row updated inside each write transaction: the brand's writers queue on
 * its row lock, so its versions are issued in commit order and a reader that saw version V has seen
 * every change ≤ V of that brand. Every write also bumps the region's `data_generation` (the page
 * cache's generation, page-cache.ts; never shown to a client), always before a brand's counter, so
 * that an FX change (every brand's row) and a load (one brand's row) take their locks in one order.
 * Every statement binds its values with `Statement.bind` (sql/statement.ts `bound`) and is SQL both
 * engines read alike.
 */
import type { SqlDialect, SqlRun } from "../model/engine.js";
import type { App, Grants } from "../model/store.js";
import { narrowingChanged } from "../sql/row-mapping.js";
import { grantChangeReason, narrowingChangeReason } from "../sql/scope-reason.js";
import { bound } from "../sql/statement.js";
import { type ReplaceScope, replacedBy } from "./replace-scope.js";

type Row = Record<string, unknown>;

/** Bumps the region's data generation (the page cache's; the transaction holds its row). */
async function bumpGeneration(run: SqlRun): Promise<void> {
  await run("UPDATE data_generation SET generation = generation + 1 WHERE id = 1");
}

/**
 * Takes the brand's next version, after bumping the region's generation (the caller's transaction
 * holds both rows until it commits).
 */
export async function nextVersion(run: SqlRun, dialect: SqlDialect, brandId: string): Promise<bigint> {
  await bumpGeneration(run);
  const [row] = await run(
    ...bound(
      dialect,
      (bind) => `INSERT INTO brand_versions (brand_id, version) VALUES (${bind(brandId)}, 1)
      ON CONFLICT (brand_id) DO UPDATE SET version = brand_versions.version + 1 RETURNING version`,
    ),
  );
  return BigInt(String(row?.["version"]));
}

/**
 * After a load replaced the brand's rows of every day in `rolledUp` (its staged rows rolled up,
 * writes/record-rollup.ts `rollUpStaged`; or of every (day, data source) in it): stamps those days with
 * a new version and recounts their rows. The load then replaces their rollup rows itself
 * (record-replace.ts, writes/record-rollup.ts `rollUpLoad`).
 */
export async function stampLoad(
  run: SqlRun,
  dialect: SqlDialect,
  load: { brandId: string; rolledUp: string; replace: ReplaceScope; now: Date },
): Promise<bigint> {
  const version = await nextVersion(run, dialect, load.brandId);
  const { brandId, rolledUp } = load;
  await run(
    ...bound(
      dialect,
      (bind) => `INSERT INTO day_versions (brand_id, date, version, changed_at_ms)
      SELECT DISTINCT CAST(${bind(brandId)} AS VARCHAR), date, CAST(${bind(version.toString())} AS BIGINT),
        CAST(${bind(load.now.getTime())} AS BIGINT) FROM ${rolledUp}
      ON CONFLICT (brand_id, date) DO UPDATE SET version = excluded.version, changed_at_ms = excluded.changed_at_ms`,
    ),
  );
  await run(
    ...bound(
      dialect,
      (bind) =>
        `DELETE FROM day_row_counts WHERE brand_id = ${bind(brandId)} AND ${replacedBy(load.replace, rolledUp, "day_row_counts")}`,
    ),
  );
  await run(
    ...bound(
      dialect,
      (bind) => `INSERT INTO day_row_counts (brand_id, date, market, data_source, rows)
      SELECT CAST(${bind(brandId)} AS VARCHAR), date, market, data_source, sum(rows) FROM ${rolledUp}
      GROUP BY date, market, data_source`,
    ),
  );
  return version;
}

/**
 * Before FX rates in `staging` (currency, date, rate_e6) are upserted: when any differs from the
 * stored rate, stamps the earliest such date for every brand, each with its own next version.
 * Returns whether a rate changes (when none does, nothing reads differently and nothing is stamped).
 */
export async function stampFxChange(
  run: SqlRun,
  dialect: SqlDialect,
  change: { staging: string; now: Date },
): Promise<boolean> {
  const [row] = await run(
    `SELECT ${dialect.formatDate("min(s.date)")} AS first_date FROM ${change.staging} s
      LEFT JOIN fx_rates f ON f.currency = s.currency AND f.date = s.date
      WHERE f.rate_e6 IS NULL OR f.rate_e6 <> s.rate_e6`,
  );
  const firstDate = row?.["first_date"];
  if (typeof firstDate !== "string") return false;
  await bumpGeneration(run);
  await run(
    `INSERT INTO brand_versions (brand_id, version) SELECT brand_id, 1 FROM brands
      ON CONFLICT (brand_id) DO UPDATE SET version = brand_versions.version + 1`,
  );
  await run(
    ...bound(
      dialect,
      (bind) => `INSERT INTO brand_fx_versions (brand_id, version, first_date, changed_at_ms)
      SELECT v.brand_id, v.version, CAST(${bind(firstDate)} AS DATE), CAST(${bind(change.now.getTime())} AS BIGINT)
      FROM brand_versions v JOIN brands b ON b.brand_id = v.brand_id`,
    ),
  );
  return true;
}

/** Stamps a change of the brand's grants (`appClientId` null) or of one app's narrowing. */
async function stampScopeChange(
  run: SqlRun,
  dialect: SqlDialect,
  change: { brandId: string; appClientId: string | null; reason: string; now: Date },
): Promise<bigint> {
  const version = await nextVersion(run, dialect, change.brandId);
  await run(
    ...bound(
      dialect,
      (bind) => `INSERT INTO scope_versions (brand_id, version, app_client_id, reason, changed_at_ms)
      VALUES (${bind(change.brandId)}, CAST(${bind(version.toString())} AS BIGINT), ${bind(change.appClientId)},
        ${bind(change.reason)}, CAST(${bind(change.now.getTime())} AS BIGINT))`,
    ),
  );
  return version;
}

/** Stamps a change of the brand's grants (`change` of `grants` changed a row). */
export function stampGrantChange(
  run: SqlRun,
  dialect: SqlDialect,
  brandId: string,
  change: "add" | "remove",
  grants: Partial<Grants>,
): Promise<bigint> {
  return stampScopeChange(run, dialect, {
    brandId,
    appClientId: null,
    reason: grantChangeReason(change, grants),
    now: new Date(),
  });
}

/**
 * After an app's update, in its transaction: stamps a scope change when the app's narrowing differs
 * from `before`, its stored `markets` and `data_sources` as read before the update.
 */
export async function stampNarrowingChange(
  run: SqlRun,
  dialect: SqlDialect,
  before: Row | undefined,
  app: App,
): Promise<void> {
  if (!before) return;
  const list = (value: unknown) => (Array.isArray(value) ? value.map(String) : null);
  const stored = { ...app, markets: list(before["markets"]), dataSources: list(before["data_sources"]) };
  if (!narrowingChanged(stored, app)) return;
  await stampScopeChange(run, dialect, {
    brandId: app.brandId,
    appClientId: app.appClientId,
    reason: narrowingChangeReason(app.appClientId),
    now: new Date(),
  });
}
