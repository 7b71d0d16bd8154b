/**
 * The admin API (docs/admin-api.md) on its own Fastify instance, which `mdq serve` binds to
 * loopback only: the public listener never routes to it. It also serves the Prometheus metrics
 * at `GET /metrics`, without the admin token (docs/observability.md): scrapers rarely carry one,
 * and the metrics hold no secret, no client address and nothing an operator could change.
 */
import Fastify, { type FastifyInstance } from "fastify";
import { AdminError, STORE_UNAVAILABLE_MESSAGE } from "../errors.js";
import type { ServiceMetrics } from "../observability/metrics.js";
import { StoreUnavailableError } from "../store/store.js";
import { adminTokenMatches } from "./admin-token.js";
import type { RegionAdmin } from "./region-admin.js";

type Body = Record<string, unknown>;

function bodyOf(body: unknown): Body {
  if (body === undefined || body === null) return {};
  if (typeof body !== "object" || Array.isArray(body))
    throw new AdminError("BAD_INPUT", "the body must be a JSON object");
  return body as Body;
}

/** The route served without the admin token. */
const METRICS_ROUTE = "/metrics";

/** Builds (does not start) the admin listener over `admin`, guarded by `token`; `metrics` adds `/metrics`. */
export function buildAdminListener(
  admin: RegionAdmin,
  token: string,
  logger: FastifyInstance["log"] | false,
  metrics?: ServiceMetrics,
): FastifyInstance {
  const app = Fastify({ loggerInstance: logger === false ? undefined : logger, bodyLimit: 65_536 });
  app.setErrorHandler((error, request, reply) => {
    if (error instanceof AdminError) {
      const body: { code: string; message: string; details?: unknown } = {
        code: error.code,
        message: error.message,
      };
      if (error.details) body.details = error.details;
      return reply.code(error.status).send({ error: body });
    }
    if (error instanceof StoreUnavailableError) {
      return reply
        .code(503)
        .header("retry-after", String(error.retryAfterSeconds))
        .send({ error: { code: "UNAVAILABLE", message: STORE_UNAVAILABLE_MESSAGE } });
    }
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return reply.code(400).send({ error: { code: "BAD_INPUT", message: "the request is malformed" } });
    }
    request.log.error({ err: error }, "admin operation failed");
    return reply
      .code(500)
      .send({ error: { code: "INTERNAL", message: "internal error; nothing was changed" } });
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send({ error: { code: "NOT_FOUND", message: `no route ${request.method} ${request.url}` } }),
  );
  app.addHook("onRequest", async (request) => {
    if (metrics && request.routeOptions.url === METRICS_ROUTE && request.method === "GET") return;
    const header = request.headers.authorization ?? "";
    const presented = header.startsWith("Bearer ") ? header.slice("Bearer ".length) : "";
    if (!adminTokenMatches(presented, token))
      throw new AdminError("UNAUTHORIZED", "a valid admin token is required");
  });

  app.get("/admin/brands", () => admin.listBrands());
  app.post("/admin/brands", async (request, reply) =>
    reply.code(201).send(await admin.createBrand(bodyOf(request.body))),
  );
  app.get("/admin/apps", (request) => admin.listApps((request.query as Body)["brandId"]));
  app.post("/admin/apps", async (request, reply) =>
    reply.code(201).send(await admin.createApp(bodyOf(request.body))),
  );
  app.post("/admin/apps/:appClientId/rotate-secret", (request) =>
    admin.rotateSecret((request.params as { appClientId: string }).appClientId, bodyOf(request.body)),
  );
  app.post("/admin/apps/:appClientId/narrow", (request) =>
    admin.narrowApp((request.params as { appClientId: string }).appClientId, bodyOf(request.body)),
  );
  app.post("/admin/apps/:appClientId/revoke", (request) =>
    admin.revokeApp((request.params as { appClientId: string }).appClientId),
  );
  app.get("/admin/grants", (request) => admin.listGrants((request.query as Body)["brandId"]));
  app.post("/admin/grants", (request) => admin.changeGrants(bodyOf(request.body), "add"));
  app.post("/admin/grants/remove", (request) => admin.changeGrants(bodyOf(request.body), "remove"));
  app.post("/admin/fx", (request) => admin.loadFx(bodyOf(request.body)));
  app.post("/admin/loads", (request) => admin.load(bodyOf(request.body)));
  app.post("/admin/publishes", (request) => admin.publish(bodyOf(request.body)));
  app.get("/admin/keys", () => admin.listKeys());
  app.post("/admin/keys/rotate", () => admin.rotateKeys());
  app.get("/admin/status", () => admin.status());
  if (metrics) {
    app.get(METRICS_ROUTE, async (_request, reply) => {
      const { contentType, body } = await metrics.render();
      return reply.header("content-type", contentType).send(body);
    });
  }
  return app;
}
