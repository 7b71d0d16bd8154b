/**
 * Several instances of one region in one process: services built with `buildService` over ONE
 * seeded store (DuckDB allows one process per file, and two services in a process can share its
 * store object) and one data directory, as a load balancer would see them. Each instance has its
 * own app cache, key ring object, limiter and Redis connections, like separate processes.
 */
import {
  buildService,
  type ConfigInput,
  type DemoCredentials,
  ensureAdminToken,
  loadConfig,
  type Service,
  type ServiceConfig,
  type ServiceParts,
  type Store,
} from "@mdq/server";
import type { LightMyRequestResponse } from "fastify";
import { seedRegion } from "./seeded-region.js";

/** Options of `startSharedRegion`. */
export interface SharedRegionOptions {
  /** Configuration of every instance (region, redisUrl, authCacheSeconds, ...). */
  config?: ConfigInput;
  /** Data days ending yesterday; default 10. */
  days?: number;
  /** Wraps the seeded store before the services get it (e.g. to make it fail). */
  wrapStore?: (store: Store) => Store;
}

/** One seeded region whose instances share its store and data directory. */
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
  const seeded = await seedRegion(
    { authUrl: "http://auth.test", baseUrl: "http://api.test", ...options.config },
    { prefix: "mdq-shared-", days: options.days ?? 10 },
  );
  const { configInput, config, credentials, dataDir } = seeded;
  const store = options.wrapStore ? options.wrapStore(seeded.store) : seeded.store;
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
      await seeded.remove();
    },
  };
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
