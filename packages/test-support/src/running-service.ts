/**
 * A real MDQ service for SDK tests: a seeded demo region on a DuckDB file in a temporary
 * directory, listening on a real port of 127.0.0.1 (the SDK talks HTTP only).
 */
import { buildService, type ConfigInput, type DemoCredentials, type Service } from "@mdq/server";
import { addDays } from "./dates.js";
import { freePort } from "./free-port.js";
import { seedRegion } from "./seeded-region.js";

/** What the SDK needs to reach the service as a demo app (the rest of its options have defaults). */
export interface ClientConnection {
  appClientId: string;
  appClientSecret: string;
  brandClientId: string;
  authUrl: string;
  baseUrl: string;
}

/**
 * A listening region. `Options` is the SDK's options type, supplied by the client's tests, so that
 * this package never depends on the client it tests.
 */
export interface RunningService<Options extends ClientConnection = ClientConnection> {
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
  clientOptions(overrides?: Partial<Options> & { appIndex?: number; via?: string }): Options;
  close(): Promise<void>;
}

/** Starts a seeded region listening on a free port. */
export async function startService<Options extends ClientConnection = ClientConnection>(
  options: ConfigInput & { days?: number; scale?: number } = {},
): Promise<RunningService<Options>> {
  const { days = 120, scale = 1, ...configInput } = options;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const seeded = await seedRegion(
    { host: "127.0.0.1", port, authUrl: url, baseUrl: url, ...configInput },
    { prefix: "mdq-client-test-", days, scale },
  );
  const { store, credentials, today } = seeded;
  const service = await buildService(seeded.config, { store });
  await service.app.listen({ host: "127.0.0.1", port });
  return {
    service,
    credentials,
    url,
    today,
    firstDay: addDays(today, -days),
    lastDay: addDays(today, -1),
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
      } as Options;
    },
    async close() {
      // A connection the client opened but never sent a request on is not "idle" to Node, so
      // Fastify's forceCloseConnections: "idle" leaves it, and close() would wait ~70 s for the
      // server's headers timeout. Tests do not need a graceful drain.
      const closing = service.app.close();
      service.app.server.closeAllConnections();
      await closing;
      await seeded.remove();
    },
  };
}
