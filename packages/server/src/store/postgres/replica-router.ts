/**
 * Reads on PostgreSQL standbys, never older than what the region published (CONTRACT §9,
 * docs/storage.md "Reads on standbys"): a brand's read goes to a standby only when the observer
 * saw it replay the WAL position of the brand's latest data version (and FX change, and publish)
 * as the primary knows it when the read starts; otherwise to another standby that has, or to the
 * primary. Writes, the brand directory (authentication, grants, `myAccess`: revocations apply at
 * once), the key ring, the data generation and `ping` (`/readyz`) stay on the primary.
 */

import type pg from "pg";
import { Counter, Gauge, type Registry } from "prom-client";
import { StoreDecorator } from "../decorators/store-decorator.js";
import type { AggregateQuery, RecordsQuery } from "../model/query-request.js";
import type {
  App,
  DataChanges,
  DataChangesRequest,
  FxRate,
  Grants,
  LoadOrigin,
  LoadSummary,
  PageResult,
  ReadinessFacts,
  RecordsPage,
  Store,
  StoredRecord,
  StoredRecordsFile,
} from "../model/store.js";
import { StoreUnavailableError } from "../model/store-errors.js";
import type { ExportQuery, RecordExport, RecordExports } from "../reads/export/record-export.js";
import {
  markPublishing,
  type RequiredPosition,
  recordCommitLsns,
  recordPublished,
  requiredLsn,
} from "./commit-lsns.js";
import { storeError } from "./postgres-errors.js";
import { createPostgresPool } from "./postgres-pool.js";
import { openPostgresStore, PostgresStore, type PostgresStoreOptions } from "./postgres-store.js";
import { ReplicaObserver, type StandbyState } from "./replica-observer.js";

type Row = Record<string, unknown>;
type ReadStore = Store & RecordExports;

/** Where a read went: the primary, or standby `replica<N>` (1-based, the order of the URLs). */
export type ReadTarget = "primary" | `replica${number}`;

/** The router's metrics, registered into a service's registry (docs/observability.md). */
class ReplicaMetrics {
  readonly reads: Counter<"target" | "operation">;
  readonly fallbacks: Counter<"reason">;
  readonly retries: Counter<"target">;
  readonly routingSeconds: Counter;
  readonly positions: Counter<"source">;

  constructor(registry: Registry, observer: ReplicaObserver) {
    const registers = [registry];
    this.reads = new Counter({
      name: "mdq_store_reads_total",
      help: "Brand reads (records, aggregates, readiness, changes, exports), by target (primary, replica<N>) and operation.",
      labelNames: ["target", "operation"] as const,
      registers,
    });
    this.fallbacks = new Counter({
      name: "mdq_replica_fallbacks_total",
      help: "Brand reads the primary served because no standby was usable: behind (none had replayed the brand's latest version) or down (none answering).",
      labelNames: ["reason"] as const,
      registers,
    });
    this.retries = new Counter({
      name: "mdq_replica_read_retries_total",
      help: "Reads that failed on a standby's connection and were retried on another target, by the standby.",
      labelNames: ["target"] as const,
      registers,
    });
    this.routingSeconds = new Counter({
      name: "mdq_replica_routing_seconds_total",
      help: "Time spent choosing read targets (the primary's read of the brand's WAL position included).",
      registers,
    });
    this.positions = new Counter({
      name: "mdq_replica_positions_total",
      help: "Brand reads routed, by where the brand's required WAL position came from: primary (read at the request's start) or known (current as of a data generation read since).",
      labelNames: ["source"] as const,
      registers,
    });
    /** A gauge of each standby's `value` as the observer's last poll saw it, by target. */
    const standbyGauge = (name: string, help: string, value: (state: StandbyState) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ["target"] as const,
        registers,
        collect() {
          for (const state of observer.standbys) this.set({ target: targetOf(state.index) }, value(state));
        },
      });
    standbyGauge(
      "mdq_replica_lag_bytes",
      "Bytes of the primary's WAL a standby had not replayed at the observer's last poll.",
      (state) => state.lagBytes,
    );
    standbyGauge(
      "mdq_replica_lag_seconds",
      "Seconds since the last primary transaction a standby replayed, 0 when it replayed all it received.",
      (state) => state.lagSeconds,
    );
    standbyGauge(
      "mdq_replica_up",
      "1 when the observer's last poll of a standby answered (the standby may serve reads), else 0.",
      (state) => (state.up ? 1 : 0),
    );
  }
}

function targetOf(index: number): ReadTarget {
  return `replica${index + 1}`;
}

/**
 * Whether a standby's failure is its connection's or a conflict with its replay, so that the
 * same read on another target may succeed; a statement that ran past its timeout is not retried
 * (it would cost as much again).
 */
function retriable(error: unknown): boolean {
  const causeCode = (error as { cause?: { code?: unknown } }).cause?.code;
  if (error instanceof StoreUnavailableError) return causeCode !== "57014";
  // 40001: canceled for a conflict with recovery (a standby replaying a vacuum or a drop).
  const code = (error as { code?: unknown }).code;
  return code === "40001" || code === "40P01";
}

