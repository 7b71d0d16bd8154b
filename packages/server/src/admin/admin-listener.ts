/**
 * The admin API (docs/admin-api.md) on its own Fastify instance, which `mdq serve` binds to
 * loopback only: the public listener never routes to it. It also serves the Prometheus metrics
 * at `GET /metrics`, without the admin token (docs/observability.md): scrapers rarely carry one,
 * and the metrics hold no secret, no client address and nothing an operator could change.
 */
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import { AdminError, STORE_UNAVAILABLE_MESSAGE } from "../errors.js";
import type { ServiceMetrics } from "../observability/metrics.js";
import { StoreUnavailableError } from "../store/model/store-errors.js";
import { makeWorkDir } from "../work-dirs.js";
import {
  APP_PARAMS,
  brandIdOf,
  changeGrantsCommand,
  createAppCommand,
  createBrandCommand,
  type LoadCommand,
  loadCommand,
  loadFxCommand,
  NOT_AN_OBJECT,
  narrowAppCommand,
  OBJECT_BODY,
  publishCommand,
  rotateSecretCommand,
  type UploadQuery,
  uploadCommand,
  uploadFileName,
} from "./admin-commands.js";
import { adminTokenMatches } from "./admin-token.js";
import type { RegionAdmin } from "./region-admin.js";

/** A body that passed `OBJECT_BODY`. */
type Body = Record<string, unknown> | null;

/** The options of a route whose body is a command. */
const COMMAND = { schema: { body: OBJECT_BODY } };

/** The options of a route on one app whose body is a command. */
const APP_COMMAND = { schema: { body: OBJECT_BODY, params: APP_PARAMS } };

/** `?brandId=`, which a few listings take. */
type BrandQuery = { Querystring: { brandId?: unknown } };

/** The route served without the admin token. */
const METRICS_ROUTE = "/metrics";

/** What an error answers: status, body's `error`, and `Retry-After` when the store is down. */
function errorAnswer(
  error: unknown,
  log: FastifyBaseLogger,
): { status: number; error: { code: string; message: string; details?: unknown }; retryAfter?: number } {
  if (error instanceof AdminError) {
    return {
      status: error.status,
      error: {
        code: error.code,
        message: error.message,
        ...(error.details ? { details: error.details } : {}),
      },
    };
  }
  if (error instanceof StoreUnavailableError) {
    return {
      status: 503,
      error: { code: "UNAVAILABLE", message: STORE_UNAVAILABLE_MESSAGE },
      retryAfter: error.retryAfterSeconds,
    };
  }
  const status = (error as { statusCode?: number }).statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return { status: 400, error: { code: "BAD_INPUT", message: "the request is malformed" } };
  }
  log.error({ err: error }, "admin operation failed");
  return { status: 500, error: { code: "INTERNAL", message: "internal error; nothing was changed" } };
}

/** The media type of a load answered as it goes: progress lines, then the result or the error. */
export const LOAD_PROGRESS_TYPE = "application/x-ndjson";

/**
 * Runs a load. A client that accepts `application/x-ndjson` gets 200 and one JSON object per
 * line as the load goes — `{"progress": …}` reports, then `{"result": …}`, or `{"status", "error"}`
 * with the status and error the plain answer would have had; any other client the plain answer.
 * `cleanUp` runs when the load has ended either way.
 */
async function answerLoad(
  admin: RegionAdmin,
  command: LoadCommand,
  request: FastifyRequest,
  reply: FastifyReply,
  cleanUp: () => Promise<void> = async () => undefined,
) {
  if (!(request.headers.accept ?? "").includes(LOAD_PROGRESS_TYPE)) {
    try {
      return await admin.load(command);
    } finally {
      await cleanUp();
    }
  }
  const lines = new PassThrough();
  const send = (value: unknown) => lines.write(`${JSON.stringify(value)}\n`);
  void admin
    .load(command, (progress) => send({ progress }))
    .then(
      (result) => send({ result }),
      (error: unknown) => {
        const answer = errorAnswer(error, request.log);
        send({ status: answer.status, error: answer.error });
      },
    )
    .finally(async () => {
      await cleanUp();
      lines.end();
    });
  return reply.type(LOAD_PROGRESS_TYPE).send(lines);
}

