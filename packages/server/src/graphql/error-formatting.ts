/**
 * The one place GraphQL errors become response bodies: every error gets `extensions.code` from
 * the catalogue; a store that cannot answer becomes SERVICE_UNAVAILABLE (503, `Retry-After`);
 * anything unexpected is masked to INTERNAL_SERVER_ERROR, its detail only logged.
 */
import type { GraphQLError, GraphQLFormattedError } from "graphql";
import { type ErrorCode, GRAPHQL_ERROR_CODES, MdqError, STORE_UNAVAILABLE_MESSAGE } from "../errors.js";
import { StoreUnavailableError } from "../store/model/store-errors.js";

interface Logger {
  error(object: unknown, message: string): void;
}

function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(GRAPHQL_ERROR_CODES, value);
}

/** The catalogue code of a GraphQL error. */
export function codeOf(error: GraphQLError): ErrorCode {
  const original = error.originalError as (Error & { extensions?: Record<string, unknown> }) | undefined;
  if (original instanceof MdqError) return original.code;
  if (original instanceof StoreUnavailableError) return "SERVICE_UNAVAILABLE";
  if (isErrorCode(error.extensions?.["code"])) return error.extensions["code"] as ErrorCode;
  if (isErrorCode(original?.extensions?.["code"])) return original.extensions["code"] as ErrorCode;
  // Request errors are coded where they are raised (request-checks.ts); anything else is unexpected.
  return "INTERNAL_SERVER_ERROR";
}

/** The message shown for an error: its own, unless its code keeps it internal. */
function messageOf(error: GraphQLError, code: ErrorCode): string {
  if (!GRAPHQL_ERROR_CODES[code].exposeMessage) return "Internal server error";
  if (error.originalError instanceof StoreUnavailableError) return STORE_UNAVAILABLE_MESSAGE;
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
