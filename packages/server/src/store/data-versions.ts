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
 * Every statement here uses `$n` placeholders and SQL both engines read alike.
 */
import type { SnapshotReader } from "./page-reads.js";
import type { PlannedSql } from "./query-planner.js";
import { rollUpLoad } from "./record-rollup.js";
import { type ReplaceScope, replacedBy } from "./replace-scope.js";
import { narrowingChanged } from "./row-mapping.js";
import type { SqlDialect } from "./sql-dialect.js";
import type { App, Grants } from "./store.js";

type Row = Record<string, unknown>;

/** Runs one statement on the caller's connection (inside its transaction or snapshot). */
export type SqlRun = (sql: string, params?: readonly unknown[]) => Promise<Row[]>;

/** A day whose readable data changed after a version (CONTRACT §6 rule 2). */
export interface ChangedDay {
  date: string;
  /** The day's own version: its last load, or a later FX change that reaches it. */
  version: bigint;
  changedAt: Date;
  /** The caller's visible rows on the day now (grants and the app's narrowing applied). */
  rows: number;
}

/** What changed for a caller in a date range since a version. */
export interface DataChanges {
  /** The brand's current version (`brandVersionColumn`): what the caller passes as `since` next time. */
  version: bigint;
  /** Why the caller's visible scope changed since `since`; null when it did not. */
  scopeChange: string | null;
  days: ChangedDay[];
}

/** Who asks, for which days, since which version (null: every day that has data). */
export interface DataChangesRequest {
  brandId: string;
  appClientId: string;
  grants: Grants;
  from: string;
  to: string;
  since: bigint | null;
}

/** The tables in DuckDB (PostgreSQL creates the same in migration 2, `data_versions`, with its "C" collation). */
export const DATA_VERSION_TABLES = [
  `CREATE TABLE IF NOT EXISTS day_versions (
    brand_id VARCHAR NOT NULL,
    date DATE NOT NULL,
    version BIGINT NOT NULL,
    changed_at_ms BIGINT NOT NULL,
    PRIMARY KEY (brand_id, date)
  )`,
  `CREATE TABLE IF NOT EXISTS day_row_counts (
    brand_id VARCHAR NOT NULL,
    date DATE NOT NULL,
    market VARCHAR NOT NULL,
    data_source VARCHAR NOT NULL,
    rows BIGINT NOT NULL,
    PRIMARY KEY (brand_id, date, market, data_source)
  )`,
  // Before versions were per brand: FX changes stamped from the region's counter; read once, by
  // DATA_VERSION_BACKFILL, into brand_fx_versions.
  `CREATE TABLE IF NOT EXISTS fx_versions (
    version BIGINT PRIMARY KEY,
    first_date DATE NOT NULL,
    changed_at_ms BIGINT NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS brand_fx_versions (
    brand_id VARCHAR NOT NULL,
    version BIGINT NOT NULL,
    first_date DATE NOT NULL,
    changed_at_ms BIGINT NOT NULL,
    PRIMARY KEY (brand_id, version)
  )`,
  `CREATE TABLE IF NOT EXISTS brand_versions (
    brand_id VARCHAR PRIMARY KEY,
    version BIGINT NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS scope_versions (
    brand_id VARCHAR NOT NULL,
    version BIGINT NOT NULL,
    app_client_id VARCHAR,
    reason VARCHAR NOT NULL,
    changed_at_ms BIGINT NOT NULL,
    PRIMARY KEY (brand_id, version)
  )`,
];

/**
 * Makes versions per brand in a store that predates it: each FX change stamped from the region's
 * counter is copied to every brand (only when no brand has a counter yet, so once), and each brand's
 * counter starts at the greatest of its stamps, so that its versions keep growing for a client that
 * stored one. Idempotent: a brand that has a counter keeps it.
 */
export const BRAND_VERSION_BACKFILL = [
  `INSERT INTO brand_fx_versions (brand_id, version, first_date, changed_at_ms)
    SELECT b.brand_id, f.version, f.first_date, f.changed_at_ms FROM brands b CROSS JOIN fx_versions f
    WHERE NOT EXISTS (SELECT 1 FROM brand_fx_versions) AND NOT EXISTS (SELECT 1 FROM brand_versions)`,
  `INSERT INTO brand_versions (brand_id, version)
    SELECT brand_id, max(version) FROM (
      SELECT brand_id, version FROM day_versions
      UNION ALL SELECT brand_id, version FROM scope_versions
      UNION ALL SELECT brand_id, version FROM brand_fx_versions
    ) stamps
    WHERE brand_id NOT IN (SELECT brand_id FROM brand_versions) GROUP BY brand_id`,
];

