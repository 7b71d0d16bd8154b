/**
 * Builds the service of one region: token endpoint, well-known documents, GraphQL endpoint and
 * health checks on one Fastify instance, over a store and a rate limiter; the admin API and the
 * metrics on a second, loopback-only one. With `MDQ_REDIS_URL`, the rate limit is shared by every
 * instance of the region and operator changes reach them all at once (docs/observability.md).
 */
import Fastify, { type FastifyInstance } from "fastify";
import { buildAdminListener } from "./admin/admin-listener.js";
import { ensureAdminToken, writeAdminAddress } from "./admin/admin-token.js";
import { RegionAdmin } from "./admin/region-admin.js";
import { warnUnreadableDays } from "./admin/unreadable-days.js";
import { type ChangeFeed, changeChannel, RedisChangeFeed, SOLO_CHANGE_FEED } from "./cluster/change-feed.js";
import { RedisConnection } from "./cluster/redis-connection.js";
import type { ServiceConfig } from "./config.js";
import { MdqError, OAuthError } from "./errors.js";
import { exportEndpoint } from "./export/export-endpoint.js";
import { ExportTurns } from "./export/export-turns.js";
import { graphqlEndpoint } from "./graphql/graphql-endpoint.js";
import { MemoryRateLimiter, type RateLimiter } from "./limits/rate-limit.js";
import { RedisRateLimiter } from "./limits/redis-rate-limit.js";
import { RequestLanes } from "./limits/request-lanes.js";
import { TOKEN_LIFETIME_SECONDS } from "./oauth/access-token.js";
import { AppDirectory } from "./oauth/app-directory.js";
import { KeyRing, keyRingStorageFor } from "./oauth/signing-keys.js";
import { tokenEndpoint } from "./oauth/token-endpoint.js";
import { wellKnown } from "./oauth/well-known.js";
import { MeteredStore } from "./observability/metered-store.js";
import { ServiceMetrics } from "./observability/metrics.js";
import { safeReason, ThrottledWarning } from "./observability/throttled-warning.js";
import { answerClientError, installErrorResponses, methodNotAllowed } from "./plugins/error-responses.js";
import { useGraphqlExplorer } from "./plugins/graphql-explorer.js";
import { useHealthChecks } from "./plugins/health-checks.js";
import { useMetrics } from "./plugins/metrics-hook.js";
import { useRateLimit } from "./plugins/rate-limit-hook.js";
import { acceptRawBodies } from "./plugins/request-body.js";
import { useResponseCompression } from "./plugins/response-compression.js";
import { withPageCache } from "./store/decorators/page-cache.js";
import type { Store } from "./store/model/store.js";
import { routesReads } from "./store/postgres/replica-router.js";
import { exportsRecords } from "./store/reads/export/record-export.js";
import { sweepWorkDirs } from "./work-dirs.js";

/** What a running service holds. */
export interface Service {
  app: FastifyInstance;
  config: ServiceConfig;
  store: Store;
  keys: KeyRing;
  apps: AppDirectory;
  limiter: RateLimiter;
  /** The operator operations, and their loopback-only HTTP listener (started by `startService`). */
  admin: RegionAdmin;
  adminApp: FastifyInstance;
  /** This instance's metrics (served at `GET /metrics` on the admin listener). */
  metrics: ServiceMetrics;
  /** How this instance hears the others' changes (and announces its own). */
  changes: ChangeFeed;
  /** Where requests wait for their turn: cheap at once, heavy work and exports per brand in turn. */
  lanes: RequestLanes;
  /** The Redis connection, when `MDQ_REDIS_URL` is set. */
  redis: RedisConnection | undefined;
}

export interface ServiceParts {
  store: Store;
  /** Replaces the limiter the configuration calls for (in-memory, or Redis with `redisUrl`). */
  limiter?: RateLimiter;
  /** Pino destination for logs (tests pass a stream); stdout by default. */
  logStream?: NodeJS.WritableStream;
  /** Seconds between reloads of the signing key ring; default 30, 0 turns them off. */
  keyRefreshSeconds?: number;
  /** Brand the explorer's example tabs ask about (`mdq demo` passes its first); a placeholder otherwise. */
  explorerClientId?: string;
}

/** Header names whose values never reach the logs. */
const REDACTED = ["req.headers.authorization", "req.headers.cookie", 'res.headers["set-cookie"]'];

/**
 * Builds (but does not start) the service.
 * @example const service = await buildService(loadConfig(), { store: await openDuckDbStore("./data/uk") });
 */
