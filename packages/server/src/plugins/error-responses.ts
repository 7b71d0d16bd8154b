/**
 * The one place errors become HTTP responses: OAuth errors in RFC 6749 §5.2 shape on the token
 * endpoint, GraphQL-shaped `{"errors":[{"message","extensions":{"code"}}]}` everywhere else.
 * Framework errors (bad JSON, body too large, …) get a catalogue code; a store that cannot answer
 * gets 503 with `Retry-After` (`temporarily_unavailable` / `SERVICE_UNAVAILABLE`, the shapes of a
 * draining service); anything unexpected is masked and logged, never a stack trace. Requests
 * Node's HTTP parser refuses before Fastify sees them (header fields over the limit, malformed
 * or too slow) are answered here too, in the same shapes.
 */
import { maxHeaderSize, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  type ErrorCode,
  MdqError,
  OAuthError,
  type OAuthErrorCode,
  STORE_UNAVAILABLE_MESSAGE,
} from "../errors.js";
import { StoreUnavailableError } from "../store/model/store-errors.js";

/** Which error shape a route answers with. */
export type Protocol = "oauth" | "graphql";

function protocolOf(request: FastifyRequest): Protocol {
  return protocolOfPath(request.url);
}

function protocolOfPath(path: string): Protocol {
  return path.startsWith("/oauth2/") ? "oauth" : "graphql";
}

/** Sends a GraphQL-shaped error body. */
export function sendGraphQLError(reply: FastifyReply, status: number, code: ErrorCode, message: string) {
  return reply.code(status).send({ errors: [{ message, extensions: { code } }] });
}

/** Sends an RFC 6749 §5.2 error body; token responses are never cached. */
export function sendOAuthError(
  reply: FastifyReply,
  status: number,
  error: OAuthErrorCode,
  description: string,
) {
  return reply
    .code(status)
    .header("cache-control", "no-store")
    .header("pragma", "no-cache")
    .send({ error, error_description: description });
}

const FRAMEWORK_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: "the request body is too large",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "unsupported Content-Type",
  FST_ERR_CTP_EMPTY_JSON_BODY: "the request body is empty",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "Content-Length does not match the body",
  FST_ERR_CTP_EMPTY_TYPE: "Content-Type is empty",
  FST_ERR_CTP_INVALID_TYPE: "Content-Type is invalid",
};

/** What the parser's refusals answer: status and message, by Node's error code. */
const CLIENT_ERRORS: Record<string, { status: number; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    message: `the request's header fields are too large: at most ${maxHeaderSize / 1024} KB in all (an access token is about 1 KB)`,
  },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: "the request did not arrive in time" },
};

/** How long a refused connection may stay open for its answer to be read before it is cut. */
const CLIENT_ERROR_LINGER_MS = 1000;

/**
 * Fastify's `clientErrorHandler`: answers a request that Node's HTTP parser refused (431 for
 * header fields over `maxHeaderSize`, 408, else 400) in the contract's shape for its path, read
 * from the request line when the parser kept it: RFC 6749 `invalid_request` with `no-store` on
 * the token endpoint, `BAD_REQUEST` in `extensions.code` elsewhere (CONTRACT §3, as for 413).
 */
export function answerClientError(error: ConnectionError, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed || socket.writableEnded) return;
  const { status, message } = CLIENT_ERRORS[error.code ?? ""] ?? {
    status: 400,
    message: "the request is malformed",
  };
  // Typed by Fastify as a serialised Buffer; Node passes the Buffer being parsed.
  const raw: unknown = error.rawPacket;
  const start = Buffer.isBuffer(raw) ? raw.subarray(0, 2048).toString("latin1") : "";
  const path = /^[A-Z]+ (\S+) HTTP\//.exec(start)?.[1];
  const oauth = protocolOfPath(path ?? "") === "oauth";
  const body = JSON.stringify(
    oauth
      ? { error: "invalid_request", error_description: message }
      : { errors: [{ message, extensions: { code: "BAD_REQUEST" satisfies ErrorCode } }] },
  );
  const headers = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    "content-type: application/json; charset=utf-8",
    `content-length: ${Buffer.byteLength(body)}`,
    ...(oauth ? ["cache-control: no-store", "pragma: no-cache"] : []),
    "connection: close",
  ];
  socket.end(`${headers.join("\r\n")}\r\n\r\n${body}`);
  setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref();
}

/** Installs the error and not-found handlers on `app`. */
export function installErrorResponses(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | MdqError | OAuthError, request, reply) => {
    for (const [name, value] of Object.entries((error as MdqError).headers ?? {})) reply.header(name, value);
    if (error instanceof OAuthError) return sendOAuthError(reply, error.status, error.error, error.message);
    if (error instanceof MdqError) return sendGraphQLError(reply, error.status, error.code, error.message);
    if (error instanceof StoreUnavailableError) {
      reply.header("retry-after", String(error.retryAfterSeconds));
      if (protocolOf(request) === "oauth") {
        return sendOAuthError(reply, 503, "temporarily_unavailable", STORE_UNAVAILABLE_MESSAGE);
      }
      return sendGraphQLError(reply, 503, "SERVICE_UNAVAILABLE", STORE_UNAVAILABLE_MESSAGE);
    }
    const status = (error as FastifyError).statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const message = FRAMEWORK_MESSAGES[(error as FastifyError).code] ?? "the request is malformed";
      if (protocolOf(request) === "oauth") {
        return sendOAuthError(reply, status === 413 ? 413 : 400, "invalid_request", message);
      }
      return sendGraphQLError(reply, status, "BAD_REQUEST", message);
    }
    request.log.error({ err: error }, "unexpected error");
    if (protocolOf(request) === "oauth")
      return sendOAuthError(reply, 500, "server_error", "internal server error");
    return sendGraphQLError(reply, 500, "INTERNAL_SERVER_ERROR", "Internal server error");
  });

  app.setNotFoundHandler((request, reply) => {
    const message = `no route ${request.method} ${request.url.split("?")[0]}`;
    if (protocolOf(request) === "oauth") return sendOAuthError(reply, 404, "not_found", message);
    return sendGraphQLError(reply, 404, "NOT_FOUND", message);
  });
}

/** Answers 405 with `Allow: <allowed>` in the route's error shape. */
export function refuseMethod(request: FastifyRequest, reply: FastifyReply, allowed: string[]) {
  reply.header("allow", allowed.join(", "));
  const message = `${request.method} is not allowed here; use ${allowed.join(" or ")}`;
  if (protocolOf(request) === "oauth") return sendOAuthError(reply, 405, "invalid_request", message);
  return sendGraphQLError(reply, 405, "BAD_REQUEST", message);
}

/**
 * Registers a 405 answer, with `Allow`, for every method of `url` but `allowed` and `routedElsewhere`
 * (methods another route of `url` answers, such as the explorer's `GET /graphql`).
 */
export function methodNotAllowed(
  app: FastifyInstance,
  url: string,
  allowed: string[],
  routedElsewhere: string[] = [],
): void {
  const methods = ["GET", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS"].filter(
    (method) => !allowed.includes(method) && !routedElsewhere.includes(method),
  );
  app.route({
    method: methods,
    url,
    handler: async (request, reply) => refuseMethod(request, reply, allowed),
  });
}