/**
 * Stamps the data already in a store that predates data versions: every day holding records at
 * the current version, with its row counts. Runs once (it does nothing when counts exist).
 */
export const DATA_VERSION_BACKFILL = [
  `INSERT INTO day_row_counts (brand_id, date, market, data_source, rows)
    SELECT brand_id, date, market, data_source, count(*) FROM records
    WHERE NOT EXISTS (SELECT 1 FROM day_row_counts) GROUP BY brand_id, date, market, data_source`,
  `INSERT INTO day_versions (brand_id, date, version, changed_at_ms)
    SELECT DISTINCT brand_id, date, (SELECT generation FROM data_generation WHERE id = 1), 0 FROM day_row_counts
    WHERE NOT EXISTS (SELECT 1 FROM day_versions)`,
  ...BRAND_VERSION_BACKFILL,
];

/** Bumps the region's data generation (the page cache's; the transaction holds its row). */
async function bumpGeneration(run: SqlRun): Promise<void> {
  await run("UPDATE data_generation SET generation = generation + 1 WHERE id = 1");
}

/**
 * Takes the brand's next version, after bumping the region's generation (the caller's transaction
 * holds both rows until it commits).
 */
export async function nextVersion(run: SqlRun, brandId: string): Promise<bigint> {
  await bumpGeneration(run);
  const [row] = await run(
    `INSERT INTO brand_versions (brand_id, version) VALUES ($1, 1)
      ON CONFLICT (brand_id) DO UPDATE SET version = brand_versions.version + 1 RETURNING version`,
    [brandId],
  );
  return BigInt(String(row?.["version"]));
}

/**
 * After a load replaced the brand's rows of every day in `rolledUp` (its staged rows rolled up,
 * record-rollup.ts `rollUpStaged`; or of every (day, data source) in it): stamps those days with
 * a new version, recounts their rows and replaces their rollup rows.
 */
export async function stampLoad(
  run: SqlRun,
  dialect: SqlDialect,
  load: { brandId: string; rolledUp: string; replace: ReplaceScope; now: Date },
): Promise<bigint> {
  const version = await nextVersion(run, load.brandId);
  const { brandId, rolledUp } = load;
  await run(
    `INSERT INTO day_versions (brand_id, date, version, changed_at_ms)
      SELECT DISTINCT CAST($1 AS VARCHAR), date, CAST($2 AS BIGINT), CAST($3 AS BIGINT) FROM ${rolledUp}
      ON CONFLICT (brand_id, date) DO UPDATE SET version = excluded.version, changed_at_ms = excluded.changed_at_ms`,
    [brandId, version.toString(), load.now.getTime()],
  );
  await run(
    `DELETE FROM day_row_counts WHERE brand_id = $1 AND ${replacedBy(load.replace, rolledUp, "day_row_counts")}`,
    [brandId],
  );
  await run(
    `INSERT INTO day_row_counts (brand_id, date, market, data_source, rows)
      SELECT CAST($1 AS VARCHAR), date, market, data_source, sum(rows) FROM ${rolledUp}
      GROUP BY date, market, data_source`,
    [brandId],
  );
  await rollUpLoad(run, dialect, load);
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
    `INSERT INTO brand_fx_versions (brand_id, version, first_date, changed_at_ms)
      SELECT v.brand_id, v.version, CAST($1 AS DATE), CAST($2 AS BIGINT)
      FROM brand_versions v JOIN brands b ON b.brand_id = v.brand_id`,
    [firstDate, change.now.getTime()],
  );
  return true;
}

/** Stamps a change of the brand's grants (`appClientId` null) or of one app's narrowing. */
async function stampScopeChange(
  run: SqlRun,
  change: { brandId: string; appClientId: string | null; reason: string; now: Date },
): Promise<bigint> {
  const version = await nextVersion(run, change.brandId);
  await run(
    `INSERT INTO scope_versions (brand_id, version, app_client_id, reason, changed_at_ms)
      VALUES ($1, CAST($2 AS BIGINT), $3, $4, CAST($5 AS BIGINT))`,
    [change.brandId, version.toString(), change.appClientId, change.reason, change.now.getTime()],
  );
  return version;
}

