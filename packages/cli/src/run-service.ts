/** Starts a built service (public and admin listeners) and drains it gracefully on SIGTERM/SIGINT. */
import { type Service, startService } from "@mdq/server";

/** Listens, then closes the service (in-flight requests finish) on the first SIGTERM or SIGINT. */
export async function runService(service: Service): Promise<string> {
  const { address, adminAddress } = await startService(service);
  service.app.log.info({ adminAddress }, "admin listener (loopback only)");
  const stop = async (signal: string) => {
    service.app.log.info({ signal }, "draining and stopping");
    await service.app.close();
    await service.store.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
  return address;
}
