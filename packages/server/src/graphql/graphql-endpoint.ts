/**
 * `POST {baseUrl}/graphql` (spec §4.2, CONTRACT §3): the transport follows GraphQL-over-HTTP for
 * POST with `application/json`; execution is Mercurius with graphql-jit. Order of checks:
 * 405 → 413 → 415 → 400 → 401 → execute (200, or 403 for data outside the grants).
 */
import type { FastifyInstance } from "fastify";
import type { GraphQLError } from "graphql";
import mercurius from "mercurius";
import { MdqError } from "../errors.js";
import type { AppDirectory } from "../oauth/app-directory.js";
import type { KeyRing } from "../oauth/signing-keys.js";
import { decodeUtf8, mediaTypeOf, sendGraphQLError } from "../plugins/error-responses.js";
import type { RecordReads } from "../store/store.js";
import { authenticateBearer } from "./bearer-auth.js";
import { formatErrors } from "./error-formatting.js";
import { QUERY_LIMITS, queryLimitsRule } from "./query-limits.js";
import { type RequestContext, resolvers } from "./resolvers.js";
import { typeDefs } from "./schema.js";

export interface GraphQLEndpointOptions {
  store: RecordReads;
  keys: KeyRing;
  apps: AppDirectory;
  settings: { authUrl: string; baseUrl: string; region: string };
  timeZone: string;
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

/** Registers the GraphQL endpoint on `app`. */
export async function graphqlEndpoint(app: FastifyInstance, options: GraphQLEndpointOptions): Promise<void> {
  await app.register(mercurius, {
    schema: typeDefs,
    resolvers: resolvers as never,
    routes: false,
    graphiql: false,
    jit: 1,
    cache: 1024,
    validationRules: [queryLimitsRule],
    graphql: { parseOptions: { maxTokens: QUERY_LIMITS.maxTokens } },
    // Keep GraphQLError instances (with originalError) for formatErrors, the one formatter.
    errorFormatter: (execution) => ({ statusCode: 200, response: execution as never }),
  });

  app.post("/graphql", async (request, reply) => {
    const { type, charset } = mediaTypeOf(request.headers["content-type"]);
    if (type !== "application/json" || (charset !== undefined && charset !== "utf-8")) {
      return sendGraphQLError(reply, 415, "BAD_REQUEST", "Content-Type must be application/json");
    }
    const body = parseRequestBody(request.body);
    const caller = await authenticateBearer(request, options);
    const context: RequestContext = {
      caller,
      store: options.store,
      timeZone: options.timeZone,
      pageInfo: {},
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
    let result: { data?: unknown; errors?: readonly GraphQLError[] };
    try {
      result = await app.graphql(body.query, context as never, body.variables, body.operationName);
    } catch (error) {
      const requestErrors = (error as { errors?: GraphQLError[] }).errors;
      if (!requestErrors) throw error;
      // Parse and validation errors: GraphQL-over-HTTP omits `data` for these.
      const { errors } = formatErrors(requestErrors, request.log);
      return reply.code(200).send({ errors });
    }
    const response: { data?: unknown; errors?: unknown; extensions?: unknown } = {};
    // Absent when execution never started (GraphQL spec §7.1.2), null when a root field failed.
    if (result.data !== undefined) response.data = result.data;
    if (result.errors && result.errors.length > 0) {
      const { status, errors, retryAfterSeconds } = formatErrors(result.errors, request.log);
      response.errors = errors;
      reply.code(status);
      if (retryAfterSeconds !== undefined) reply.header("retry-after", String(retryAfterSeconds));
    }
    if (Object.keys(context.pageInfo).length > 0) response.extensions = { pageInfo: context.pageInfo };
    return reply.send(response);
  });
}
