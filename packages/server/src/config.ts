/**
 * Service configuration: one typed schema with defaults, read from the environment (`MDQ_*`)
 * and overrides (CLI flags), validated once at start and frozen. A bad value names its key.
 */
import { availableParallelism } from "node:os";
import { isRegion, isTimeZone } from "@mdq/contract";

export interface ServiceConfig {
  /** Region code served by this process, e.g. `uk` or `us`. */
  readonly region: string;
  /** Public base address of the token endpoint (`iss` of tokens). */
  readonly authUrl: string;
  /** Public base address of the GraphQL endpoint (`aud` of tokens). */
  readonly baseUrl: string;
  readonly host: string;
  readonly port: number;
  /** Directory holding the DuckDB file and the signing keys. */
  readonly dataDir: string;
  /** IANA time zone whose calendar day is the region's reporting day (readiness `date`). */
  readonly timeZone: string;
  readonly rateLimit: { readonly max: number; readonly windowSeconds: number };
  /** Peers whose `X-Forwarded-For` is believed: IPs or CIDRs (rule 9). */
  readonly trustedProxies: readonly string[];
  /** Largest GraphQL request body accepted, in bytes. */
  readonly maxBodyBytes: number;
  /** How long an app's state (revocation, grants) may be cached; at most 60 s (CONTRACT §2). */
  readonly authCacheSeconds: number;
  readonly logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /** The operator listener: loopback only, never the public one (docs/admin-api.md). */
  readonly adminHost: string;
  /** Its port; 0 picks a free one (written to `<dataDir>/admin.json`). */
  readonly adminPort: number;
  /** PostgreSQL connection string; null keeps the embedded DuckDB file in `dataDir`. */
  readonly databaseUrl: string | null;
  /**
   * PostgreSQL streaming standbys that may serve reads never older than what the region published
   * (CONTRACT §9, store/postgres/replica-router.ts); empty: every read goes to `databaseUrl`.
   */
  readonly databaseReplicaUrls: readonly string[];
  /** Connections each instance keeps to PostgreSQL. */
  readonly databasePoolSize: number;
  /** Longest a PostgreSQL statement may run before it is cancelled (answered 503). */
  readonly databaseStatementTimeoutMs: number;
  /** Redis connection string; set, N instances share one rate limit and hear each other's changes. */
  readonly redisUrl: string | null;
  /** Memory for answered pages, valid for one data generation (store/decorators/page-cache.ts); 0 turns it off. */
  readonly pageCacheMb: number;
  /** Threads DuckDB runs each statement on (embedded store only); 0: one per core, DuckDB's default. */
  readonly duckdbThreads: number;
  /**
   * The embedded store's DuckDB memory limit in MB for reads; past it, they spill to disk (0:
   * DuckDB's default, 80% of the machine's memory).
   */
  readonly duckdbMemoryMb: number;
  /**
   * DuckDB's memory limit in MB while a file load reads, checks and writes its rows (the embedded
   * store's own DuckDB, or a PostgreSQL load's scratch DuckDB); past it, the load spills to disk.
   */
  readonly loadMemoryMb: number;
  /** GraphiQL at `GET /graphql` for browsers (plugins/graphql-explorer.ts); off unless `MDQ_EXPLORER=on`. */
  readonly explorer: boolean;
  /** Bulk exports one instance runs at once (the export lane, limits/request-lanes.ts); one more is answered 429. */
  readonly exportConcurrency: number;
  /** Of those, one brand's at once (at most `exportConcurrency`). */
  readonly exportPerBrand: number;
  /**
   * Exports of at most this many rows stream in the heavy lane, as a records page does, not in the
   * export lane (limits/request-lanes.ts); 0: every export takes an export place.
   */
  readonly exportSmallRows: number;
  /** Exports that read their rows at once, taking turns (export/export-turns.ts). */
  readonly exportLanes: number;
  /**
   * Connections of the embedded store an export writes its windows on while it is the only export
   * open (store/duckdb/duckdb-export.ts); 1 writes them one after another.
   */
  readonly duckdbExportConnections: number;
  /**
   * Records pages and aggregates one instance runs at once (limits/fair-admission.ts); 0 derives
   * it from the store's connections (`defaultHeavyConcurrency`), so that one stays free for cheap reads.
   */
  readonly heavyConcurrency: number;
  /** Of those, one brand's at once; 0: all but one of `heavyConcurrency` (at least one). */
  readonly heavyPerBrand: number;
  /** Heavy requests waiting for their turn at most, all brands together; one more is answered 503. */
  readonly queueMaxLength: number;
  /** Longest a heavy request waits for its turn before it is answered 503. */
  readonly queueMaxWaitMs: number;
  /** Answers compressed when the request's `Accept-Encoding` allows (plugins/response-compression.ts). */
  readonly compression: boolean;
  /** Bodies shorter than this many bytes are sent uncompressed. */
  readonly compressionMinBytes: number;
}