/** The primary, its standbys and the observer of their replay. */
export interface ReplicaRouterParts {
  primary: PostgresStore;
  replicas: PostgresStore[];
  /** A small pool to the primary for the WAL positions (read before a read, recorded after a write). */
  routing: pg.Pool;
  observer: ReplicaObserver;
}

/** A store that sends brand reads to standbys that have replayed the brand's latest version. */
export class ReplicaRouter extends StoreDecorator implements RecordExports {
  private readonly replicas: readonly ReadStore[];
  private readonly routing: pg.Pool;
  readonly observer: ReplicaObserver;
  private metrics: ReplicaMetrics | undefined;
  /** Round-robin among the standbys usable for a read. */
  private turn = 0;
  /**
   * Whether every `queryRecords` and `queryAggregate` call follows a `dataGeneration` read made
   * for it (the page cache reads the generation before each page: server.ts says so).
   */
  private pagesFollowGenerationReads = false;
  /** The greatest data generation a `dataGeneration` read returned. */
  private latestGeneration = -1n;
  /** Each brand's required position, with the data generation it was read at. */
  private readonly known = new Map<string, RequiredPosition>();

  constructor(private readonly parts: ReplicaRouterParts) {
    super(parts.primary);
    this.replicas = parts.replicas;
    this.routing = parts.routing;
    this.observer = parts.observer;
  }

  /** Counts reads by target, fallbacks, retries and the standbys' lag into `registry`. */
  useMetrics(registry: Registry): void {
    this.metrics ??= new ReplicaMetrics(registry, this.observer);
  }

  /**
   * Tells the router that every page read (`queryRecords`, `queryAggregate`) follows a
   * `dataGeneration` read made for it after its request started, as the page cache does: a
   * brand's position read at a generation at least as great as any read since is then current
   * for pages (they depend only on loads and FX changes, which bump the generation), and is
   * reused without asking the primary again.
   */
  followsGenerationReads(on: boolean): void {
    this.pagesFollowGenerationReads = on;
  }

  override async dataGeneration(): Promise<string> {
    const generation = await super.dataGeneration();
    const value = BigInt(generation);
    if (value > this.latestGeneration) this.latestGeneration = value;
    return generation;
  }

  /**
   * The position `brandId` needs: the one known for it when a page read follows a generation
   * read and nothing was loaded since it was read; otherwise read from the primary.
   */
  private async required(brandId: string, page: boolean): Promise<bigint> {
    const known = this.known.get(brandId);
    if (page && this.pagesFollowGenerationReads && known && known.generation >= this.latestGeneration) {
      this.metrics?.positions.inc({ source: "known" });
      return known.lsn;
    }
    const started = process.hrtime.bigint();
    let position: RequiredPosition;
    try {
      position = await requiredLsn(this.routing, brandId);
    } catch (error) {
      throw storeError(error);
    }
    this.metrics?.routingSeconds.inc(Number(process.hrtime.bigint() - started) / 1e9);
    this.metrics?.positions.inc({ source: "primary" });
    if (position.generation > this.latestGeneration) this.latestGeneration = position.generation;
    if (this.known.size >= KNOWN_BRANDS) this.known.clear();
    const before = this.known.get(brandId);
    if (!before || before.generation <= position.generation) this.known.set(brandId, position);
    return position.lsn;
  }

  /**
   * Runs `read` on a standby that has replayed what `brandId` needs, else on the primary; a
   * standby whose connection fails is marked down and the read retried on the next target.
   * `page`: a records or aggregate page (`followsGenerationReads`).
   */
  private async route<Result>(
    brandId: string,
    operation: string,
    read: (store: ReadStore) => Promise<Result>,
    page = false,
  ): Promise<Result> {
    const required = await this.required(brandId, page);
    const tried = new Set<number>();
    for (;;) {
      const usable = this.observer.usable(required).filter((state) => !tried.has(state.index));
      if (usable.length === 0) {
        if (tried.size === 0) {
          const anyUp = this.observer.usable(0n).length > 0;
          this.metrics?.fallbacks.inc({ reason: anyUp ? "behind" : "down" });
        }
        this.metrics?.reads.inc({ target: "primary", operation });
        return read(this.parts.primary);
      }
      const chosen = usable[this.turn++ % usable.length]!;
      try {
        const result = await read(this.replicas[chosen.index]!);
        this.metrics?.reads.inc({ target: targetOf(chosen.index), operation });
        return result;
      } catch (error) {
        if (!retriable(error)) throw error;
        this.observer.failed(chosen.index);
        tried.add(chosen.index);
        this.metrics?.retries.inc({ target: targetOf(chosen.index) });
      }
    }
  }

