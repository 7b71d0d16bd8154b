/**
 * The lanes requests take on an instance (CONTRACT §8): cheap questions run at once, never queued
 * behind heavy work; records pages and aggregates (heavy) are admitted per brand in turn; exports
 * have a lane of their own. One admission path (fair-admission.ts) serves both queued lanes; they
 * are separate instances because an export holds its place for its whole stream (minutes) where a
 * page holds it for milliseconds: sharing places would let four exports stop every records page.
 * An export no larger than a page (`MDQ_EXPORT_SMALL_ROWS`) is a page's work, and streams in the
 * heavy lane (`admitExport`).
 */
import type { ServiceConfig } from "../config.js";
import { MdqError } from "../errors.js";
import type { ServiceMetrics } from "../observability/metrics.js";
import {
  AdmissionRefused,
  FairAdmission,
  type Release,
  type ShedReason,
  shedError,
} from "./fair-admission.js";

/** A request's lane. */
export type Lane = "cheap" | "heavy" | "export";

/** An export opened under a place: its rows (`MDQ-Row-Count`), and how to close it. */
export interface OpenedExport {
  readonly rowCount: number;
  close(): Promise<void>;
}

/** An export admitted: the release of its place, the export opened in it, and the lane it streams in. */
export interface AdmittedExport<Opened extends OpenedExport> {
  readonly release: Release;
  readonly opened: Opened;
  readonly lane: "heavy" | "export";
}

/** `open()` under `place`, which is given back when the open fails. */
async function openIn<Opened>(place: Release, open: () => Promise<Opened>): Promise<Opened> {
  try {
    return await open();
  } catch (error) {
    place();
    throw error;
  }
}

/** Seconds a refused export is told to wait before it tries again. */
export const EXPORT_RETRY_AFTER_SECONDS = 5;

/**
 * Heavy requests run at once by default: all but one of the store's read connections
 * (store/model/store.ts `readConnections`), so that a cheap question always finds one free
 * (DuckDB: 4 readers, so 3; PostgreSQL: the pool less the connections the exports may hold, less
 * one). Exports on DuckDB read on connections of their own.
 */
export function defaultHeavyConcurrency(readConnections: number): number {
  return Math.max(1, readConnections - 1);
}

/**
 * The heavy lane's limits, from the configuration (0 derives a setting, docs/configuration.md) and
 * the store's read connections.
 */
export function heavyLimits(readConnections: number, config: ServiceConfig) {
  const concurrency = config.heavyConcurrency || defaultHeavyConcurrency(readConnections);
  return {
    concurrency,
    perBrand: Math.min(concurrency, config.heavyPerBrand || Math.max(1, concurrency - 1)),
    maxQueueLength: config.queueMaxLength,
    maxWaitMs: config.queueMaxWaitMs,
  };
}

/** Exports of one brand running at once: `MDQ_EXPORT_PER_BRAND` (default 1), at most every place. */
export function exportsPerBrand(config: ServiceConfig): number {
  return Math.min(config.exportConcurrency, config.exportPerBrand);
}

/**
 * An instance's lanes and their metrics.
 * @example const release = await lanes.enter("heavy", caller.brandId); try { ... } finally { release(); }
 */
export class RequestLanes {
  /** Records pages and aggregates: a fair queue across brands. */
  readonly heavy: FairAdmission;
  /**
   * Exports (`MDQ_EXPORT_CONCURRENCY`, `MDQ_EXPORT_PER_BRAND`): queued per brand in turn; past the
   * queue's bounds, 429.
   */
  readonly exports: FairAdmission;

  /** Exports of at most this many rows stream in the heavy lane (`MDQ_EXPORT_SMALL_ROWS`; 0: none). */
  readonly smallExportRows: number;

  /** `readConnections`: the store's (store/model/store.ts), from which the heavy lane's size is derived. */
  constructor(
    readConnections: number,
    config: ServiceConfig,
    private readonly metrics: ServiceMetrics,
  ) {
    this.smallExportRows = config.exportSmallRows;
    this.heavy = new FairAdmission(heavyLimits(readConnections, config), this.events("heavy"));
    this.exports = new FairAdmission(
      {
        concurrency: config.exportConcurrency,
        // One place per brand by default: a year-long export holds its place for minutes, so a
        // brand holding several would leave the other brands' daily mirrors queueing for the rest
        // (the herd bench, issue 55: with all but one of 4 places, 200 brands' 7-day mirrors
        // waited up to 10 s behind a tenant's 3 year-long exports; with one, 3.3–5.1× their time
        // alone at the median, against 38.6×).
        perBrand: exportsPerBrand(config),
        // Queued per brand in turn, as heavy requests are: a place an export frees goes to the
        // waiting brand with the fewest exports running, so one brand's export loops cannot keep
        // every other brand's daily mirror out (the herd bench, issue 55: refused at once, 20 of
        // 40 brands' mirrors gave up beside a tenant looping 4 year-long exports).
        maxQueueLength: config.queueMaxLength,
        maxWaitMs: config.queueMaxWaitMs,
      },
      this.events("export"),
    );
    for (const lane of ["cheap", "heavy", "export"] as const) {
      metrics.inFlight.set({ class: lane }, 0);
      metrics.queueLength.set({ class: lane }, 0);
    }
  }