/**
 * The page cache's memory for answered pages by default, in MB (the pages a walk reads ahead wait
 * apart, within as much again: store/decorators/page-cache.ts). 32 rather than 64: the server's peak RSS at
 * demo scale 600 under 8 concurrent walks fell from 478–486 MB to 416–463 MB
 * (`bench/serve-memory.mjs --cold`, issue 17); a cold walk reads each page once, so the answered
 * pages serve only repeats.
 */
export const DEFAULT_PAGE_CACHE_MB = 32;

/**
 * The largest export that streams in the heavy lane by default: a records page's largest size
 * (the spec's `pageSize` ≤ 5000), so an export that takes a place there holds it for a page's
 * work. Most brands' seven-day mirrors are that small (the herd bench's median brand: about 500
 * rows a week).
 */
export const DEFAULT_EXPORT_SMALL_ROWS = 5000;

/**
 * Exports that read at once by default: one core fewer than the machine has (at least one), so
 * that exports streaming flat out leave a core to GraphQL.
 */
export function defaultExportLanes(): number {
  return Math.max(1, availableParallelism() - 1);
}

/**
 * Connections an export alone writes its windows on by default (the embedded store): two where
 * the machine has two cores or more, so that the next window is written while the client reads
 * one, as DuckDB's own COPY runs on every core (issue 18); one on a single core.
 */
export function defaultExportConnections(): number {
  return Math.min(2, availableParallelism());
}

/**
 * DuckDB's threads per statement by default: one. Concurrent requests already run on separate
 * connections (and threads); splitting each statement across the cores as well cost 15% more CPU
 * per page of a cold walk for no more throughput (docs/configuration.md, issue 11).
 */
export const DEFAULT_DUCKDB_THREADS = 1;

/**
 * The embedded store's DuckDB memory limit by default, in MB: reads and loads of any size stay
 * within it, spilling sorts and staging to disk (issue 19: a 10 M-row load within 512 MB of RSS).
 * 128 rather than 192: the server's peak RSS at demo scale 600 under 8 concurrent walks fell from
 * 529–564 MB to 494–500 MB (`bench/serve-memory.mjs`), under issue 17's 512 MB.
 */
export const DEFAULT_DUCKDB_MEMORY_MB = 128;

/**
 * A file load's DuckDB memory limit by default, in MB: 256 rather than 128, which made a 1 M-row
 * CSV load spill its staging and its sort (5.15 s against 3.03 s, peak RSS 334 against 465 MB; a
 * 10 M-row load peaked at 462 MB: `bench/load.mjs`, issue 19). 192 spilled as much as 128.
 */
export const DEFAULT_LOAD_MEMORY_MB = 256;

/**
 * How much memory a load's DuckDB allocator may keep after a task before it gives it back
 * (DuckDB's default: 128 MiB): the DuckDB store's while it loads, and every scratch DuckDB
 * (load/file-staging.ts: a PostgreSQL load's checks, an export's Parquet writer). The load's
 * memory limit caps DuckDB's buffers, not what its allocator keeps of them once freed: a reload
 * of 1 M Parquet rows into the DuckDB store peaked the server's RSS at 497–526 MB with the default
 * and at 472–473 MB with this, a PostgreSQL load of a 1 M-row CSV (its scratch sorts and writes
 * the checked rows while they are copied) at 501–505 MB against 476, in the same time (issue 19).
 */