/** Stamps a change of the brand's grants (`change` of `grants` changed a row). */
export function stampGrantChange(
  run: SqlRun,
  brandId: string,
  change: "add" | "remove",
  grants: Partial<Grants>,
): Promise<bigint> {
  return stampScopeChange(run, {
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
export async function stampNarrowingChange(run: SqlRun, before: Row | undefined, app: App): Promise<void> {
  if (!before) return;
  const list = (value: unknown) => (Array.isArray(value) ? value.map(String) : null);
  const stored = { ...app, markets: list(before["markets"]), dataSources: list(before["data_sources"]) };
  if (!narrowingChanged(stored, app)) return;
  await stampScopeChange(run, {
    brandId: app.brandId,
    appClientId: app.appClientId,
    reason: narrowingChangeReason(app.appClientId),
    now: new Date(),
  });
}

/**
 * What `scope_versions.reason` holds: the change as JSON, not as a sentence, because the sentence a
 * caller reads names only the markets and data sources inside that caller's scope
 * (`reasonFor`): an app narrowed to GB must not learn that the brand was granted DE.
 */
type ScopeChange =
  | { kind: "grants"; change: "add" | "remove"; markets: string[]; dataSources: string[] }
  | { kind: "narrowing"; appClientId: string };

/** The stored reason of a grant change. */
function grantChangeReason(change: "add" | "remove", grants: Partial<Grants>): string {
  const stored: ScopeChange = {
    kind: "grants",
    change,
    markets: [...(grants.markets ?? [])],
    dataSources: [...(grants.dataSources ?? [])],
  };
  return JSON.stringify(stored);
}

/** The stored reason of a change of an app's narrowing. */
function narrowingChangeReason(appClientId: string): string {
  return JSON.stringify({ kind: "narrowing", appClientId } satisfies ScopeChange);
}

/**
 * The sentence a caller reads for a stored reason: a grant added names only the markets and data
 * sources the caller may now read; a grant removed names none (the caller may never have seen
 * them); a reason stored before reasons were JSON names none either.
 */
export function reasonFor(stored: string, grants: Grants): string {
  let change: ScopeChange | undefined;
  try {
    change = JSON.parse(stored) as ScopeChange;
  } catch {
    change = undefined;
  }
  if (change?.kind === "narrowing") {
    return `the markets or data sources app ${change.appClientId} is narrowed to changed`;
  }
  if (change?.kind !== "grants") return "the brand's grants changed";
  if (change.change === "remove") return "the brand's grants changed: removed markets or data sources";
  const markets = change.markets.filter((market) => grants.markets.includes(market));
  const dataSources = change.dataSources.filter((source) => grants.dataSources.includes(source));
  const named = [
    markets.length > 0 ? `markets ${markets.join(", ")}` : null,
    dataSources.length > 0 ? `data sources ${dataSources.join(", ")}` : null,
  ].filter((part) => part !== null);
  return named.length > 0
    ? `the brand's grants changed: added ${named.join(" and ")}`
    : "the brand's grants changed";
}

/** `$first, $first+1, …` for `count` list values: IN lists bound value by value. */
function placeholders(first: number, count: number): string {
  return Array.from({ length: count }, (_, index) => `$${first + index}`).join(", ");
}

/**
 * The brand's latest version: its latest load, FX change or scope change, all stamped from its own
 * counter. This is the version a brand is shown (readiness, `marketingDataChanges`): another
 * brand's load never moves it nor shows in the gap between two of its versions. It only grows,
 * lives in the store, and reads the same on every instance (CONTRACT §6.1). It is the counter
 * itself (`brand_versions`, one row read by its key): every value the counter takes is stamped in
 * the same transaction (`nextVersion`'s callers each stamp what they bump it for; an FX change
 * stamps every brand it bumps), so the counter equals the greatest of the brand's stamps, which
 * three `max(version)` reads of the stamp tables gave before (1.5 ms of a 366-day
 * `marketingDataChanges` in DuckDB on a 2-core AMD EPYC). As a column of a SELECT, binding the
 * brand with `brand`; a brand nothing was stamped for has no row (version 0).
 */
export function brandVersionColumn(brand: string): string {
  return `(SELECT version FROM brand_versions WHERE brand_id = ${brand}) AS brand_version`;
}

/** The brand's latest version from a row holding `brandVersionColumn`. */
export function brandVersionOf(row: Record<string, unknown> | undefined): bigint {
  return versionOf(row?.["brand_version"]);
}

/** A version read from the store: 0 when there is none (NULL). */
function versionOf(value: unknown): bigint {
  return value === null || value === undefined ? 0n : BigInt(String(value));
}

/**
 * The days of `from..to` whose visible data changed after `since` (CONTRACT §6 rule 2), with the
 * caller's visible rows now, read from the version tables alone. With `since` null, or when the
 * caller's scope changed since `since`, every day that has visible rows.
 */
export async function readDataChanges(
  reader: SnapshotReader,
  request: DataChangesRequest,
): Promise<DataChanges> {
  const value = async (sql: string, params: PlannedSql["params"] = []) =>
    (await reader.run({ sql, params })).value(0, 0);
  const { markets, dataSources } = request.grants;
  const visible =
    markets.length > 0 && dataSources.length > 0
      ? `c.market IN (${placeholders(4, markets.length)}) AND c.data_source IN (${placeholders(4 + markets.length, dataSources.length)})`
      : "FALSE";
  // Columns: the brand's version (`brandVersionColumn`), then per day: date, day version, day
  // changed at, visible rows; one row of the version alone when no day has any.
  // Set-based: one grouped read of the row counts joined by day, not a correlated count per day.
  const table = await reader.run({
    sql: `SELECT v.brand_version, d.day, d.version, d.changed_at_ms, d.rows
    FROM (SELECT ${brandVersionColumn("$1")}) v LEFT JOIN (
      SELECT ${reader.dialect.formatDate("d.date")} AS day, d.date, d.version, d.changed_at_ms,
        coalesce(c.rows, 0) AS rows
      FROM day_versions d LEFT JOIN (
        SELECT c.date, sum(c.rows) AS rows FROM day_row_counts c
        WHERE c.brand_id = $1 AND c.date BETWEEN CAST($2 AS DATE) AND CAST($3 AS DATE) AND ${visible}
        GROUP BY c.date) c ON c.date = d.date
      WHERE d.brand_id = $1 AND d.date BETWEEN CAST($2 AS DATE) AND CAST($3 AS DATE)) d ON TRUE
    ORDER BY d.date`,
    params: [request.brandId, request.from, request.to, ...markets, ...dataSources],
  });
  const version = versionOf(table.value(0, 0));
  let scopeChange: string | null = null;
  if (request.since !== null) {
    const reason = await value(
      `SELECT reason FROM scope_versions WHERE brand_id = $1 AND version > CAST($2 AS BIGINT)
        AND (app_client_id IS NULL OR app_client_id = $3) ORDER BY version DESC LIMIT 1`,
      [request.brandId, request.since.toString(), request.appClientId],
    );
    scopeChange = reason === undefined || reason === null ? null : reasonFor(String(reason), request.grants);
  }
  const fxReach = await brandFxReach(reader, request.brandId, request.to);
  const everyDay = request.since === null || scopeChange !== null;
  const since = request.since ?? 0n;
  const days: ChangedDay[] = [];
  for (let row = 0; row < table.rowCount; row += 1) {
    const day = table.value(row, 1);
    if (day === null || day === undefined) continue;
    const date = String(day);
    const visibleRows = Number(table.value(row, 4) ?? 0);
    const dayVersion = BigInt(String(table.value(row, 2)));
    const fx = fxReach(date);
    const fxVersion = fx?.version ?? null;
    const changed = everyDay
      ? visibleRows > 0
      : dayVersion > since || (fxVersion !== null && fxVersion > since && visibleRows > 0);
    if (!changed) continue;
    const byFx = fxVersion !== null && fxVersion > dayVersion;
    days.push({
      date,
      version: byFx ? fxVersion : dayVersion,
      changedAt: new Date(byFx ? fx!.changedAtMs : Number(table.value(row, 3))),
      rows: visibleRows,
    });
  }
  return { version, scopeChange, days };
}

/** The latest FX change reaching a day: the greatest version and time among those from its first day on. */
interface FxReach {
  version: bigint;
  changedAtMs: number;
}

/**
 * The brand's FX changes reaching days up to `to` (brand_fx_versions, a few rows per FX upload),
 * read once; the returned lookup answers for ascending days, each the running maximum over the
 * changes whose first day is on or before it (null before the first).
 */
async function brandFxReach(
  reader: SnapshotReader,
  brandId: string,
  to: string,
): Promise<(day: string) => FxReach | null> {
  const table = await reader.run({
    sql: `SELECT ${reader.dialect.formatDate("first_date")}, version, changed_at_ms FROM brand_fx_versions
      WHERE brand_id = $1 AND first_date <= CAST($2 AS DATE) ORDER BY first_date`,
    params: [brandId, to],
  });
  let next = 0;
  let reach: FxReach | null = null;
  return (day) => {
    for (; next < table.rowCount && String(table.value(next, 0)) <= day; next += 1) {
      const version = BigInt(String(table.value(next, 1)));
      const changedAtMs = Number(table.value(next, 2));
      reach = {
        version: reach === null || version > reach.version ? version : reach.version,
        changedAtMs: reach === null || changedAtMs > reach.changedAtMs ? changedAtMs : reach.changedAtMs,
      };
    }
    return reach;
  };
}
