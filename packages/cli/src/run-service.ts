/** Starts a built service (public and admin listeners) and drains it gracefully on SIGTERM/SIGINT. */

import { createServer } from "node:net";
import type { Writable } from "node:stream";
import { type Service, type ServiceConfig, type ServiceParts, type Store, startService } from "@mdq/server";

/** How long in-flight requests may take to finish after a stop signal before connections are cut. */
const DRAIN_SECONDS = 10;

/**
 * Runs `work` on an open store and closes the store if `work` fails: a PostgreSQL pool would
 * otherwise keep a failed `mdq serve` or `mdq demo` alive instead of letting `mdq` exit.
 */
export async function closingStoreOnFailure<Result>(
  store: Store,
  work: () => Promise<Result>,
): Promise<Result> {
  try {
    return await work();
  } catch (error) {
    await store.close().catch(() => {});
    throw error;
  }
}

/**
 * The parts `mdq serve` and `mdq demo` build a service from. Logs go through `process.stdout`
 * (whose EPIPE `mdq` drops) rather than pino's own stdout writer, which retries a write to a
 * closed pipe every 100 ms for ever when the process exits, so a demo whose reader went away
 * would never stop on SIGTERM.
 */
export function serviceParts(store: Store, logStream: Writable = process.stdout): ServiceParts {
  return { store, logStream };
}

/** `--admin-port`'s help, on `serve` and `demo`: the second port a service opens. */
export const ADMIN_PORT_HELP =
  "port of the admin listener, loopback only, which mdq's other commands use (MDQ_ADMIN_PORT; default the public port + 1000, so 5000 for 4000)";

/** The two listeners a service opens, as `--help` and errors name them. */
type Listener = "public listener" | "admin listener";

/** The error of a listener that cannot bind: which one, its address, and the flag that moves it. */
function portInUse(listener: Listener, host: string, port: number, cause: unknown): Error {
  const flag = listener === "admin listener" ? "--admin-port (MDQ_ADMIN_PORT)" : "--port (MDQ_PORT)";
  const why =
    (cause as NodeJS.ErrnoException).code === "EADDRINUSE"
      ? "is in use"
      : `cannot be bound (${String(cause)})`;
  return new Error(`${listener}: ${host}:${port} ${why}; pass ${flag}`, { cause });
}

/** Resolves once `host:port` was bound and released; rejects with the bind error. */
function tryBind(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()));
  });
}

/**
 * Checks that both listeners' ports are free before anything slow (a store opened, a demo
 * seeded): a taken port is named with its listener and the flag that moves it. Port 0 (any free
 * port) is not checked. A port taken after the check is named the same way by {@link runService}.
 */
export async function checkListenerPorts(config: ServiceConfig): Promise<void> {
  const listeners: [Listener, string, number][] = [
    ["public listener", config.host, config.port],
    ["admin listener", config.adminHost, config.adminPort],
  ];
  for (const [listener, host, port] of listeners) {
    if (port === 0) continue;
    await tryBind(host, port).catch((error: unknown) => {
      throw portInUse(listener, host, port, error);
    });
  }
}

/** Listens, then closes the service (in-flight requests finish) on the first SIGTERM or SIGINT. */
export async function runService(service: Service): Promise<string> {
  const { address, adminAddress } = await startService(service).catch((error: unknown) => {
    const { host, port, adminHost, adminPort } = service.config;
    const failed = error as NodeJS.ErrnoException & { port?: number; address?: string };
    if (failed.code !== "EADDRINUSE") throw error;
    if (failed.port === adminPort && adminPort !== port)
      throw portInUse("admin listener", adminHost, adminPort, error);
    throw portInUse("public listener", host, port, error);
  });
  service.app.log.info({ adminAddress }, "admin listener (loopback only)");
  const stop = async (signal: string) => {
    service.app.log.info({ signal }, "draining and stopping");
    // A connection opened but never used is not "idle" to Node, and would hold close() until the
    // headers timeout (~70 s): cut whatever is left once in-flight requests had their time.
    const cut = setTimeout(() => service.app.server.closeAllConnections(), DRAIN_SECONDS * 1000);
    await service.app.close();
    clearTimeout(cut);
    await service.store.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
  return address;
}