export const LOAD_ALLOCATOR_FLUSH_THRESHOLD = "16MB";

/** The least `MDQ_LOAD_MEMORY_MB`: under 32 MB DuckDB could not load a one-row CSV file, under 48 it could. */
export const MIN_LOAD_MEMORY_MB = 64;

/**
 * Heavy requests waiting at most by default: about five per brand of a 200-brand region's morning
 * herd (issue 55). A waiting request holds only its parsed body (at most `MDQ_MAX_BODY_BYTES`,
 * typically under 2 KB), so a full queue costs a few MB; past it the instance is too far behind
 * for waiting to help, and 503 with `Retry-After` spreads the retries out.
 */
export const DEFAULT_QUEUE_MAX_LENGTH = 1000;

/**
 * Longest wait for a heavy request's turn by default: 10 s, a third of `mdq-client`'s 30 s
 * request timeout, so that a request that cannot run soon is answered 503 (and retried after
 * `Retry-After`) before its client abandons it as a timeout and its place was wasted.
 */
export const DEFAULT_QUEUE_MAX_WAIT_MS = 10_000;

/**
 * Answers shorter than this are sent uncompressed by default, in bytes: below ~1 KiB a coding
 * saves less than a TCP segment (the answer fits one either way) while its stream costs the same
 * setup, and gzip's 18-byte frame can make a 100-byte error body longer.
 */
export const DEFAULT_COMPRESSION_MIN_BYTES = 1024;

/** Thrown when a configuration value is invalid; the message names the key. */
export class ConfigError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(`invalid configuration ${key}: ${message}`);
    this.name = "ConfigError";
  }
}

/** Configuration keys and the environment variables they are read from. */
export const CONFIG_ENV = {
  region: "MDQ_REGION",
  authUrl: "MDQ_AUTH_URL",
  baseUrl: "MDQ_BASE_URL",
  host: "MDQ_HOST",
  port: "MDQ_PORT",
  dataDir: "MDQ_DATA_DIR",
  timeZone: "MDQ_TIME_ZONE",
  rateLimitMax: "MDQ_RATE_LIMIT_MAX",
  rateLimitWindowSeconds: "MDQ_RATE_LIMIT_WINDOW_SECONDS",
  trustedProxies: "MDQ_TRUSTED_PROXIES",
  maxBodyBytes: "MDQ_MAX_BODY_BYTES",
  authCacheSeconds: "MDQ_AUTH_CACHE_SECONDS",
  logLevel: "MDQ_LOG_LEVEL",
  adminHost: "MDQ_ADMIN_HOST",
  adminPort: "MDQ_ADMIN_PORT",
  databaseUrl: "MDQ_DATABASE_URL",
  databaseReplicaUrls: "MDQ_DATABASE_REPLICA_URLS",
  databasePoolSize: "MDQ_DATABASE_POOL_SIZE",
  databaseStatementTimeoutMs: "MDQ_DATABASE_STATEMENT_TIMEOUT_MS",
  redisUrl: "MDQ_REDIS_URL",
  pageCacheMb: "MDQ_PAGE_CACHE_MB",
  duckdbThreads: "MDQ_DUCKDB_THREADS",
  duckdbMemoryMb: "MDQ_DUCKDB_MEMORY_MB",
  loadMemoryMb: "MDQ_LOAD_MEMORY_MB",
  explorer: "MDQ_EXPLORER",
  exportConcurrency: "MDQ_EXPORT_CONCURRENCY",
  exportPerBrand: "MDQ_EXPORT_PER_BRAND",
  exportSmallRows: "MDQ_EXPORT_SMALL_ROWS",
  exportLanes: "MDQ_EXPORT_LANES",
  duckdbExportConnections: "MDQ_DUCKDB_EXPORT_CONNECTIONS",
  heavyConcurrency: "MDQ_HEAVY_CONCURRENCY",
  heavyPerBrand: "MDQ_HEAVY_PER_BRAND",
  queueMaxLength: "MDQ_QUEUE_MAX_LENGTH",
  queueMaxWaitMs: "MDQ_QUEUE_MAX_WAIT_MS",
  compression: "MDQ_COMPRESSION",
  compressionMinBytes: "MDQ_COMPRESSION_MIN_BYTES",
} as const;

