/**
 * The service's Prometheus metrics (docs/observability.md), served at `GET /metrics` on the admin
 * listener. Each service instance owns its registry, so that many services built in one process
 * (tests) never collide; the process metrics (CPU, memory, event loop, GC) are collected once per
 * process into a shared registry and merged into every service's output.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** Latency buckets in seconds: from a cached token check to a large aggregate. */
const LATENCY_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/**
 * Buckets of the question latency: fine up to 100 ms, so that the share of cheap questions
 * answered within CONTRACT §8's 50 ms, and a p99's bucket, can be read from them.
 */
const QUESTION_BUCKETS = [0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

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
  readonly requests = this.counter(
    "mdq_http_requests_total",
    "HTTP requests answered by the public listener, by route, method and status.",
    ["route", "method", "status"],
  );
  readonly requestDuration = this.histogram(
    "mdq_http_request_duration_seconds",
    "Time from receiving a request to sending its response, by route.",
    ["route"],
  );
  readonly questionDuration = this.histogram(
    "mdq_question_duration_seconds",
    "Time from receiving a request to sending its response, by question class (token, readiness, changes, myAccess, records, aggregate, export, other).",
    ["class"],
    QUESTION_BUCKETS,
  );
  readonly rowsServed = this.counter(
    "mdq_rows_served_total",
    "Rows returned to GraphQL callers, by query (records or aggregate).",
    ["query"],
  );
  readonly pageCache = this.counter(
    "mdq_page_cache_lookups_total",
    "Page lookups in the page cache, by query (records or aggregate) and result (hit or miss).",
    ["query", "result"],
  );
  readonly rateLimited = this.counter(
    "mdq_rate_limited_total",
    "Requests refused with 429 by the rate limit, by endpoint.",
    ["endpoint"],
  );
  readonly rateLimitFallbacks = this.counter(
    "mdq_rate_limit_local_fallbacks_total",
    "Requests counted by this instance's own limiter because Redis did not answer.",
  );
  readonly tokensIssued = this.counter(
    "mdq_tokens_issued_total",
    "Access tokens issued by the token endpoint.",
  );
  readonly tokenFailures = this.counter(
    "mdq_token_requests_failed_total",
    "Token requests refused, by RFC 6749 error code.",
    ["error"],
  );
  readonly storeErrors = this.counter(
    "mdq_store_errors_total",
    "Store calls that failed, by kind: unavailable (answered 503) or other (answered 500).",
    ["kind"],
  );
  /** Unlabelled, so that one series answers "is Redis failing?"; the operation is in the log. */
  readonly redisErrors = this.counter(
    "mdq_redis_errors_total",
    "Redis commands and connection attempts that failed (rate limit, publish, subscribe, ping, connection).",
  );
  readonly changesPublished = this.counter(
    "mdq_changes_published_total",
    "Changes announced to the other instances (app, grants, keys).",
    ["kind"],
  );
  readonly changesReceived = this.counter(
    "mdq_changes_received_total",
    "Changes heard from other instances, which cleared caches or reloaded keys here.",
    ["kind"],
  );
  readonly keyReloads = this.counter(
    "mdq_signing_key_reloads_total",
    "Reloads of the signing key ring, by reason (periodic, unknown_kid, change).",
    ["reason"],
  );
  readonly queueWait = this.histogram(
    "mdq_queue_wait_seconds",
    "Time a request waited for its turn before it ran, by class (heavy or export; cheap requests never wait).",
    ["class"],
  );
  readonly queueLength = this.gauge("mdq_queue_length", "Requests waiting for their turn now, by class.", [
    "class",
  ]);
  readonly shedRequests = this.counter(
    "mdq_shed_requests_total",
    "Requests shed for want of a place, by class and reason (queue_full, wait_expired, or client_gone: the client left while it waited).",
    ["class", "reason"],
  );
  readonly inFlight = this.gauge(
    "mdq_requests_in_flight",
    "GraphQL and export requests running now, by class (cheap, heavy or export).",
    ["class"],
  );
  readonly compressionBytes = this.counter(
    "mdq_compression_bytes_total",
    "Bytes of compressed answers, by encoding (zstd, br, gzip) and stage: before or after compression.",
    ["encoding", "stage"],
  );
  /** Registered only when Redis is configured, so that a single instance does not report it down. */
  private redisUpGauge: Gauge | undefined;

  constructor(labels: { region: string; engine: string }) {
    this.gauge(
      "mdq_service_info",
      "Always 1; labels name the region and the storage engine of this instance.",
      ["region", "engine"],
    ).set(labels, 1);
  }

  /** Sets `mdq_redis_up` (registering it on first use). */
  redisUp(up: boolean): void {
    this.redisUpGauge ??= this.gauge(
      "mdq_redis_up",
      "1 while Redis answers, 0 while this instance falls back to its own limits.",
    );
    this.redisUpGauge.set(up ? 1 : 0);
  }

  /** A counter of this service's registry, by `labelNames` (none: one series). */
  private counter<Label extends string = string>(
    name: string,
    help: string,
    labelNames: readonly Label[] = [],
  ) {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  /** A gauge of this service's registry, by `labelNames` (none: one series). */
  private gauge<Label extends string = string>(
    name: string,
    help: string,
    labelNames: readonly Label[] = [],
  ) {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }

  /** A latency histogram of this service's registry, by `labelNames` (LATENCY_BUCKETS unless told). */
  private histogram<Label extends string>(
    name: string,
    help: string,
    labelNames: readonly Label[],
    buckets: readonly number[] = LATENCY_BUCKETS,
  ) {
    return new Histogram({ name, help, labelNames, buckets: [...buckets], registers: [this.registry] });
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