/** Builds (does not start) the admin listener over `admin`, guarded by `token`; `metrics` adds `/metrics`. */
export function buildAdminListener(
  admin: RegionAdmin,
  token: string,
  logger: FastifyInstance["log"] | false,
  metrics?: ServiceMetrics,
): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger === false ? undefined : logger,
    bodyLimit: 65_536,
    // Bodies are JSON as sent: no coercion (Fastify's default would turn `false` or `""` into null).
    ajv: { customOptions: { coerceTypes: false } },
    // A route schema only checks the body's shape; `admin-commands.ts` words the field errors.
    schemaErrorFormatter: (_errors, dataVar) =>
      new AdminError("BAD_INPUT", dataVar === "body" ? NOT_AN_OBJECT : "the request is malformed"),
  });
  app.setErrorHandler((error, request, reply) => {
    const answer = errorAnswer(error, request.log);
    if (answer.retryAfter !== undefined) reply.header("retry-after", String(answer.retryAfter));
    return reply.code(answer.status).send({ error: answer.error });
  });
  // An upload's body reaches its route as the request stream, never buffered (any size).
  app.addContentTypeParser("application/octet-stream", (_request, payload, done) => done(null, payload));
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
  app.post<{ Body: Body }>("/admin/brands", COMMAND, async (request, reply) =>
    reply.code(201).send(await admin.createBrand(createBrandCommand(request.body))),
  );
  app.get<BrandQuery>("/admin/apps", (request) => {
    const { brandId } = request.query;
    return admin.listApps(brandId === undefined ? undefined : brandIdOf(brandId));
  });
  app.post<{ Body: Body }>("/admin/apps", COMMAND, async (request, reply) =>
    reply.code(201).send(await admin.createApp(createAppCommand(request.body))),
  );
  app.post<{ Body: Body; Params: { appClientId: string } }>(
    "/admin/apps/:appClientId/rotate-secret",
    APP_COMMAND,
    (request) => admin.rotateSecret(rotateSecretCommand(request.params.appClientId, request.body)),
  );
  app.post<{ Body: Body; Params: { appClientId: string } }>(
    "/admin/apps/:appClientId/narrow",
    APP_COMMAND,
    (request) => admin.narrowApp(narrowAppCommand(request.params.appClientId, request.body)),
  );
  app.post<{ Params: { appClientId: string } }>(
    "/admin/apps/:appClientId/revoke",
    { schema: { params: APP_PARAMS } },
    (request) => admin.revokeApp(request.params.appClientId),
  );
  app.get<BrandQuery>("/admin/grants", (request) => admin.listGrants(brandIdOf(request.query.brandId)));
  app.post<{ Body: Body }>("/admin/grants", COMMAND, (request) =>
    admin.changeGrants(changeGrantsCommand(request.body), "add"),
  );
  app.post<{ Body: Body }>("/admin/grants/remove", COMMAND, (request) =>
    admin.changeGrants(changeGrantsCommand(request.body), "remove"),
  );
  app.post<{ Body: Body }>("/admin/fx", COMMAND, (request) => admin.loadFx(loadFxCommand(request.body)));
  app.post<{ Body: Body }>("/admin/loads", COMMAND, (request, reply) =>
    answerLoad(admin, loadCommand(request.body), request, reply),
  );
  app.post<{ Querystring: UploadQuery }>("/admin/loads/upload", async (request, reply) => {
    if (!(request.body instanceof Readable)) {
      throw new AdminError("BAD_INPUT", "an upload's body is the file, sent as application/octet-stream");
    }
    const folder = await makeWorkDir("upload");
    try {
      const path = join(folder, uploadFileName(request.query));
      const command = uploadCommand(request.query, path);
      await pipeline(request.body, createWriteStream(path));
      return await answerLoad(admin, command, request, reply, () =>
        rm(folder, { recursive: true, force: true }),
      );
    } catch (error) {
      await rm(folder, { recursive: true, force: true });
      throw error;
    }
  });
  app.post<{ Body: Body }>("/admin/publishes", COMMAND, (request) =>
    admin.publish(publishCommand(request.body)),
  );
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