export type ConfigInput = Partial<Record<keyof typeof CONFIG_ENV, string | number | undefined>>;

const REGION_TIME_ZONES: Record<string, string> = {
  uk: "Europe/London",
  us: "America/New_York",
  de: "Europe/Berlin",
  fr: "Europe/Paris",
  jp: "Asia/Tokyo",
  au: "Australia/Sydney",
};

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/**
 * Builds the frozen configuration from `env` overlaid by `overrides`.
 * @example loadConfig(process.env, { port: 4001, region: "us" })
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: ConfigInput = {}): ServiceConfig {
  const read = (key: keyof typeof CONFIG_ENV): string | undefined => {
    const value = overrides[key] ?? env[CONFIG_ENV[key]];
    return value === undefined || value === "" ? undefined : String(value);
  };
  /** A whole-number setting: its variable, else `fallback`, within `min..max`. */
  const wholeNumber = (key: keyof typeof CONFIG_ENV, fallback: number, min: number, max: number) =>
    integer(read(key) ?? String(fallback), CONFIG_ENV[key], min, max);
  const region = read("region") ?? "uk";
  if (!isRegion(region))
    throw new ConfigError(CONFIG_ENV.region, "use a lower-case region code such as uk or us");
  const port = wholeNumber("port", 4000, 0, 65535);
  const defaultUrl = `http://localhost:${port}`;
  const authUrl = url(read("authUrl") ?? defaultUrl, CONFIG_ENV.authUrl);
  const baseUrl = url(read("baseUrl") ?? authUrl, CONFIG_ENV.baseUrl);
  const timeZone = read("timeZone") ?? REGION_TIME_ZONES[region] ?? "UTC";
  if (!isTimeZone(timeZone))
    throw new ConfigError(CONFIG_ENV.timeZone, `unknown time zone ${JSON.stringify(timeZone)}`);
  const logLevel = read("logLevel") ?? "info";
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(CONFIG_ENV.logLevel, `use one of ${LOG_LEVELS.join(", ")}`);
  }
  const trustedProxies = (read("trustedProxies") ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  for (const proxy of trustedProxies) {
    if (!/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(proxy)) {
      throw new ConfigError(
        CONFIG_ENV.trustedProxies,
        `${JSON.stringify(proxy)} is not an IP address or CIDR`,
      );
    }
  }
  const adminHost = read("adminHost") ?? "127.0.0.1";
  if (!LOOPBACK.has(adminHost)) {
    throw new ConfigError(
      CONFIG_ENV.adminHost,
      "the admin listener binds to loopback only: 127.0.0.1, ::1 or localhost",
    );
  }
  const databaseUrl = connectionUrl(read("databaseUrl"), CONFIG_ENV.databaseUrl, POSTGRES_PROTOCOLS);
  return Object.freeze({
    region,
    authUrl,
    baseUrl,
    host: read("host") ?? "127.0.0.1",
    port,
    dataDir: read("dataDir") ?? `./data/${region}`,
    timeZone,
    rateLimit: Object.freeze({
      max: wholeNumber("rateLimitMax", 1000, 1, 1_000_000_000),
      windowSeconds: wholeNumber("rateLimitWindowSeconds", 300, 1, 86_400),
    }),
    trustedProxies: Object.freeze(trustedProxies),
    maxBodyBytes: wholeNumber("maxBodyBytes", 65_536, 1024, 10_485_760),
    authCacheSeconds: wholeNumber("authCacheSeconds", 10, 0, 60),
    logLevel: logLevel as ServiceConfig["logLevel"],
    adminHost,
    adminPort: wholeNumber("adminPort", port === 0 ? 0 : (port + 1000) % 65536, 0, 65535),
    databaseUrl,
    databaseReplicaUrls: replicaUrls(read("databaseReplicaUrls"), databaseUrl),
    databasePoolSize: wholeNumber("databasePoolSize", 10, 1, 1000),
    databaseStatementTimeoutMs: wholeNumber("databaseStatementTimeoutMs", 15_000, 100, 3_600_000),
    redisUrl: connectionUrl(read("redisUrl"), CONFIG_ENV.redisUrl, ["redis:", "rediss:"]),
    pageCacheMb: wholeNumber("pageCacheMb", DEFAULT_PAGE_CACHE_MB, 0, 65_536),
    duckdbThreads: wholeNumber("duckdbThreads", DEFAULT_DUCKDB_THREADS, 0, 1024),
    duckdbMemoryMb: wholeNumber("duckdbMemoryMb", DEFAULT_DUCKDB_MEMORY_MB, 0, 1_048_576),
    loadMemoryMb: wholeNumber("loadMemoryMb", DEFAULT_LOAD_MEMORY_MB, MIN_LOAD_MEMORY_MB, 1_048_576),
    explorer: onOff(read("explorer") ?? "off", CONFIG_ENV.explorer),
    exportConcurrency: wholeNumber("exportConcurrency", 4, 1, 1000),
    exportPerBrand: wholeNumber("exportPerBrand", 1, 1, 1000),
    exportSmallRows: wholeNumber("exportSmallRows", DEFAULT_EXPORT_SMALL_ROWS, 0, 1_000_000),
    exportLanes: wholeNumber("exportLanes", defaultExportLanes(), 1, 1000),
    duckdbExportConnections: wholeNumber("duckdbExportConnections", defaultExportConnections(), 1, 16),
    heavyConcurrency: wholeNumber("heavyConcurrency", 0, 0, 1000),
    heavyPerBrand: wholeNumber("heavyPerBrand", 0, 0, 1000),
    queueMaxLength: wholeNumber("queueMaxLength", DEFAULT_QUEUE_MAX_LENGTH, 0, 1_000_000),
    queueMaxWaitMs: wholeNumber("queueMaxWaitMs", DEFAULT_QUEUE_MAX_WAIT_MS, 1, 600_000),
    compression: onOff(read("compression") ?? "on", CONFIG_ENV.compression),
    compressionMinBytes: wholeNumber("compressionMinBytes", DEFAULT_COMPRESSION_MIN_BYTES, 0, 1_073_741_824),
  });
}

