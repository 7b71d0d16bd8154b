/**
 * What an operator can do to a region: brands, apps, grants, FX rates, loads, publishes, keys and
 * status. The admin API is a thin HTTP layer over this; every change to apps, grants or keys
 * applies to this process's next request (its app cache is cleared) and is announced on the
 * change feed, so that the region's other instances apply it at once too.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { isCalendarDate, todayIn } from "../calendar.js";
import { type Change, type ChangeFeed, SOLO_CHANGE_FEED } from "../cluster/change-feed.js";
import { AdminError } from "../errors.js";
import { readFxFile } from "../load/fx-file.js";
import { LoadFileError } from "../load/load-errors.js";
import { MARKET_CODES, type RecordsFileFormat, readRecordsFile } from "../load/records-file.js";
import type { AppDirectory } from "../oauth/app-directory.js";
import { generateAppClientId, generateAppSecret, hashAppSecret } from "../oauth/app-secrets.js";
import type { KeyInfo, KeyRing } from "../oauth/signing-keys.js";
import {
  type App,
  type Brand,
  type BrandDirectory,
  type Grants,
  type LoadSummary,
  loadsParquet,
  type ParquetLoads,
  RecordIdConflictError,
  type RecordLoads,
  type RecordReads,
} from "../store/store.js";

const BRAND_ID = /^[a-z0-9][a-z0-9-]{1,62}$/;
const DATA_SOURCE = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
/** Longest grace period of a rotated secret: 30 days. */
export const MAX_SECRET_GRACE_SECONDS = 30 * 86_400;
export const DEFAULT_SECRET_GRACE_SECONDS = 86_400;

/** An app as the operator sees it: never its secret or hash. */
export interface AppView {
  appClientId: string;
  brandId: string;
  name: string;
  markets: string[] | null;
  dataSources: string[] | null;
  createdAt: string;
  revokedAt: string | null;
  previousSecretExpiresAt: string | null;
}

/** One brand in `mdq status`. */
export interface BrandStatus {
  brandId: string;
  name: string;
  grants: Grants;
  apps: number;
  activeApps: number;
  rows: number;
  firstDay: string | null;
  lastDay: string | null;
  lastPublishedAt: string | null;
  lastPublishedDate: string | null;
  readyToday: boolean;
}

/** What the operations of `mdq` need of the store. */
export type RegionAdminStore = BrandDirectory & RecordReads & RecordLoads;

export interface RegionAdminOptions {
  store: RegionAdminStore;
  keys: KeyRing;
  apps: AppDirectory;
  region: string;
  timeZone: string;
  /** Where changes are announced to the region's other instances; none by default. */
  changes?: ChangeFeed;
}

function viewOf(app: App): AppView {
  return {
    appClientId: app.appClientId,
    brandId: app.brandId,
    name: app.name,
    markets: app.markets,
    dataSources: app.dataSources,
    createdAt: app.createdAt.toISOString(),
    revokedAt: app.revokedAt?.toISOString() ?? null,
    previousSecretExpiresAt: app.previousSecretExpiresAt?.toISOString() ?? null,
  };
}

function checkedList(name: string, values: unknown, check: (value: string) => boolean): string[] | undefined {
  if (values === undefined || values === null) return undefined;
  if (!Array.isArray(values) || values.some((value) => typeof value !== "string" || !check(value))) {
    throw new AdminError("BAD_INPUT", `${name} must be a list of valid codes; got ${JSON.stringify(values)}`);
  }
  return [...new Set(values as string[])].sort();
}

/** Checks grant lists: ISO 3166-1 markets, lower-case data source ids. */
export function checkedGrants(body: { markets?: unknown; dataSources?: unknown }): Partial<Grants> {
  const markets = checkedList("markets", body.markets, (value) => MARKET_CODES.has(value));
  const dataSources = checkedList("dataSources", body.dataSources, (value) => DATA_SOURCE.test(value));
  return { ...(markets ? { markets } : {}), ...(dataSources ? { dataSources } : {}) };
}

