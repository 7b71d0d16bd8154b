/**
 * The service's Prometheus metrics (docs/observability.md), served at `GET /metrics` on the admin
 * listener. Each service instance owns its registry, so that many services built in one process
 * (tests) never collide; the process metrics (CPU, memory, event loop, GC) are collected once per
 * process into a shared registry and merged into every service's output.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** Latency buckets in seconds: from a cached token check to a large aggregate. */
const LATENCY_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

let processRegistry: Registry | undefined;

/** The per-process registry of default Node.js metrics, created on first use. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** Which way a store call failed: the database could not answer (503), or anything else. */
export type StoreErrorKind = "unavailable" | "other";

/** Every metric of one service instance. */
export class ServiceMetrics {
  /** This service's metrics only (what tests read). */
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: "mdq_http_requests_total",
    help: "HTTP requests answered by the public listener, by route, method and status.",
    labelNames: ["route", "method", "status"] as const,
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: "mdq_http_request_duration_seconds",
    help: "Time from receiving a request to sending its response, by route.",
    labelNames: ["route"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly rowsServed = new Counter({
    name: "mdq_rows_served_total",
    help: "Rows returned to GraphQL callers, by query (records or aggregate).",
    labelNames: ["query"] as const,
    registers: [this.registry],
  });
  readonly pageCache = new Counter({
    name: "mdq_page_cache_lookups_total",
    help: "Page lookups in the page cache, by query (records or aggregate) and result (hit or miss).",
    labelNames: ["query", "result"] as const,
    registers: [this.registry],
  });
  readonly rateLimited = new Counter({
    name: "mdq_rate_limited_total",
    help: "Requests refused with 429 by the rate limit, by endpoint.",
    labelNames: ["endpoint"] as const,
    registers: [this.registry],
  });
  readonly rateLimitFallbacks = new Counter({
    name: "mdq_rate_limit_local_fallbacks_total",
    help: "Requests counted by this instance's own limiter because Redis did not answer.",
    registers: [this.registry],
  });
  readonly tokensIssued = new Counter({
    name: "mdq_tokens_issued_total",
    help: "Access tokens issued by the token endpoint.",
    registers: [this.registry],
  });
  readonly tokenFailures = new Counter({
    name: "mdq_token_requests_failed_total",
    help: "Token requests refused, by RFC 6749 error code.",
    labelNames: ["error"] as const,
    registers: [this.registry],
  });
  readonly storeErrors = new Counter({
    name: "mdq_store_errors_total",
    help: "Store calls that failed, by kind: unavailable (answered 503) or other (answered 500).",
    labelNames: ["kind"] as const,
    registers: [this.registry],
  });
  /** Unlabelled, so that one series answers "is Redis failing?"; the operation is in the log. */
  readonly redisErrors = new Counter({
    name: "mdq_redis_errors_total",
    help: "Redis commands and connection attempts that failed (rate limit, publish, subscribe, ping, connection).",
    registers: [this.registry],
  });
  readonly changesPublished = new Counter({
    name: "mdq_changes_published_total",
    help: "Changes announced to the other instances (app, grants, keys).",
    labelNames: ["kind"] as const,
    registers: [this.registry],
  });
  readonly changesReceived = new Counter({
    name: "mdq_changes_received_total",
    help: "Changes heard from other instances, which cleared caches or reloaded keys here.",
    labelNames: ["kind"] as const,
    registers: [this.registry],
  });
  readonly keyReloads = new Counter({
    name: "mdq_signing_key_reloads_total",
    help: "Reloads of the signing key ring, by reason (periodic, unknown_kid, change).",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });
  readonly queueWait = new Histogram({
    name: "mdq_queue_wait_seconds",
    help: "Time a request waited for its turn before it ran, by class (heavy or export; cheap requests never wait).",
    labelNames: ["class"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly queueLength = new Gauge({
    name: "mdq_queue_length",
    help: "Requests waiting for their turn now, by class.",
    labelNames: ["class"] as const,
    registers: [this.registry],
  });
  readonly shedRequests = new Counter({
    name: "mdq_shed_requests_total",
    help: "Requests refused because the instance was busy, by class and reason (queue_full or wait_expired).",
    labelNames: ["class", "reason"] as const,
    registers: [this.registry],
  });
  readonly inFlight = new Gauge({
    name: "mdq_requests_in_flight",
    help: "GraphQL and export requests running now, by class (cheap, heavy or export).",
    labelNames: ["class"] as const,
    registers: [this.registry],
  });
  readonly compressionBytes = new Counter({
    name: "mdq_compression_bytes_total",
    help: "Bytes of compressed answers, by encoding (zstd, br, gzip) and stage: before or after compression.",
    labelNames: ["encoding", "stage"] as const,
    registers: [this.registry],
  });
  /** Registered only when Redis is configured, so that a single instance does not report it down. */
  private redisUpGauge: Gauge | undefined;

  constructor(labels: { region: string; engine: string }) {
    new Gauge({
      name: "mdq_service_info",
      help: "Always 1; labels name the region and the storage engine of this instance.",
      labelNames: ["region", "engine"] as const,
      registers: [this.registry],
    }).set(labels, 1);
  }

  /** Sets `mdq_redis_up` (registering it on first use). */
  redisUp(up: boolean): void {
    this.redisUpGauge ??= new Gauge({
      name: "mdq_redis_up",
      help: "1 while Redis answers, 0 while this instance falls back to its own limits.",
      registers: [this.registry],
    });
    this.redisUpGauge.set(up ? 1 : 0);
  }

  /** The Prometheus text exposition: this service's metrics and the process's. */
  async render(): Promise<{ contentType: string; body: string }> {
    // Merged per scrape (cheap), so that metrics registered later (mdq_redis_up) are included.
    const exposition = Registry.merge([this.registry, processMetrics()]);
    return { contentType: exposition.contentType, body: await exposition.metrics() };
  }

  /** The current value of a counter or gauge of this service (summed over `labels` matches). */
  async value(name: string, labels: Record<string, string> = {}): Promise<number> {
    const metric = this.registry.getSingleMetric(name);
    if (!metric) return 0;
    const { values } = await metric.get();
    return values
      .filter((sample) => Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
      .reduce((sum, sample) => sum + sample.value, 0);
  }
}