export async function buildService(config: ServiceConfig, parts: ServiceParts): Promise<Service> {
  const app = Fastify({
    logger:
      config.logLevel === "silent"
        ? false
        : {
            level: config.logLevel,
            redact: REDACTED,
            ...(parts.logStream ? { stream: parts.logStream } : {}),
          },
    trustProxy: config.trustedProxies.length > 0 ? [...config.trustedProxies] : false,
    bodyLimit: config.maxBodyBytes,
    // Draining is answered by our own hook below, in the contract's error shapes.
    return503OnClosing: false,
    forceCloseConnections: "idle",
    clientErrorHandler: answerClientError,
  });
  // Work directories of processes killed mid-way (work-dirs.ts): nothing else removes them.
  const swept = await sweepWorkDirs();
  if (swept.length > 0)
    app.log.info({ directories: swept }, "removed the work directories of processes that are gone");
  // Rows a load of an older release let in without a rate (issue 57): the operator hears of them.
  await warnUnreadableDays(parts.store, app.log);
  const metrics = new ServiceMetrics({ region: config.region, engine: parts.store.engine });
  // Read replicas: reads by target, fallbacks and the standbys' lag (store/postgres/replica-router.ts).
  if (routesReads(parts.store)) {
    parts.store.useMetrics(metrics.registry);
    // The page cache reads the data generation before every page it passes on.
    parts.store.followsGenerationReads(config.pageCacheMb > 0);
  }
  // Metered outside the page cache, so rows served from memory are counted too.
  const cachedStore = withPageCache(parts.store, config.pageCacheMb * 1024 * 1024, (query, result) =>
    metrics.pageCache.inc({ query, result }),
  );
  const store = new MeteredStore(cachedStore, metrics, app.log);
  const redis = config.redisUrl
    ? new RedisConnection({ url: config.redisUrl, metrics, log: app.log })
    : undefined;
  let keys: KeyRing;
  try {
    const keyWarning = new ThrottledWarning(
      app.log,
      "the signing key ring could not be reloaded; keeping the keys held",
    );
    keys = await KeyRing.open(keyRingStorageFor(store, config.dataDir), TOKEN_LIFETIME_SECONDS, {
      ...(parts.keyRefreshSeconds !== undefined ? { refreshSeconds: parts.keyRefreshSeconds } : {}),
      onReload: (reason) => metrics.keyReloads.inc({ reason }),
      onRefreshError: (error) => keyWarning.warn({ reason: safeReason(error) }),
    });
  } catch (error) {
    await redis?.close();
    throw error;
  }
  const apps = new AppDirectory(store, config.authCacheSeconds);
  const limiter =
    parts.limiter ??
    (redis
      ? new RedisRateLimiter(redis, config.rateLimit, { keyPrefix: `mdq:${config.region}:rl:`, metrics })
      : new MemoryRateLimiter(config.rateLimit));
  const changes = redis
    ? new RedisChangeFeed(redis, changeChannel(config.region), metrics)
    : SOLO_CHANGE_FEED;
  changes.subscribe((change) => {
    apps.clear();
    if (change.kind === "keys" || change.kind === "all") {
      keys.reload("change").catch((error: unknown) => {
        app.log.warn(
          { reason: safeReason(error) },
          "the signing key ring could not be reloaded after a change",
        );
      });
    }
  });
  const settings = { authUrl: config.authUrl, baseUrl: config.baseUrl, region: config.region };
  const lanes = new RequestLanes(parts.store.readConnections, config, metrics);

  installErrorResponses(app);
  useMetrics(app, metrics);
  // After the metrics' onSend hook, which reads token answers as text.
  if (config.compression) useResponseCompression(app, { minBytes: config.compressionMinBytes, metrics });
  let draining = false;
  app.addHook("preClose", async () => {
    draining = true;
  });
  app.addHook("onRequest", async (request, reply) => {
    if (!draining) return;
    reply.header("connection", "close");
    const retryAfter = { "retry-after": "1" };
    const message = "the service is shutting down; retry on another connection";
    if (request.url.startsWith("/oauth2/"))
      throw new OAuthError("temporarily_unavailable", message, retryAfter);
    throw new MdqError("SERVICE_UNAVAILABLE", message, retryAfter);
  });
  await app.register(async (scope) => {
    acceptRawBodies(scope, config.maxBodyBytes);
    useRateLimit(scope, limiter, config.rateLimit);
    await tokenEndpoint(scope, { keys, apps, settings });
    methodNotAllowed(scope, "/oauth2/token", ["POST"]);
    await graphqlEndpoint(scope, { store, keys, apps, settings, timeZone: config.timeZone, lanes });
    if (config.explorer) {
      await useGraphqlExplorer(scope, {
        region: config.region,
        timeZone: config.timeZone,
        exampleClientId: parts.explorerClientId,
        compression: config.compression,
      });
    }
    methodNotAllowed(scope, "/graphql", ["POST"], config.explorer ? ["GET"] : []);
    // The export reads the engine itself: the page cache and metrics wrap only page reads.
    if (exportsRecords(parts.store)) {
      const turns = new ExportTurns(config.exportLanes);
      await exportEndpoint(scope, { store: parts.store, keys, apps, settings, lanes, turns });
    }
  });
  await app.register(async (scope) => {
    await wellKnown(scope, { keys, authUrl: config.authUrl });
    useHealthChecks(scope, {
      store,
      redisPing: redis ? () => redis.ping() : undefined,
      region: config.region,
    });
  });
  const admin = new RegionAdmin({
    store,
    keys,
    apps,
    region: config.region,
    timeZone: config.timeZone,
    changes,
    loadMemoryMb: config.loadMemoryMb,
  });
  const adminApp = buildAdminListener(admin, await ensureAdminToken(config.dataDir), app.log, metrics);
  app.addHook("onClose", async () => {
    await adminApp.close();
    await limiter.close();
    keys.close();
    await changes.close();
    await redis?.close();
  });
  return {
    app,
    config,
    store: parts.store,
    keys,
    apps,
    limiter,
    admin,
    adminApp,
    metrics,
    changes,
    lanes,
    redis,
  };
}

/**
 * Starts both listeners: the public one, and the admin one on loopback, whose URL is written to
 * `<dataDir>/admin.json` for `mdq`. Returns the public address. If either cannot listen (a port
 * taken), the service is closed before the error is thrown: Fastify runs no onClose hook after a
 * failed listen, and the Redis connection, change feed and key-ring timer would keep the process
 * alive (the store stays open: it belongs to the caller).
 */
export async function startService(service: Service): Promise<{ address: string; adminAddress: string }> {
  try {
    const address = await service.app.listen({ host: service.config.host, port: service.config.port });
    const adminAddress = await service.adminApp.listen({
      host: service.config.adminHost,
      port: service.config.adminPort,
    });
    await writeAdminAddress(service.config.dataDir, adminAddress);
    return { address, adminAddress };
  } catch (error) {
    await service.app.close().catch(() => {});
    throw error;
  }
}
