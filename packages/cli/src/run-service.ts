/** Starts a built service (public and admin listeners) and drains it gracefully on SIGTERM/SIGINT. */
import { type Service, type ServiceParts, type Store, startService } from "@mdq/server";

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
export function serviceParts(store: Store): ServiceParts {
  return { store, logStream: process.stdout };
}

/** Listens, then closes the service (in-flight requests finish) on the first SIGTERM or SIGINT. */
export async function runService(service: Service): Promise<string> {
  const { address, adminAddress } = await startService(service);
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
