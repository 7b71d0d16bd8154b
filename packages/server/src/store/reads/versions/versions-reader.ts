/**
 * The version reads: the data version of a range (`pageInfo.dataVersion`) and the days whose
 * visible data changed after a version (`marketingDataChanges`, CONTRACT §6 rule 2).
 */
import type { PlannedSql, SnapshotReader, SqlDialect } from "../../model/engine.js";
import type { AggregateQuery, RecordsQuery } from "../../model/query-request.js";
import type {
  BrandDataStatus,
  ChangedDay,
  DataChanges,
  DataChangesRequest,
  Grants,
  ReadinessFacts,
} from "../../model/store.js";
import type { RowMapping } from "../../sql/row-mapping.js";
import { reasonFor } from "../../sql/scope-reason.js";
import { brandVersionOf } from "../../sql/version-tables.js";
import { planDataChanges, planDataStatus, planDataVersion, planReadiness } from "./versions-plan.js";

/**
 * The days of `from..to` whose visible data changed after `since` (CONTRACT §6 rule 2), with the
 * caller's visible rows now, read from the version tables alone in one statement (one snapshot
 * without a transaction). With `since` null, or when the caller's scope changed since `since`,
 * every day that has visible rows.
 */
export async function readDataChanges(on: VersionRows, request: DataChangesRequest): Promise<DataChanges> {
  const { sql, params } = planDataChanges(request, on.dialect);
  const rows = await on.rows(sql, params);
  const first = rows[0];
  const version = brandVersionOf(first);
  const reason = first?.["scope_reason"];
  const scopeChange =
    request.since === null || reason === undefined || reason === null
      ? null
      : reasonFor(String(reason), request.grants);
  const fxReach = brandFxReach(first?.["fx_changes"]);
  const everyDay = request.since === null || scopeChange !== null;
  const since = request.since ?? 0n;
  const days: ChangedDay[] = [];
  for (const row of rows) {
    const day = row["day"];
    if (day === null || day === undefined) continue;
    const date = String(day);
    const visibleRows = Number(row["rows"] ?? 0);
    const dayVersion = BigInt(String(row["version"]));
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
      changedAt: new Date(byFx ? fx!.changedAtMs : Number(row["changed_at_ms"])),
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
 * The brand's FX changes reaching days up to the range's end (`planDataChanges`' `fx_changes`:
 * `first-day version changed-at-ms` items by first day, or null for none); the returned lookup
 * answers for ascending days, each the running maximum over the changes whose first day is on or
 * before it (null before the first).
 */
function brandFxReach(text: unknown): (day: string) => FxReach | null {
  const changes =
    text === null || text === undefined
      ? []
      : String(text)
          .split(",")
          .map((item) => item.split(" "));
  let next = 0;
  let reach: FxReach | null = null;
  return (day) => {
    for (; next < changes.length && changes[next]![0]! <= day; next += 1) {
      const version = BigInt(changes[next]![1]!);
      const changedAtMs = Number(changes[next]![2]!);
      reach = {
        version: reach === null || version > reach.version ? version : reach.version,
        changedAtMs: reach === null || changedAtMs > reach.changedAtMs ? changedAtMs : reach.changedAtMs,
      };
    }
    return reach;
  };
}

/** The data version of the brand's days in the range (`pageInfo.dataVersion`). */
export async function readDataVersion(
  reader: SnapshotReader,
  query: RecordsQuery | AggregateQuery,
): Promise<string> {
  const table = await reader.run(planDataVersion(query.scope, reader.dialect));
  return String(table.rowCount === 0 ? 0 : (table.value(0, 0) ?? 0));
}

/** What the readiness and data status reads run on: one statement on any connection. */
export interface VersionRows {
  readonly dialect: SqlDialect;
  readonly rowsAs: RowMapping;
  rows(sql: string, params?: PlannedSql["params"]): Promise<Record<string, unknown>[]>;
}

/** A brand's readiness facts for a processing date (CONTRACT §3 rule 8), with its data version. */
export async function readReadiness(
  on: VersionRows,
  request: { brandId: string; processingDate: string; grants: Grants },
): Promise<ReadinessFacts> {
  const { sql, params } = planReadiness(request.brandId, request.processingDate, request.grants, on.dialect);
  const [row] = await on.rows(sql, params);
  return { ...on.rowsAs.readiness(row), dataVersion: brandVersionOf(row).toString() };
}

/** A brand's data at a glance (`mdq status`). */
export async function readDataStatus(on: VersionRows, brandId: string): Promise<BrandDataStatus> {
  const { sql, params } = planDataStatus(brandId, on.dialect);
  const [row] = await on.rows(sql, params);
  return on.rowsAs.dataStatus(row);
}