function checkedDate(name: string, value: unknown, fallback: string): string {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "string" || !isCalendarDate(value)) {
    throw new AdminError(
      "BAD_INPUT",
      `${name} must be a real day written YYYY-MM-DD; got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function checkedPath(value: unknown): string {
  if (typeof value !== "string" || !isAbsolute(value)) {
    throw new AdminError("BAD_INPUT", "path must be an absolute path of a file on the service's machine");
  }
  return value;
}

function fileRejected(error: unknown): never {
  if (error instanceof LoadFileError) {
    throw new AdminError(
      "INVALID_FILE",
      `${error.errorCount} problem(s) in ${error.path}; nothing was changed`,
      error.errors.map((problem) => ({ ...problem, position: error.position })),
    );
  }
  throw error;
}

/** The operations of `mdq` on one region. */
export class RegionAdmin {
  /** The store's native Parquet loads, when its engine has them (checked once). */
  private readonly parquetLoads: ParquetLoads | undefined;

  constructor(private readonly options: RegionAdminOptions) {
    this.parquetLoads = loadsParquet(options.store) ? options.store : undefined;
  }

  private get store(): RegionAdminStore {
    return this.options.store;
  }

  /** Applies a change to this process at once, and announces it to the other instances. */
  private async changed(change: Change): Promise<void> {
    this.options.apps.clear();
    await (this.options.changes ?? SOLO_CHANGE_FEED).publish(change);
  }

  private today(): string {
    return todayIn(this.options.timeZone);
  }

  private async brand(brandId: unknown): Promise<Brand> {
    const brand = typeof brandId === "string" ? await this.store.findBrand(brandId) : undefined;
    if (!brand) throw new AdminError("NOT_FOUND", `no brand ${JSON.stringify(brandId)}`);
    return brand;
  }

  private async app(appClientId: string): Promise<App> {
    const app = await this.store.findApp(appClientId);
    if (!app) throw new AdminError("NOT_FOUND", `no app ${JSON.stringify(appClientId)}`);
    return app;
  }

  async listBrands(): Promise<{ brands: { brandId: string; name: string; createdAt: string }[] }> {
    const brands = await this.store.listBrands();
    return { brands: brands.map((brand) => ({ ...brand, createdAt: brand.createdAt.toISOString() })) };
  }

  async createBrand(body: { name?: unknown; brandId?: unknown }) {
    if (typeof body.name !== "string" || body.name.trim() === "" || body.name.length > 200) {
      throw new AdminError("BAD_INPUT", "name must be a non-empty string of at most 200 characters");
    }
    const brandId =
      body.brandId === undefined
        ? body.name
            .toLowerCase()
            .replace(/[^a-z0-9]+/g, "-")
            .replace(/^-+|-+$/g, "")
            .slice(0, 63)
        : body.brandId;
    if (typeof brandId !== "string" || !BRAND_ID.test(brandId)) {
      throw new AdminError(
        "BAD_INPUT",
        `brandId must match ${BRAND_ID.source}; got ${JSON.stringify(brandId)}`,
      );
    }
    if (await this.store.findBrand(brandId)) throw new AdminError("CONFLICT", `brand ${brandId} exists`);
    const brand = { brandId, name: body.name.trim(), createdAt: new Date() };
    await this.store.createBrand(brand);
    return { brand: { ...brand, createdAt: brand.createdAt.toISOString() } };
  }

  async listApps(brandId?: unknown) {
    if (brandId !== undefined) await this.brand(brandId);
    const apps = await this.store.listApps(brandId as string | undefined);
    return { apps: apps.map(viewOf) };
  }

  async createApp(body: { brandId?: unknown; name?: unknown; markets?: unknown; dataSources?: unknown }) {
    const brand = await this.brand(body.brandId);
    if (typeof body.name !== "string" || body.name.trim() === "" || body.name.length > 200) {
      throw new AdminError("BAD_INPUT", "name must be a non-empty string of at most 200 characters");
    }
    const narrowing = checkedGrants(body);
    const secret = generateAppSecret();
    const app: App = {
      appClientId: generateAppClientId(),
      brandId: brand.brandId,
      name: body.name.trim(),
      secretHash: hashAppSecret(secret),
      previousSecretHash: null,
      previousSecretExpiresAt: null,
      markets: narrowing.markets ?? null,
      dataSources: narrowing.dataSources ?? null,
      revokedAt: null,
      createdAt: new Date(),
    };
    await this.store.createApp(app);
    return { app: viewOf(app), appClientSecret: secret };
  }

  /** A new secret; the old one stays valid for `graceSeconds` (CONTRACT: rotation with a grace period). */
  async rotateSecret(appClientId: string, body: { graceSeconds?: unknown }) {
    const app = await this.app(appClientId);
    if (app.revokedAt) throw new AdminError("CONFLICT", `app ${appClientId} is revoked`);
    const grace = body.graceSeconds ?? DEFAULT_SECRET_GRACE_SECONDS;
    if (
      typeof grace !== "number" ||
      !Number.isInteger(grace) ||
      grace < 0 ||
      grace > MAX_SECRET_GRACE_SECONDS
    ) {
      throw new AdminError(
        "BAD_INPUT",
        `graceSeconds must be a whole number from 0 to ${MAX_SECRET_GRACE_SECONDS}`,
      );
    }
    const secret = generateAppSecret();
    const updated: App = {
      ...app,
      secretHash: hashAppSecret(secret),
      previousSecretHash: grace > 0 ? app.secretHash : null,
      previousSecretExpiresAt: grace > 0 ? new Date(Date.now() + grace * 1000) : null,
    };
    await this.store.updateApp(updated);
    await this.changed({ kind: "app", appClientId });
    return { app: viewOf(updated), appClientSecret: secret };
  }

  /** Revokes an app: no new tokens, and its existing tokens are refused from the next request. */
  async revokeApp(appClientId: string) {
    const app = await this.app(appClientId);
    if (app.revokedAt) throw new AdminError("CONFLICT", `app ${appClientId} is already revoked`);
    const updated: App = { ...app, revokedAt: new Date() };
    await this.store.updateApp(updated);
    await this.changed({ kind: "app", appClientId });
    return { app: viewOf(updated) };
  }

  async listGrants(brandId: unknown) {
    const brand = await this.brand(brandId);
    return { brandId: brand.brandId, ...(await this.store.brandGrants(brand.brandId)) };
  }

  async changeGrants(
    body: { brandId?: unknown; markets?: unknown; dataSources?: unknown },
    change: "add" | "remove",
  ) {
    const brand = await this.brand(body.brandId);
    const grants = checkedGrants(body);
    if (!grants.markets && !grants.dataSources) {
      throw new AdminError("BAD_INPUT", "name at least one market or data source");
    }
    if (change === "add") await this.store.addGrants(brand.brandId, grants);
    else await this.store.removeGrants(brand.brandId, grants);
    await this.changed({ kind: "grants", brandId: brand.brandId });
    return this.listGrants(brand.brandId);
  }

  async loadFx(body: { path?: unknown; ignoreUnknownCurrencies?: unknown }) {
    const path = checkedPath(body.path);
    const file = await readFxFile(path, {
      ignoreUnknownCurrencies: body.ignoreUnknownCurrencies === true,
    }).catch(fileRejected);
    await this.store.upsertFxRates(file.rates);
    return {
      rates: file.rates.length,
      currencies: file.currencies,
      ignoredCurrencies: file.ignoredCurrencies,
      from: file.days[0] ?? null,
      to: file.days.at(-1) ?? null,
    };
  }

  async load(body: {
    brandId?: unknown;
    path?: unknown;
    format?: unknown;
    mapping?: unknown;
    processingDate?: unknown;
  }): Promise<LoadSummary> {
    const brand = await this.brand(body.brandId);
    const path = checkedPath(body.path);
    if (body.format !== undefined && !["csv", "ndjson", "parquet"].includes(body.format as string)) {
      throw new AdminError("BAD_INPUT", "format must be csv, ndjson or parquet");
    }
    if (
      body.mapping !== undefined &&
      (typeof body.mapping !== "object" ||
        body.mapping === null ||
        Object.values(body.mapping).some((value) => typeof value !== "string"))
    ) {
      throw new AdminError("BAD_INPUT", "mapping must map canonical column names to the file's column names");
    }
    const processingDate = checkedDate("processingDate", body.processingDate, this.today());
    const file = await readRecordsFile(path, {
      ...(body.format ? { format: body.format as RecordsFileFormat } : {}),
      ...(body.mapping ? { mapping: body.mapping as Record<string, string> } : {}),
    }).catch(fileRejected);
    const origin = { processingDate, source: path };
    const parquet = this.parquetLoads;
    const handOver = parquet ? await mkdtemp(join(tmpdir(), "mdq-load-")) : undefined;
    try {
      if (parquet && handOver) {
        const columnar = join(handOver, "records.parquet");
        await file.exportParquet(columnar);
        return await parquet.replaceRecordsFromParquet(brand.brandId, columnar, origin);
      }
      return await this.store.replaceRecords(brand.brandId, file.records(), origin);
    } catch (error) {
      if (error instanceof RecordIdConflictError) {
        throw new AdminError(
          "INVALID_FILE",
          `${error.message}; nothing was changed`,
          error.clashes.map((clash) => ({
            line: 0,
            position: "line" as const,
            column: "record_id",
            message: `${clash.recordId} is already the id of a record on ${clash.keptDay}, which this load does not replace`,
          })),
        );
      }
      throw error;
    } finally {
      file.close();
      if (handOver) await rm(handOver, { recursive: true, force: true });
    }
  }

  /** Completes a processing date: readiness turns READY. Refused before any load of that date. */
  async publish(body: { brandId?: unknown; processingDate?: unknown }) {
    const brand = await this.brand(body.brandId);
    const processingDate = checkedDate("processingDate", body.processingDate, this.today());
    if (!(await this.store.hasLoad(brand.brandId, processingDate))) {
      throw new AdminError(
        "CONFLICT",
        `no load for processing date ${processingDate} of ${brand.brandId}; run mdq load first`,
      );
    }
    const publishedAt = new Date();
    await this.store.publish(brand.brandId, processingDate, publishedAt);
    return { brandId: brand.brandId, processingDate, publishedAt: publishedAt.toISOString() };
  }

  listKeys(): { keys: KeyInfo[] } {
    return { keys: this.options.keys.list() };
  }

  async rotateKeys(): Promise<{ key: KeyInfo }> {
    const key = await this.options.keys.rotate();
    await this.changed({ kind: "keys" });
    return { key };
  }

  async status(): Promise<{ region: string; today: string; brands: BrandStatus[] }> {
    const today = this.today();
    const brands = await this.store.listBrands();
    const apps = await this.store.listApps();
    const statuses = await Promise.all(
      brands.map(async (brand): Promise<BrandStatus> => {
        const [grants, data, readiness] = await Promise.all([
          this.store.brandGrants(brand.brandId),
          this.store.brandDataStatus(brand.brandId),
          this.store.readiness(brand.brandId, today, { markets: [], dataSources: [] }),
        ]);
        const own = apps.filter((app) => app.brandId === brand.brandId);
        return {
          brandId: brand.brandId,
          name: brand.name,
          grants,
          apps: own.length,
          activeApps: own.filter((app) => app.revokedAt === null).length,
          rows: data.rows,
          firstDay: data.firstDay,
          lastDay: data.lastDay,
          lastPublishedAt: data.lastPublishedAt?.toISOString() ?? null,
          lastPublishedDate: data.lastPublishedDate,
          readyToday: readiness.published,
        };
      }),
    );
    return { region: this.options.region, today, brands: statuses };
  }
}
