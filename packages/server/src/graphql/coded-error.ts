/** Tags GraphQL errors with the catalogue code of the step that raised them. */
import { GraphQLError } from "graphql";
import type { ErrorCode } from "../errors.js";

/**
 * `error` with `extensions.code` set to `code`, unless it already carries a code of its own (a
 * scalar's or a query limit's). The step that raised an error knows what it means; its message
 * text, which changes between graphql-js versions, is never consulted.
 */
export function withCode(error: GraphQLError, code: ErrorCode): GraphQLError {
  if (error.extensions["code"] !== undefined) return error;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions: { ...error.extensions, code },
  });
}