  /**
   * Waits for `brand`'s turn in `lane` and returns the release of its place, or null when
   * `client` (aborted once the request's client left: plugins/client-gone.ts) aborted first: the
   * request left the queue (shed, `client_gone`) and there is nobody to answer. A heavy request
   * refused is a 503 `SERVICE_UNAVAILABLE` with `Retry-After`. Exports: `admitExport`.
   */
  async enter(lane: "cheap" | "heavy", brand: string, client?: AbortSignal): Promise<Release | null> {
    if (lane === "cheap") return this.cheap();
    try {
      return await this.heavy.admit(brand, client);
    } catch (error) {
      if (!(error instanceof AdmissionRefused)) throw error;
      if (error.reason === "client_gone") return null;
      throw shedError(error);
    }
  }

  /**
   * An export's place and the export `open` opened in it, or null when `client` aborted first
   * (nothing is left open then). The export opens in the heavy lane, as a records page would: one
   * of at most `MDQ_EXPORT_SMALL_ROWS` rows (most brands' seven-day mirror) streams there, and so
   * never queues behind other brands' year-long exports for an export place (the herd bench,
   * issue 55). A larger one is closed, waits for its brand's turn in the export lane, and is
   * opened again there, on the data of its own turn. Refused in either lane: 429 `RATE_LIMITED`
   * with `Retry-After`, as every export refusal is (docs/api.md "Bulk export").
   */
  async admitExport<Opened extends OpenedExport>(
    brand: string,
    client: AbortSignal | undefined,
    open: () => Promise<Opened>,
  ): Promise<AdmittedExport<Opened> | null> {
    if (this.smallExportRows > 0) {
      const place = await this.enterForExport(this.heavy, brand, client);
      if (place === null) return null;
      const opened = await openIn(place, open);
      if (opened.rowCount <= this.smallExportRows) return { release: place, opened, lane: "heavy" };
      place();
      await opened.close();
    }
    const place = await this.enterForExport(this.exports, brand, client);
    if (place === null) return null;
    return { release: place, opened: await openIn(place, open), lane: "export" };
  }

  /** A place in `lane` for an export, or null when its client left; refused: the export's 429. */
  private async enterForExport(
    lane: FairAdmission,
    brand: string,
    client: AbortSignal | undefined,
  ): Promise<Release | null> {
    try {
      return await lane.admit(brand, client);
    } catch (error) {
      if (!(error instanceof AdmissionRefused)) throw error;
      if (error.reason === "client_gone") return null;
      const { concurrency, perBrand } = lane.limits;
      const place =
        lane === this.exports
          ? `no export place came free for this brand in time (this instance streams ${concurrency} at once, ${perBrand} of one brand)`
          : `the instance is busy: no place came free in time to open this export (${concurrency} records pages, aggregates and exports of at most ${this.smallExportRows} rows at once)`;
      throw new MdqError("RATE_LIMITED", `${place}; retry in ${EXPORT_RETRY_AFTER_SECONDS} s`, {
        "retry-after": String(EXPORT_RETRY_AFTER_SECONDS),
      });
    }
  }

  /** A cheap request's place: counted, never waited for. */
  private cheap(): Release {
    this.metrics.inFlight.inc({ class: "cheap" });
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.metrics.inFlight.dec({ class: "cheap" });
    };
  }

  private events(lane: "heavy" | "export") {
    const { metrics } = this;
    return {
      admitted: (waitMs: number) => metrics.queueWait.observe({ class: lane }, waitMs / 1000),
      shed: (reason: ShedReason) => metrics.shedRequests.inc({ class: lane, reason }),
      changed: (running: number, waiting: number) => {
        metrics.inFlight.set({ class: lane }, running);
        metrics.queueLength.set({ class: lane }, waiting);
      },
    };
  }
}
