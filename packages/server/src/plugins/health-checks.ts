/**
 * `GET /livez` (the process answers) and `GET /readyz` (this instance can serve: the store
 * answers and, when configured, Redis answers PING). Both are uncounted by the rate limit. While
 * the service drains, the draining hook answers both with 503 before they run.
 */
import type { FastifyInstance } from "fastify";
import type { StoreConnection } from "../store/model/store.js";

/** How long a load balancer should wait before asking `/readyz` again after a 503. */
const READY_RETRY_AFTER_SECONDS = 5;

export interface HealthCheckOptions {
  store: Pick<StoreConnection, "ping">;
  /** PINGs Redis; absent when no Redis is configured. */
  redisPing?: (() => Promise<void>) | undefined;
  region: string;
}

async function answers(check: () => Promise<void>): Promise<"up" | "down"> {
  try {
    await check();
    return "up";
  } catch {
    return "down";
  }
}

/** Registers `/livez` and `/readyz` on `app`. */
export function useHealthChecks(app: FastifyInstance, options: HealthCheckOptions): void {
  app.get("/livez", async () => ({ status: "ok" }));
  app.get("/readyz", async (_request, reply) => {
    const [store, redis] = await Promise.all([
      answers(() => options.store.ping()),
      options.redisPing ? answers(options.redisPing) : undefined,
    ]);
    const checks = redis === undefined ? { store } : { store, redis };
    if (store === "up" && redis !== "down") return { status: "ready", region: options.region, checks };
    return reply
      .code(503)
      .header("retry-after", String(READY_RETRY_AFTER_SECONDS))
      .send({ status: "unavailable", checks });
  });
}
