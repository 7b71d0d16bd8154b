/**
 * `POST {baseUrl}/graphql` (spec §4.2, CONTRACT §3): the transport follows GraphQL-over-HTTP for
 * POST with `application/json`; execution is Mercurius with graphql-jit. Order of checks:
 * 405 → 413 → 415 → 400 → 401 → request checks (`request-checks.ts`: parse, validate, variables)
 * → the request's lane (`limits/request-lanes.ts`: heavy work waits its brand's turn, or 503;
 * dropped unanswered when its client leaves first)
 * → execute (200, or 403 for data outside the grants).
 */
import { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import type { GraphQLError } from "graphql";
import mercurius from "mercurius";
import { MdqError } from "../errors.js";
import type { RequestLanes } from "../limits/request-lanes.js";
import type { AppDirectory } from "../oauth/app-directory.js";
import type { KeyRing } from "../oauth/signing-keys.js";
import { VerifiedTokens } from "../oauth/verified-tokens.js";
import { noteQuestionClass } from "../observability/question-class.js";
import { clientGoneSignal } from "../plugins/client-gone.js";
import { sendGraphQLError } from "../plugins/error-responses.js";
import { decodeUtf8, mediaTypeOf } from "../plugins/request-body.js";
import type { RecordReads } from "../store/model/store.js";
import { authenticateBearer } from "./bearer-auth.js";
import { withCode } from "./coded-error.js";
import { formatErrors } from "./error-formatting.js";
import { QUERY_LIMITS } from "./query-limits.js";
import { requestChecks } from "./request-checks.js";
import { type RequestContext, resolvers } from "./resolvers.js";
import { ResponseBuffers } from "./response-buffers.js";
import { typeDefs } from "./schema.js";

export interface GraphQLEndpointOptions {
  store: RecordReads;
  keys: KeyRing;
  apps: AppDirectory;
  settings: { authUrl: string; baseUrl: string; region: string };
  timeZone: string;
  /** Where the request waits for its turn: heavy work per brand in turn, cheap at once. */
  lanes: RequestLanes;
}

interface GraphQLRequestBody {
  query: string;
  variables: Record<string, unknown> | undefined;
  operationName: string | undefined;
}

function badRequest(message: string): MdqError {
  return new MdqError("BAD_REQUEST", message);
}

/** Reads `{"query", "variables"?, "operationName"?}` from a JSON body, strictly. */
function parseRequestBody(body: unknown): GraphQLRequestBody {
  const text = decodeUtf8(body);
  if (text === undefined) throw badRequest("the request body is not valid UTF-8");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw badRequest("the request body is not valid JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw badRequest("the request body must be a JSON object");
  }
  const { query, variables, operationName } = parsed as Record<string, unknown>;
  if (typeof query !== "string" || query.trim() === "")
    throw badRequest("the request body has no query string");
  if (
    variables !== undefined &&
    variables !== null &&
    (typeof variables !== "object" || Array.isArray(variables))
  ) {
    throw badRequest("variables must be a JSON object");
  }
  if (operationName !== undefined && operationName !== null && typeof operationName !== "string") {
    throw badRequest("operationName must be a string");
  }
  return {
    query,
    variables: (variables ?? undefined) as Record<string, unknown> | undefined,
    operationName: operationName ?? undefined,
  };
}

/** Whether `text` parses as JSON (no GraphQL document does; a selection set `{}` cannot be empty). */
function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The errors of an execution, those refusing the operation as a whole (raised before any field
 * ran, so without `path`) given their code: with no `data`, graphql-jit's own variable check
 * refused values graphql-js accepted (BAD_USER_INPUT); with `data: null`, the schema has no root
 * type for the operation, MDQ having no mutations or subscriptions (GRAPHQL_VALIDATION_FAILED).
 */
function operationErrorsCoded(data: unknown, errors: readonly GraphQLError[]): GraphQLError[] {
  const code = data === undefined ? "BAD_USER_INPUT" : "GRAPHQL_VALIDATION_FAILED";
  return errors.map((error) => (error.path === undefined ? withCode(error, code) : error));
}

/**
 * The response's JSON as UTF-8 chunks, each records page written by records-json.ts
 * (`RequestContext.recordsJson`) spliced where its field's empty placeholder list stands: the
 * bytes `JSON.stringify` gives the response with those rows in it. A page's chunk is its own
 * buffer (response-buffers.ts), written to the socket as it is.
 */
function responseChunks(
  response: { data?: unknown; errors?: unknown; extensions?: unknown },
  recordsJson: ReadonlyMap<string, Buffer>,
): Buffer[] {
  const data = response.data as Record<string, unknown> | null | undefined;
  if (data === null || data === undefined) return [Buffer.from(JSON.stringify(response))];
  const chunks: Buffer[] = [];
  let text = `{"data":{`;
  Object.keys(data).forEach((key, index) => {
    const value = data[key];
    const page = recordsJson.get(key);
    text += `${index === 0 ? "" : ","}${JSON.stringify(key)}:`;
    if (page !== undefined && Array.isArray(value) && value.length === 0) {
      chunks.push(Buffer.from(text), page);
      text = "";
    } else {
      text += JSON.stringify(value);
    }
  });
  text += "}";
  if (response.errors !== undefined) text += `,"errors":${JSON.stringify(response.errors)}`;
  if (response.extensions !== undefined) text += `,"extensions":${JSON.stringify(response.extensions)}`;
  chunks.push(Buffer.from(`${text}}`));
  return chunks;
}

/**
 * Mercurius compiles a query with graphql-jit on its run number `JIT_AFTER_RUNS + 1` and runs the
 * compiled query from then on; the run before is graphql-js's.
 */
export const JIT_AFTER_RUNS = 1;
/** Query strings whose parsed document (or refusal) is kept, by Mercurius and by the checks. */
const DOCUMENT_CACHE_SIZE = 1024;
/** Free response buffers kept at most: eight walks' 5000-row pages (2 MiB each). */
const FREE_RESPONSE_BYTES = 16 * 1024 * 1024;

/** Registers the GraphQL endpoint on `app`. */
export async function graphqlEndpoint(app: FastifyInstance, options: GraphQLEndpointOptions): Promise<void> {
  await app.register(mercurius, {
    schema: typeDefs,
    resolvers: resolvers as never,
    routes: false,
    graphiql: false,
    jit: JIT_AFTER_RUNS,
    cache: DOCUMENT_CACHE_SIZE,
    // Keep GraphQLError instances (with originalError) for formatErrors, the one formatter.
    errorFormatter: (execution) => ({ statusCode: 200, response: execution as never }),
  });
  // Mercurius parses and validates again (once per query string): only checked requests reach it.
  const checks = requestChecks(app.graphql.schema, DOCUMENT_CACHE_SIZE);
  const auth = { ...options, verifiedTokens: new VerifiedTokens() };
  const responseBuffers = new ResponseBuffers(FREE_RESPONSE_BYTES);

  app.post("/graphql", async (request, reply) => {
    const { type, charset } = mediaTypeOf(request.headers["content-type"]);
    if (type !== "application/json" || (charset !== undefined && charset !== "utf-8")) {
      return sendGraphQLError(reply, 415, "BAD_REQUEST", "Content-Type must be application/json");
    }
    const body = parseRequestBody(request.body);
    const caller = await authenticateBearer(request, auth);
    const context: RequestContext = {
      caller,
      store: options.store,
      timeZone: options.timeZone,
      pageInfo: {},
      recordsJson: new Map(),
      responseBuffers,
    };
    if (body.query.length > QUERY_LIMITS.maxQueryLength) {
      return sendGraphQLError(
        reply,
        200,
        "QUERY_TOO_COMPLEX",
        `the query is ${body.query.length} characters long; at most ${QUERY_LIMITS.maxQueryLength}`,
      );
    }
    if (isJsonText(body.query)) {
      // Mercurius would retry such a source as a JSON-encoded AST; the spec's `query` is GraphQL text.
      return sendGraphQLError(reply, 200, "GRAPHQL_PARSE_FAILED", "query must be GraphQL text, not JSON");
    }
    const refused = checks.check(body);
    if (refused.length > 0) {
      // Request errors (parse, validation, variables): GraphQL-over-HTTP omits `data` for these.
      return reply.code(200).send({ errors: formatErrors(refused, request.log).errors });
    }
    noteQuestionClass(request, checks.questionOf(body));
    let result: { data?: unknown; errors?: readonly GraphQLError[] };
    const lane = checks.classOf(body);
    // Cheap requests never wait: only a queued lane needs to hear that the client left.
    const client = lane === "cheap" ? undefined : clientGoneSignal(reply);
    const release = await options.lanes.enter(lane, caller.brandId, client);
    // The client left while the request waited for its turn: nothing ran, nobody to answer.
    if (release === null) return reply.hijack();
    try {
      result = await app.graphql(body.query, context as never, body.variables, body.operationName);
    } catch (error) {
      // Mercurius refusing what the checks passed: unexpected, so masked and logged.
      const requestErrors = (error as { errors?: GraphQLError[] }).errors;
      if (!requestErrors) throw error;
      const { status, errors } = formatErrors(requestErrors, request.log);
      return reply.code(status).send({ errors });
    } finally {
      // The rows are read and written as JSON (records-json.ts): what is left is the socket's.
      release();
    }
    const response: { data?: unknown; errors?: unknown; extensions?: unknown } = {};
    // Absent when execution never started (GraphQL spec §7.1.2), null when a root field failed.
    if (result.data !== undefined) response.data = result.data;
    if (result.errors && result.errors.length > 0) {
      const { status, errors, retryAfterSeconds } = formatErrors(
        operationErrorsCoded(result.data, result.errors),
        request.log,
      );
      response.errors = errors;
      reply.code(status);
      if (retryAfterSeconds !== undefined) reply.header("retry-after", String(retryAfterSeconds));
    }
    if (Object.keys(context.pageInfo).length > 0) response.extensions = { pageInfo: context.pageInfo };
    if (context.recordsJson.size === 0) return reply.send(response);
    const chunks = responseChunks(response, context.recordsJson);
    // 'finish': the last byte was handed to the socket, so nothing reads the pages' buffers any
    // more. A response cut off ('close' alone) may still have writes under way: its buffers are
    // left to the garbage collector.
    reply.raw.once("finish", () => {
      for (const json of context.recordsJson.values()) responseBuffers.give(json);
    });
    return reply
      .type("application/json; charset=utf-8")
      .header("content-length", String(chunks.reduce((bytes, chunk) => bytes + chunk.length, 0)))
      .send(Readable.from(chunks, { objectMode: false }));
  });
}