function integer(text: string, key: string, min: number, max: number): number {
  if (!/^\d+$/.test(text)) throw new ConfigError(key, `${JSON.stringify(text)} is not a whole number`);
  const value = Number(text);
  if (value < min || value > max) throw new ConfigError(key, `${value} is outside ${min}..${max}`);
  return value;
}

function onOff(text: string, key: string): boolean {
  if (text !== "on" && text !== "off")
    throw new ConfigError(key, `${JSON.stringify(text)} is neither on nor off`);
  return text === "on";
}

function url(text: string, key: string): string {
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new ConfigError(key, `${JSON.stringify(text)} is not an absolute URL`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    throw new ConfigError(key, "use http or https");
  return text.replace(/\/+$/, "");
}

const POSTGRES_PROTOCOLS = ["postgres:", "postgresql:"];

/**
 * The standbys' connection strings, comma-separated (empty: none); each a PostgreSQL URL, and
 * only beside `MDQ_DATABASE_URL` (standbys of what else?). The message never echoes a URL.
 */
function replicaUrls(text: string | undefined, databaseUrl: string | null): readonly string[] {
  const key = CONFIG_ENV.databaseReplicaUrls;
  const urls = (text ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  if (urls.length > 0 && databaseUrl === null)
    throw new ConfigError(key, `standbys need a primary: set ${CONFIG_ENV.databaseUrl} too`);
  return Object.freeze(urls.map((entry) => connectionUrl(entry, key, POSTGRES_PROTOCOLS)!));
}

/** A connection string of one of `protocols`, or null when unset; the message never echoes it (it may hold a password). */
function connectionUrl(text: string | undefined, key: string, protocols: string[]): string | null {
  if (text === undefined) return null;
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new ConfigError(key, `not a URL; use ${protocols[0]}//host:port/...`);
  }
  if (!protocols.includes(parsed.protocol)) throw new ConfigError(key, `use ${protocols.join(" or ")}//`);
  return text;
}