  /** Which target `route` would choose for `brandId` now (tests and the routing bench). */
  async targetFor(brandId: string): Promise<ReadTarget> {
    const usable = this.observer.usable((await requiredLsn(this.routing, brandId)).lsn);
    return usable[0] ? targetOf(usable[0].index) : "primary";
  }

  override readiness(brandId: string, processingDate: string, grants: Grants): Promise<ReadinessFacts> {
    return this.route(brandId, "readiness", (store) => store.readiness(brandId, processingDate, grants));
  }

  override dataChanges(request: DataChangesRequest): Promise<DataChanges> {
    return this.route(request.brandId, "changes", (store) => store.dataChanges(request));
  }

  override queryRecords(query: RecordsQuery, pages?: number): Promise<RecordsPage[]> {
    return this.route(query.scope.brandId, "records", (store) => store.queryRecords(query, pages), true);
  }

  override queryAggregate(query: AggregateQuery): Promise<PageResult<Row>> {
    return this.route(query.scope.brandId, "aggregate", (store) => store.queryAggregate(query), true);
  }

  openRecordExport(query: ExportQuery): Promise<RecordExport> {
    return this.route(query.scope.brandId, "export", (store) => store.openRecordExport(query));
  }

  // Writes: on the primary, then the WAL position after them recorded for the brands they versioned.

  override async upsertFxRates(rates: FxRate[]): Promise<void> {
    await super.upsertFxRates(rates);
    await this.record(null);
  }

  override async replaceRecords(
    brandId: string,
    records: AsyncIterable<StoredRecord> | Iterable<StoredRecord>,
    origin?: LoadOrigin,
  ): Promise<LoadSummary> {
    const summary = await super.replaceRecords(brandId, records, origin);
    await this.record([brandId]);
    return summary;
  }

  override async replaceRecordsFromStoredFile(
    brandId: string,
    file: StoredRecordsFile,
    origin: LoadOrigin,
  ): Promise<LoadSummary> {
    const summary = await super.replaceRecordsFromStoredFile(brandId, file, origin);
    await this.record([brandId]);
    return summary;
  }

  override async addGrants(brandId: string, grants: Partial<Grants>): Promise<void> {
    await super.addGrants(brandId, grants);
    await this.record([brandId]);
  }

  override async removeGrants(brandId: string, grants: Partial<Grants>): Promise<void> {
    await super.removeGrants(brandId, grants);
    await this.record([brandId]);
  }

  override async updateApp(app: App): Promise<void> {
    await super.updateApp(app);
    await this.record([app.brandId]);
  }

  /**
   * A publish writes no data version: the brand is marked first (a mark that cannot be written
   * fails the publish, before it is made), so that readers take the primary's current position
   * until the position after the publish is recorded.
   */
  override async publish(brandId: string, processingDate: string, publishedAt: Date): Promise<void> {
    try {
      await markPublishing(this.routing, brandId);
    } catch (error) {
      throw storeError(error);
    }
    await super.publish(brandId, processingDate, publishedAt);
    await recordPublished(this.routing, brandId).catch(() => undefined);
  }

  /**
   * Records the WAL position after the versions of `brands` (null: all). Best effort: the write
   * committed, and until a position is recorded for its version (or the mark of a publish
   * expires) readers take the primary's current one (commit-lsns.ts), never one too early.
   */
  private async record(brands: string[] | null): Promise<void> {
    await recordCommitLsns(this.routing, brands).catch(() => undefined);
  }

  override async close(): Promise<void> {
    await this.observer.close();
    await Promise.all(this.replicas.map((replica) => replica.close().catch(() => undefined)));
    await this.routing.end().catch(() => undefined);
    await this.parts.primary.close();
  }
}

/** Whether `store` routes reads to standbys (checked once, where the service's metrics are made). */
export function routesReads(store: object): store is ReplicaRouter {
  return store instanceof ReplicaRouter;
}

/** Brands whose position is kept (all of a region's, in practice); past it the memory starts over. */
const KNOWN_BRANDS = 100_000;

/** Connections of the routing pool: one read before each brand read, one write after each write. */
const ROUTING_POOL_SIZE = 4;

/**
 * Opens the primary (checked as `openPostgresStore` checks it), a store per standby (not
 * checked: a standby that is down now is skipped until the observer sees it answer), the
 * routing pool and the observer, which polls once before this resolves.
 * @example const store = await openReplicaRouter({ url, poolSize: 10 }, ["postgres://standby-1/mdq"]);
 */
export async function openReplicaRouter(
  primary: PostgresStoreOptions,
  replicaUrls: readonly string[],
): Promise<ReplicaRouter> {
  const primaryStore = await openPostgresStore(primary);
  const replicas = replicaUrls.map((url) => new PostgresStore(createPostgresPool({ ...primary, url })));
  const routing = createPostgresPool({ ...primary, poolSize: ROUTING_POOL_SIZE });
  const observer = new ReplicaObserver({ primaryUrl: primary.url, replicaUrls });
  await observer.poll();
  return new ReplicaRouter({ primary: primaryStore, replicas, routing, observer });
}
