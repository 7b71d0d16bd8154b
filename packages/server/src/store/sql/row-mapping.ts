/**
 * Brand, app, grant and readiness rows as every engine reads them, and an app's mutable state as
 * every engine writes it; an engine passes how its driver returns an instant (DuckDB: epoch
 * milliseconds from `epoch_ms`; PostgreSQL: a Date).
 */
import type { App, Brand, BrandDataStatus, Grants, ReadinessFacts } from "../model/store.js";

type Row = Record<string, unknown>;

/** An instant column's value as a Date, or null for SQL NULL. */
export type InstantReader = (value: unknown) => Date | null;

/** How an engine's rows read as the store's types. */
export interface RowMapping {
  /** A `brands` row (brand_id, name, created_at). */
  brand(row: Row): Brand;
  /** An `apps` row (every column of the table). */
  app(row: Row): App;
  /** A brand's grants from its `grants` rows (kind, value), ordered by value. */
  grants(rows: Row[]): Grants;
  /** Readiness facts from a row of `published`, `last_processed_at` and `available_through`. */
  readiness(row: Row | undefined): Omit<ReadinessFacts, "dataVersion">;
  /** A brand's data status from a row of `rows`, `first_day`, `last_day`, `last_published_*`. */
  dataStatus(row: Row | undefined): BrandDataStatus;
}

/** The row mapping of an engine whose driver returns instants as `instant` reads them. */
export function rowMapping(instant: InstantReader): RowMapping {
  return {
    brand: (row) => brandFromRow(row, instant),
    app: (row) => appFromRow(row, instant),
    grants: grantsFromRows,
    readiness: (row) => readinessFromRow(row, instant),
    dataStatus: (row) => ({
      rows: Number(row?.["rows"] ?? 0),
      firstDay: (row?.["first_day"] as string | null) ?? null,
      lastDay: (row?.["last_day"] as string | null) ?? null,
      lastPublishedAt: instant(row?.["last_published_at"]),
      lastPublishedDate: (row?.["last_published_date"] as string | null) ?? null,
    }),
  };
}

function brandFromRow(row: Row, instant: InstantReader): Brand {
  return {
    brandId: String(row["brand_id"]),
    name: String(row["name"]),
    createdAt: instant(row["created_at"]) as Date,
  };
}

function appFromRow(row: Row, instant: InstantReader): App {
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

/** A value of an app's mutable columns. */
export type AppStateValue = string | string[] | Date | null;

/**
 * The values of an app's mutable columns, in table order: secret_hash, previous_secret_hash,
 * previous_secret_expires_at, markets, data_sources, revoked_at.
 */
export function appStateValues(app: App): AppStateValue[] {
  return [
    app.secretHash,
    app.previousSecretHash,
    app.previousSecretExpiresAt,
    app.markets,
    app.dataSources,
    app.revokedAt,
  ];
}

/** The mutable columns of `apps`, in the order of `appStateValues`. */
export const APP_STATE_COLUMNS = [
  "secret_hash",
  "previous_secret_hash",
  "previous_secret_expires_at",
  "markets",
  "data_sources",
  "revoked_at",
] as const;

function grantsFromRows(rows: Row[]): Grants {
  return {
    markets: rows.filter((row) => row["kind"] === "market").map((row) => String(row["value"])),
    dataSources: rows.filter((row) => row["kind"] === "data_source").map((row) => String(row["value"])),
  };
}

function readinessFromRow(row: Row | undefined, instant: InstantReader): Omit<ReadinessFacts, "dataVersion"> {
  return {
    published: row?.["published"] === true,
    lastProcessedAt: instant(row?.["last_processed_at"]),
    availableThrough: (row?.["available_through"] as string | null) ?? null,
  };
}

/** Whether an app's narrowing (markets or data sources) differs between two states of it. */
export function narrowingChanged(before: App, after: App): boolean {
  const same = (a: string[] | null, b: string[] | null) =>
    a === null || b === null ? a === b : [...a].sort().join(",") === [...b].sort().join(",");
  return !same(before.markets, after.markets) || !same(before.dataSources, after.dataSources);
}
