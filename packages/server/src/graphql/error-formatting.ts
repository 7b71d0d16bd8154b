/**
 * The one place GraphQL errors become response bodies: every error gets `extensions.code` from
 * the catalogue; a store that cannot answer becomes SERVICE_UNAVAILABLE (503, `Retry-After`);
 * anything unexpected is masked to INTERNAL_SERVER_ERROR, its detail only logged.
 */
import type { GraphQLError, GraphQLFormattedError } from "graphql";
import { type ErrorCode, GRAPHQL_ERROR_CODES, MdqError, STORE_UNAVAILABLE_MESSAGE } from "../errors.js";
import { StoreUnavailableError } from "../store/store.js";

interface Logger {
  error(object: unknown, message: string): void;
}

function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(GRAPHQL_ERROR_CODES, value);
}

/** graphql-js's parser stopping at `maxTokens` (its wording, typo included, varies by version). */
const TOO_MANY_TOKENS = /^Syntax Error: Document contains more tha[nt] (\d+) tokens\. Parsing aborted\.$/;
/** graphql-js's validator giving up on a document whose fields or fragments cost too much to check. */
const VALIDATION_ABORTED = "Validation aborted.";
/** graphql-js's own introspection depth guard (MaxIntrospectionDepthRule). */
const INTROSPECTION_TOO_DEEP = "Maximum introspection depth exceeded";
/**
 * Variable coercion errors (graphql-js `coerceVariableValues`, graphql-jit alike): the caller's
 * variables, not the document, are wrong. Validation rules also start with `Variable "$…"` (not
 * defined, never used, wrong position), so the match is on the coercion wordings only.
 */
const VARIABLE_COERCION =
  /^Variable "\$[^"]+" (?:got invalid value |of required type "[^"]+" was not provided\.|of non-null type "[^"]+" must not be null\.)/;

/** The catalogue code of a GraphQL error. */
export function codeOf(error: GraphQLError): ErrorCode {
  const original = error.originalError as (Error & { extensions?: Record<string, unknown> }) | undefined;
  if (original instanceof MdqError) return original.code;
  if (original instanceof StoreUnavailableError) return "SERVICE_UNAVAILABLE";
  if (isErrorCode(error.extensions?.["code"])) return error.extensions["code"] as ErrorCode;
  if (isErrorCode(original?.extensions?.["code"])) return original.extensions["code"] as ErrorCode;
  if (error.path === undefined || error.path.length === 0) {
    if (
      TOO_MANY_TOKENS.test(error.message) ||
      error.message === VALIDATION_ABORTED ||
      error.message === INTROSPECTION_TOO_DEEP
    ) {
      return "QUERY_TOO_COMPLEX";
    }
    if (error.message.startsWith("Syntax Error")) return "GRAPHQL_PARSE_FAILED";
    return VARIABLE_COERCION.test(error.message) ? "BAD_USER_INPUT" : "GRAPHQL_VALIDATION_FAILED";
  }
  return "INTERNAL_SERVER_ERROR";
}

/** The message shown for an error: graphql-js's own, except where its wording is internal. */
function messageOf(error: GraphQLError, code: ErrorCode): string {
  if (!GRAPHQL_ERROR_CODES[code].exposeMessage) return "Internal server error";
  if (error.originalError instanceof StoreUnavailableError) return STORE_UNAVAILABLE_MESSAGE;
  const tokens = TOO_MANY_TOKENS.exec(error.message);
  if (tokens) return `the query has more than ${tokens[1]} tokens; at most ${tokens[1]} are allowed`;
  if (error.message === VALIDATION_ABORTED) {
    return "the query is too complex to validate: too many overlapping fields or fragment spreads";
  }
  return error.message;
}

/**
 * Formats `errors` for the response; returns the HTTP status they call for: 500 when something
 * failed unexpectedly (clients retry 5xx), else 503 when the store could not answer (with the
 * `Retry-After` seconds it asked for), else 403 when data outside the grants was asked for,
 * else 200.
 */
export function formatErrors(
  errors: readonly GraphQLError[],
  log: Logger,
): { status: number; errors: GraphQLFormattedError[]; retryAfterSeconds?: number } {
  let status = 200;
  let retryAfterSeconds: number | undefined;
  const formatted = errors.map((error) => {
    const code = codeOf(error);
    const catalogued = GRAPHQL_ERROR_CODES[code];
    if (!catalogued.exposeMessage)
      log.error({ err: error.originalError ?? error, path: error.path }, "resolver failed");
    if (code === "FORBIDDEN" && status === 200) status = 403;
    if (error.originalError instanceof StoreUnavailableError) {
      retryAfterSeconds = Math.max(retryAfterSeconds ?? 1, error.originalError.retryAfterSeconds);
      if (status !== 500) status = 503;
    }
    if (code === "INTERNAL_SERVER_ERROR") status = 500;
    const body: {
      message: string;
      locations?: GraphQLFormattedError["locations"];
      path?: (string | number)[];
      extensions: { code: ErrorCode };
    } = {
      message: messageOf(error, code),
      extensions: { code },
    };
    if (error.locations) body.locations = error.locations;
    if (error.path) body.path = [...error.path];
    return body;
  });
  return retryAfterSeconds === undefined
    ? { status, errors: formatted }
    : { status, errors: formatted, retryAfterSeconds };
}
