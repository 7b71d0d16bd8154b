/**
 * Brand and app rows as every engine reads them; an engine passes how its driver returns an
 * instant (DuckDB: epoch milliseconds from `epoch_ms`; PostgreSQL: a Date).
 */
import type { App, Brand } from "./store.js";

type Row = Record<string, unknown>;

/** An instant column's value as a Date, or null for SQL NULL. */
export type InstantReader = (value: unknown) => Date | null;

/** A `brands` row (brand_id, name, created_at). */
export function brandFromRow(row: Row, instant: InstantReader): Brand {
  return {
    brandId: String(row["brand_id"]),
    name: String(row["name"]),
    createdAt: instant(row["created_at"]) as Date,
  };
}

/** An `apps` row (every column of the table). */
export function appFromRow(row: Row, instant: InstantReader): App {
  return {
    appClientId: String(row["app_client_id"]),
    brandId: String(row["brand_id"]),
    name: String(row["name"]),
    secretHash: String(row["secret_hash"]),
    previousSecretHash: (row["previous_secret_hash"] as string | null) ?? null,
    previousSecretExpiresAt: instant(row["previous_secret_expires_at"]),
    markets: (row["markets"] as string[] | null) ?? null,
    dataSources: (row["data_sources"] as string[] | null) ?? null,
    revokedAt: instant(row["revoked_at"]),
    createdAt: instant(row["created_at"]) as Date,
  };
}

/** Whether an app's narrowing (markets or data sources) differs between two states of it. */
export function narrowingChanged(before: App, after: App): boolean {
  const same = (a: string[] | null, b: string[] | null) =>
    a === null || b === null ? a === b : [...a].sort().join(",") === [...b].sort().join(",");
  return !same(before.markets, after.markets) || !same(before.dataSources, after.dataSources);
}
