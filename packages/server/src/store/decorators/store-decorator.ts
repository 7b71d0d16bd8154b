/**
 * A store that wraps another, typed: every `Store` method passes through `forward` (one place a
 * decorator hooks into all of them) to the wrapped store, and the wrapped store's capabilities
 * (`ParquetLoads`, `StagedLoads`, `KeyRingStore`) are kept when it has them. A decorator (the page cache, the
 * metered store) overrides what it changes; a method added to `Store` must be added here, which
 * the compiler enforces, instead of passing unseen through a Proxy.
 */

import type { AggregateQuery, RecordsQuery } from "../model/query-request.js";
import type { DataChanges, DataChangesRequest, FxRateStarts, UnreadableDays } from "../model/store.js";
import {
  type App,
  type Brand,
  type BrandDataStatus,
  type FxRate,
  type Grants,
  type KeyRingStore,
  keepsKeyRing,
  type LoadOrigin,
  type LoadSummary,
  loadsParquet,
  type PageResult,
  type ParquetLoads,
  type ReadinessFacts,
  type RecordsPage,
  type StagedLoads,
  type Store,
  type StoredFileFormat,
  type StoredRecord,
  type StoredRecordsFile,
  stagesLoads,
} from "../model/store.js";

type Row = Record<string, unknown>;

/** Forwards every call to `inner`; subclasses override `forward` or single methods. */
export class StoreDecorator
  implements Store, Partial<ParquetLoads>, Partial<StagedLoads>, Partial<KeyRingStore>
{
  readonly engine: Store["engine"];
  readonly readConnections: number;
  readonly replaceRecordsFromParquet?: ParquetLoads["replaceRecordsFromParquet"];
  readonly replaceRecordsStaged?: StagedLoads["replaceRecordsStaged"];
  readonly readKeyRing?: KeyRingStore["readKeyRing"];
  readonly writeKeyRing?: KeyRingStore["writeKeyRing"];
  readonly swapKeyRing?: KeyRingStore["swapKeyRing"];

  constructor(protected readonly inner: Store) {
    this.engine = inner.engine;
    this.readConnections = inner.readConnections;
    if (loadsParquet(inner)) {
      this.replaceRecordsFromParquet = (brandId, path, origin) =>
        this.forward("replaceRecordsFromParquet", () =>
          inner.replaceRecordsFromParquet(brandId, path, origin),
        );
    }
    if (stagesLoads(inner)) {
      this.replaceRecordsStaged = (brandId, stage, origin, onReplacing) =>
        this.forward("replaceRecordsStaged", () =>
          inner.replaceRecordsStaged(brandId, stage, origin, onReplacing),
        );
    }
    if (keepsKeyRing(inner)) {
      this.readKeyRing = () => this.forward("readKeyRing", () => inner.readKeyRing());
      this.writeKeyRing = (document) => this.forward("writeKeyRing", () => inner.writeKeyRing(document));
      this.swapKeyRing = (expected, next) =>
        this.forward("swapKeyRing", () => inner.swapKeyRing(expected, next));
    }
  }

  /** Runs one call of the wrapped store, `operation` naming the method. */
  protected forward<Result>(_operation: string, call: () => Promise<Result>): Promise<Result> {
    return call();
  }

  ping(): Promise<void> {
    return this.forward("ping", () => this.inner.ping());
  }

  /** Closing is the wrapped store's own business: not forwarded through `forward`. */
  close(): Promise<void> {
    return this.inner.close();
  }

  findBrand(brandId: string): Promise<Brand | undefined> {
    return this.forward("findBrand", () => this.inner.findBrand(brandId));
  }

  listBrands(): Promise<Brand[]> {
    return this.forward("listBrands", () => this.inner.listBrands());
  }

  findApp(appClientId: string): Promise<App | undefined> {
    return this.forward("findApp", () => this.inner.findApp(appClientId));
  }

  listApps(brandId?: string): Promise<App[]> {
    return this.forward("listApps", () => this.inner.listApps(brandId));
  }

  brandGrants(brandId: string): Promise<Grants> {
    return this.forward("brandGrants", () => this.inner.brandGrants(brandId));
  }

  createBrand(brand: Brand): Promise<void> {
    return this.forward("createBrand", () => this.inner.createBrand(brand));
  }

  createApp(app: App): Promise<void> {
    return this.forward("createApp", () => this.inner.createApp(app));
  }

  updateApp(app: App): Promise<void> {
    return this.forward("updateApp", () => this.inner.updateApp(app));
  }

  addGrants(brandId: string, grants: Partial<Grants>): Promise<void> {
    return this.forward("addGrants", () => this.inner.addGrants(brandId, grants));
  }

  removeGrants(brandId: string, grants: Partial<Grants>): Promise<void> {
    return this.forward("removeGrants", () => this.inner.removeGrants(brandId, grants));
  }

  readiness(brandId: string, processingDate: string, grants: Grants): Promise<ReadinessFacts> {
    return this.forward("readiness", () => this.inner.readiness(brandId, processingDate, grants));
  }

  dataChanges(request: DataChangesRequest): Promise<DataChanges> {
    return this.forward("dataChanges", () => this.inner.dataChanges(request));
  }

  queryRecords(query: RecordsQuery, pages?: number): Promise<RecordsPage[]> {
    return this.forward("queryRecords", () => this.inner.queryRecords(query, pages));
  }

  queryAggregate(query: AggregateQuery): Promise<PageResult<Row>> {
    return this.forward("queryAggregate", () => this.inner.queryAggregate(query));
  }

  upsertFxRates(rates: FxRate[]): Promise<void> {
    return this.forward("upsertFxRates", () => this.inner.upsertFxRates(rates));
  }

  fxRateStarts(): Promise<FxRateStarts> {
    return this.forward("fxRateStarts", () => this.inner.fxRateStarts());
  }

  unreadableDays(brandId?: string): Promise<UnreadableDays[]> {
    return this.forward("unreadableDays", () => this.inner.unreadableDays(brandId));
  }

  replaceRecords(
    brandId: string,
    records: AsyncIterable<StoredRecord> | Iterable<StoredRecord>,
    origin?: LoadOrigin,
  ): Promise<LoadSummary> {
    return this.forward("replaceRecords", () => this.inner.replaceRecords(brandId, records, origin));
  }

  get storedFileFormat(): StoredFileFormat {
    return this.inner.storedFileFormat;
  }

  replaceRecordsFromStoredFile(
    brandId: string,
    file: StoredRecordsFile,
    origin: LoadOrigin,
  ): Promise<LoadSummary> {
    return this.forward("replaceRecordsFromStoredFile", () =>
      this.inner.replaceRecordsFromStoredFile(brandId, file, origin),
    );
  }

  hasLoad(brandId: string, processingDate: string): Promise<boolean> {
    return this.forward("hasLoad", () => this.inner.hasLoad(brandId, processingDate));
  }

  brandDataStatus(brandId: string): Promise<BrandDataStatus> {
    return this.forward("brandDataStatus", () => this.inner.brandDataStatus(brandId));
  }

  publish(brandId: string, processingDate: string, publishedAt: Date): Promise<void> {
    return this.forward("publish", () => this.inner.publish(brandId, processingDate, publishedAt));
  }

  dataGeneration(): Promise<string> {
    return this.forward("dataGeneration", () => this.inner.dataGeneration());
  }
}
