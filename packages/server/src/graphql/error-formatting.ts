/**
 * The one place GraphQL errors become response bodies: every error gets `extensions.code` from
 * the catalogue; anything unexpected is masked to INTERNAL_SERVER_ERROR, its detail only logged.
 */
import type { GraphQLError, GraphQLFormattedError } from "graphql";
import { type ErrorCode, GRAPHQL_ERROR_CODES, MdqError } from "../errors.js";

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
  if (isErrorCode(error.extensions?.["code"])) return error.extensions["code"] as ErrorCode;
  if (isErrorCode(original?.extensions?.["code"])) return original.extensions["code"] as ErrorCode;
  if (error.message.startsWith("Syntax Error")) {
    return error.message.includes("tokens") ? "QUERY_TOO_COMPLEX" : "GRAPHQL_PARSE_FAILED";
  }
  if (error.path === undefined || error.path.length === 0) {
    // Errors before execution: variable coercion is the caller's input, the rest is validation.
    return error.message.startsWith('Variable "$') ? "BAD_USER_INPUT" : "GRAPHQL_VALIDATION_FAILED";
  }
  return "INTERNAL_SERVER_ERROR";
}

/** Formats `errors` for the response; returns the HTTP status they call for (403 or 200). */
export function formatErrors(
  errors: readonly GraphQLError[],
  log: Logger,
): { status: number; errors: GraphQLFormattedError[] } {
  let status = 200;
  const formatted = errors.map((error) => {
    const code = codeOf(error);
    const catalogued = GRAPHQL_ERROR_CODES[code];
    if (!catalogued.exposeMessage)
      log.error({ err: error.originalError ?? error, path: error.path }, "resolver failed");
    if (code === "FORBIDDEN") status = 403;
    const body: {
      message: string;
      locations?: GraphQLFormattedError["locations"];
      path?: (string | number)[];
      extensions: { code: ErrorCode };
    } = {
      message: catalogued.exposeMessage ? error.message : "Internal server error",
      extensions: { code },
    };
    if (error.locations) body.locations = error.locations;
    if (error.path) body.path = [...error.path];
    return body;
  });
  return { status, errors: formatted };
}
