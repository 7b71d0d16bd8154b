/**
 * What an operator can do to a region: brands, apps, grants, FX rates, loads, publishes, keys and
 * status. The admin API is a thin HTTP layer over this; every change to apps, grants or keys
 * applies to this process's next request (its app cache is cleared) and is announced on the
 * change feed, so that the region's other instances apply it at once too.
 */
import { stat } from "node:fs/promises";
import { todayIn } from "../calendar.js";
import { type Change, type ChangeFeed, SOLO_CHANGE_FEED } from "../cluster/change-feed.js";
import { DEFAULT_LOAD_MEMORY_MB } from "../config.js";
import { AdminError } from "../errors.js";
import { readFxFile } from "../load/fx-file.js";
import { LoadFileError, LoadOutOfMemoryError } from "../load/load-errors.js";
import { type LoadProgressListener, LoadProgressReporter } from "../load/load-progress.js";
import { checkRecordsRequest } from "../load/records-file.js";
import { loadRecordsFile } from "../load/records-load.js";
import type { AppDirectory } from "../oauth/app-directory.js";
import { generateAppClientId, generateAppSecret, hashAppSecret } from "../oauth/app-secrets.js";
import type { KeyInfo, KeyRing } from "../oauth/signing-keys.js";
import type {
  App,
  Brand,
  BrandDirectory,
  Grants,
  LoadSummary,
  RecordLoads,
  RecordReads,
  UnreadableDays,
} from "../store/model/store.js";
import { RecordIdConflictError } from "../store/model/store-errors.js";
import type {
  ChangeGrantsCommand,
  CreateAppCommand,
  CreateBrandCommand,
  LoadCommand,
  LoadFxCommand,
  NarrowAppCommand,
  PublishCommand,
  RotateSecretCommand,
} from "./admin-commands.js";

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
  /**
   * Stored days no read can convert: rows in a currency with no rate on or before their day, per
   * currency (store/reads/fx-coverage/). Empty when every day is readable.
   */
  unreadableDays: Omit<UnreadableDays, "brandId">[];
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
  /** A file load's DuckDB memory limit in MB (`MDQ_LOAD_MEMORY_MB`); by default `DEFAULT_LOAD_MEMORY_MB`. */
  loadMemoryMb?: number;
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
  constructor(private readonly options: RegionAdminOptions) {}

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

  private async brand(brandId: string): Promise<Brand> {
    const brand = await this.store.findBrand(brandId);
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

  async createBrand({ brandId, name }: CreateBrandCommand) {
    if (await this.store.findBrand(brandId)) throw new AdminError("CONFLICT", `brand ${brandId} exists`);
    const brand = { brandId, name, createdAt: new Date() };
    await this.store.createBrand(brand);
    return { brand: { ...brand, createdAt: brand.createdAt.toISOString() } };
  }

  async listApps(brandId?: string) {
    if (brandId !== undefined) await this.brand(brandId);
    const apps = await this.store.listApps(brandId);
    return { apps: apps.map(viewOf) };
  }

  async createApp({ brandId, name, narrowing }: CreateAppCommand) {
    const brand = await this.brand(brandId);
    const secret = generateAppSecret();
    const app: App = {
      appClientId: generateAppClientId(),
      brandId: brand.brandId,
      name,
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
  async rotateSecret({ appClientId, graceSeconds: grace }: RotateSecretCommand) {
    const app = await this.app(appClientId);
    if (app.revokedAt) throw new AdminError("CONFLICT", `app ${appClientId} is revoked`);
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

  /**
   * Changes what an app is narrowed to: `markets` / `dataSources` lists replace the app's (an empty
   * list or null: all the brand's). Clients of the app see a scope change (fullResyncRequired).
   */
  async narrowApp(command: NarrowAppCommand) {
    const app = await this.app(command.appClientId);
    const updated: App = {
      ...app,
      ...(command.markets === undefined ? {} : { markets: command.markets }),
      ...(command.dataSources === undefined ? {} : { dataSources: command.dataSources }),
    };
    await this.store.updateApp(updated);
    await this.changed({ kind: "app", appClientId: command.appClientId });
    return { app: viewOf(updated) };
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

  async listGrants(brandId: string) {
    const brand = await this.brand(brandId);
    return { brandId: brand.brandId, ...(await this.store.brandGrants(brand.brandId)) };
  }

  async changeGrants({ brandId, grants }: ChangeGrantsCommand, change: "add" | "remove") {
    const brand = await this.brand(brandId);
    if (change === "add") await this.store.addGrants(brand.brandId, grants);
    else await this.store.removeGrants(brand.brandId, grants);
    await this.changed({ kind: "grants", brandId: brand.brandId });
    return this.listGrants(brand.brandId);
  }

  async loadFx({ path, ignoreUnknownCurrencies }: LoadFxCommand) {
    const file = await readFxFile(path, { ignoreUnknownCurrencies }).catch(fileRejected);
    await this.store.upsertFxRates(file.rates);
    return {
      rates: file.rates.length,
      currencies: file.currencies,
      ignoredCurrencies: file.ignoredCurrencies,
      from: file.days[0] ?? null,
      to: file.days.at(-1) ?? null,
    };
  }

  /** Loads a records file; `onProgress` is told how far it has got (a streamed `POST /admin/loads`). */
  async load(command: LoadCommand, onProgress?: LoadProgressListener): Promise<LoadSummary> {
    const brand = await this.brand(command.brandId);
    const { path, format, mapping } = command;
    const processingDate = command.processingDate ?? this.today();
    const progress = new LoadProgressReporter(
      onProgress,
      await stat(path).then(
        (info) => info.size,
        () => 0,
      ),
    );
    const request = await checkRecordsRequest(path, {
      ...(format ? { format } : {}),
      ...(mapping ? { mapping } : {}),
    }).catch(fileRejected);
    const origin = {
      processingDate,
      source: command.source ?? path,
      ...(command.replace ? { replace: command.replace } : {}),
    };
    try {
      return await loadRecordsFile(this.store, brand.brandId, request, origin, {
        progress,
        ...(this.options.loadMemoryMb ? { memoryMb: this.options.loadMemoryMb } : {}),
      });
    } catch (error) {
      if (error instanceof LoadOutOfMemoryError) {
        throw new AdminError(
          "UNAVAILABLE",
          `the load ran out of memory: DuckDB needed more than MDQ_LOAD_MEMORY_MB (${
            this.options.loadMemoryMb ?? DEFAULT_LOAD_MEMORY_MB
          } MB) leaves it beside what reads hold meanwhile; nothing was changed: load again when fewer reads run, or raise MDQ_LOAD_MEMORY_MB`,
        );
      }
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
      return fileRejected(error);
    }
  }

  /** Completes a processing date: readiness turns READY. Refused before any load of that date. */
  async publish(command: PublishCommand) {
    const brand = await this.brand(command.brandId);
    const processingDate = command.processingDate ?? this.today();
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
    const unreadable = await this.store.unreadableDays();
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
          unreadableDays: unreadable
            .filter((days) => days.brandId === brand.brandId)
            .map(({ brandId: _, ...days }) => days),
        };
      }),
    );
    return { region: this.options.region, today, brands: statuses };
  }
}
