/**
 * Builds the service of one region: token endpoint, well-known documents, GraphQL endpoint and
 * health checks on one Fastify instance, over a store and a rate limiter.
 */
import Fastify, { type FastifyInstance } from "fastify";
import { buildAdminListener } from "./admin/admin-listener.js";
import { ensureAdminToken, writeAdminAddress } from "./admin/admin-token.js";
import { RegionAdmin } from "./admin/region-admin.js";
import type { ServiceConfig } from "./config.js";
import { MdqError, OAuthError } from "./errors.js";
import { graphqlEndpoint } from "./graphql/graphql-endpoint.js";
import { MemoryRateLimiter, type RateLimiter } from "./limits/rate-limit.js";
import { TOKEN_LIFETIME_SECONDS } from "./oauth/access-token.js";
import { AppDirectory } from "./oauth/app-directory.js";
import { KeyRing } from "./oauth/signing-keys.js";
import { tokenEndpoint } from "./oauth/token-endpoint.js";
import { wellKnown } from "./oauth/well-known.js";
import { acceptRawBodies, installErrorResponses, methodNotAllowed } from "./plugins/error-responses.js";
import { useRateLimit } from "./plugins/rate-limit-hook.js";
import type { Store } from "./store/store.js";

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
}

export interface ServiceParts {
  store: Store;
  limiter?: RateLimiter;
  /** Pino destination for logs (tests pass a stream); stdout by default. */
  logStream?: NodeJS.WritableStream;
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
  });
  const keys = await KeyRing.open(config.dataDir, TOKEN_LIFETIME_SECONDS);
  const apps = new AppDirectory(parts.store, config.authCacheSeconds);
  const limiter = parts.limiter ?? new MemoryRateLimiter(config.rateLimit);
  const settings = { authUrl: config.authUrl, baseUrl: config.baseUrl, region: config.region };

  installErrorResponses(app);
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
    await graphqlEndpoint(scope, { store: parts.store, keys, apps, settings, timeZone: config.timeZone });
    methodNotAllowed(scope, "/graphql", ["POST"]);
  });
  await app.register(async (scope) => {
    await wellKnown(scope, { keys, authUrl: config.authUrl });
    scope.get("/livez", async () => ({ status: "ok" }));
    scope.get("/readyz", async (_request, reply) => {
      try {
        await parts.store.ping();
        return { status: "ready", region: config.region };
      } catch {
        return reply.code(503).header("retry-after", "5").send({ status: "unavailable" });
      }
    });
  });
  const admin = new RegionAdmin({
    store: parts.store,
    keys,
    apps,
    region: config.region,
    timeZone: config.timeZone,
  });
  const adminApp = buildAdminListener(admin, await ensureAdminToken(config.dataDir), app.log);
  app.addHook("onClose", async () => {
    await adminApp.close();
    await limiter.close();
  });
  return { app, config, store: parts.store, keys, apps, limiter, admin, adminApp };
}

/**
 * Starts both listeners: the public one, and the admin one on loopback, whose URL is written to
 * `<dataDir>/admin.json` for `mdq`. Returns the public address.
 */
export async function startService(service: Service): Promise<{ address: string; adminAddress: string }> {
  const address = await service.app.listen({ host: service.config.host, port: service.config.port });
  const adminAddress = await service.adminApp.listen({
    host: service.config.adminHost,
    port: service.config.adminPort,
  });
  await writeAdminAddress(service.config.dataDir, adminAddress);
  return { address, adminAddress };
}
