/**
 * Several instances of one region in one process: services built with `buildService` over ONE
 * seeded store (DuckDB allows one process per file, and two services in a process can share its
 * store object) and one data directory, as a load balancer would see them. Each instance has its
 * own app cache, key ring object, limiter and Redis connections, like separate processes.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LightMyRequestResponse } from "fastify";
import { ensureAdminToken } from "../../src/admin/admin-token.js";
import { todayIn } from "../../src/calendar.js";
import { type ConfigInput, loadConfig, type ServiceConfig } from "../../src/config.js";
import { type DemoCredentials, seedDemoRegion } from "../../src/demo/demo-seed.js";
import { buildService, type Service, type ServiceParts } from "../../src/server.js";
import { openDuckDbStore } from "../../src/store/duckdb/duckdb-store.js";
import type { Store } from "../../src/store/store.js";

export interface SharedRegionOptions {
  /** Configuration of every instance (region, redisUrl, authCacheSeconds, ...). */
  config?: ConfigInput;
  /** Data days ending yesterday; default 10. */
  days?: number;
  /** Wraps the seeded store before the services get it (e.g. to make it fail). */
  wrapStore?: (store: Store) => Store;
}

export interface SharedRegion {
  config: ServiceConfig;
  store: Store;
  credentials: DemoCredentials;
  dataDir: string;
  adminToken: string;
  /**
   * Builds one more instance over the shared store (`parts` as for `buildService`); `config`
   * overrides the region's configuration for this instance only (e.g. its Redis URL).
   */
  instance(parts?: Omit<ServiceParts, "store">, config?: ConfigInput): Promise<Service>;
  close(): Promise<void>;
}

/** Seeds a region into a fresh DuckDB store; instances are added with `instance()`. */
export async function startSharedRegion(options: SharedRegionOptions = {}): Promise<SharedRegion> {
  const dataDir = await mkdtemp(join(tmpdir(), "mdq-shared-"));
  const configInput: ConfigInput = {
    region: "uk",
    authUrl: "http://auth.test",
    baseUrl: "http://api.test",
    rateLimitMax: 1_000_000,
    logLevel: "silent",
    dataDir,
    ...options.config,
  };
  const config = loadConfig({}, configInput);
  const seeded = await openDuckDbStore(dataDir);
  const credentials = await seedDemoRegion(seeded, {
    region: config.region,
    authUrl: config.authUrl,
    baseUrl: config.baseUrl,
    today: todayIn(config.timeZone),
    days: options.days ?? 10,
  });
  const store = options.wrapStore ? options.wrapStore(seeded) : seeded;
  const services: Service[] = [];
  return {
    config,
    store,
    credentials,
    dataDir,
    adminToken: await ensureAdminToken(dataDir),
    async instance(parts = {}, overrides = {}) {
      const service = await buildService(loadConfig({}, { ...configInput, ...overrides }), {
        ...parts,
        store,
      });
      services.push(service);
      return service;
    },
    async close() {
      for (const service of services) await service.app.close();
      await seeded.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Basic credentials of a demo app. */
export function basicOf(app: { appClientId: string; appClientSecret: string }): string {
  const pair = `${encodeURIComponent(app.appClientId)}:${encodeURIComponent(app.appClientSecret)}`;
  return `Basic ${Buffer.from(pair).toString("base64")}`;
}

/** The token endpoint's answer on `service` for `app`. */
export function requestToken(
  service: Service,
  app: { appClientId: string; appClientSecret: string },
): Promise<LightMyRequestResponse> {
  return service.app.inject({
    method: "POST",
    url: "/oauth2/token",
    headers: { authorization: basicOf(app), "content-type": "application/x-www-form-urlencoded" },
    payload: "grant_type=client_credentials&scope=api_data%2Fread",
  });
}

/** A token from `service` for `app` (throws unless 200). */
export async function tokenFrom(
  service: Service,
  app: { appClientId: string; appClientSecret: string },
): Promise<string> {
  const response = await requestToken(service, app);
  if (response.statusCode !== 200) throw new Error(`token: ${response.statusCode} ${response.body}`);
  return (response.json() as { access_token: string }).access_token;
}

/** POSTs a GraphQL query to `service` with `token`. */
export function graphqlOn(
  service: Service,
  token: string,
  query: string,
  variables?: Record<string, unknown>,
): Promise<LightMyRequestResponse> {
  return service.app.inject({
    method: "POST",
    url: "/graphql",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    payload: JSON.stringify({ query, variables }),
  });
}

/** Calls the admin API of `service` with the region's admin token. */
export function adminCall(
  region: SharedRegion,
  service: Service,
  method: "GET" | "POST",
  url: string,
  body?: unknown,
): Promise<LightMyRequestResponse> {
  return service.adminApp.inject({
    method,
    url,
    headers: { authorization: `Bearer ${region.adminToken}` },
    ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
  });
}

/** Polls `check` every 20 ms until it holds; returns the milliseconds it took, or throws after `timeoutMs`. */
export async function within(
  timeoutMs: number,
  what: string,
  check: () => Promise<boolean>,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
