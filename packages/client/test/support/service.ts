/**
 * A real MDQ service for SDK tests: a seeded demo region on a DuckDB file in a temporary
 * directory, listening on a real port of 127.0.0.1 (the SDK talks HTTP only).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  buildService,
  type ConfigInput,
  type DemoCredentials,
  loadConfig,
  openDuckDbStore,
  type Service,
  seedDemoRegion,
  todayIn,
} from "@mdq/server";
import type { MdqClientOptions } from "../../src/index.js";

export interface RunningService {
  service: Service;
  credentials: DemoCredentials;
  /** `http://127.0.0.1:<port>`: both the authUrl and the baseUrl. */
  url: string;
  today: string;
  /** The first day with data. */
  firstDay: string;
  /** The last day with data (yesterday). */
  lastDay: string;
  /** Client options of an app (the first demo app by default), pointed at `url` or `via`. */
  clientOptions(
    overrides?: Partial<MdqClientOptions> & { appIndex?: number; via?: string },
  ): MdqClientOptions;
  close(): Promise<void>;
}

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

function shiftDay(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** Starts a seeded region listening on a free port. */
export async function startService(
  options: ConfigInput & { days?: number; scale?: number } = {},
): Promise<RunningService> {
  const { days = 120, scale = 1, ...configInput } = options;
  const dataDir = await mkdtemp(join(tmpdir(), "mdq-client-test-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = loadConfig(
    {},
    {
      region: "uk",
      host: "127.0.0.1",
      port,
      authUrl: url,
      baseUrl: url,
      rateLimitMax: 1_000_000,
      logLevel: "silent",
      dataDir,
      ...configInput,
    },
  );
  const store = await openDuckDbStore(dataDir);
  const today = todayIn(config.timeZone);
  const credentials = await seedDemoRegion(store, {
    region: config.region,
    authUrl: url,
    baseUrl: url,
    today,
    days,
    scale,
  });
  const service = await buildService(config, { store });
  await service.app.listen({ host: "127.0.0.1", port });
  return {
    service,
    credentials,
    url,
    today,
    firstDay: shiftDay(today, -days),
    lastDay: shiftDay(today, -1),
    clientOptions(overrides = {}) {
      const { appIndex = 0, via = url, ...rest } = overrides;
      const app = credentials.apps[appIndex]!;
      return {
        appClientId: app.appClientId,
        appClientSecret: app.appClientSecret,
        brandClientId: app.brandClientId,
        authUrl: via,
        baseUrl: via,
        ...rest,
      };
    },
    async close() {
      // A connection the client opened but never sent a request on is not "idle" to Node, so
      // Fastify's forceCloseConnections: "idle" leaves it, and close() would wait ~70 s for the
      // server's headers timeout. Tests do not need a graceful drain.
      const closing = service.app.close();
      service.app.server.closeAllConnections();
      await closing;
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
