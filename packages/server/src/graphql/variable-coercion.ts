/** Selects the operation a request runs and coerces its variables, as graphql-js executes them. */
import {
  type DocumentNode,
  GraphQLError,
  type GraphQLSchema,
  getVariableValues,
  Kind,
  type OperationDefinitionNode,
} from "graphql";
import { withCode } from "./coded-error.js";

/** graphql-js's own bound on variable errors per request (`buildExecutionContext`). */
const MAX_VARIABLE_ERRORS = 50;

/**
 * The operation named `operationName`, or the only one (GraphQL spec §6.1 GetOperation); else a
 * GRAPHQL_VALIDATION_FAILED error in graphql-js's words.
 */
export function selectOperation(
  document: DocumentNode,
  operationName: string | undefined,
): OperationDefinitionNode | GraphQLError {
  const operations = document.definitions.filter(
    (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
  );
  const refuse = (message: string) =>
    new GraphQLError(message, { extensions: { code: "GRAPHQL_VALIDATION_FAILED" } });
  if (operationName === undefined) {
    if (operations.length > 1)
      return refuse("Must provide operation name if query contains multiple operations.");
    return operations[0] ?? refuse("Must provide an operation.");
  }
  return (
    operations.find((operation) => operation.name?.value === operationName) ??
    refuse(`Unknown operation named "${operationName}".`)
  );
}

/**
 * The errors coercing `variables` for `operation` (GraphQL spec §6.1.2 CoerceVariableValues, by
 * graphql-js): each is BAD_USER_INPUT, the caller's values being wrong, not the document. Done
 * here for every run so that graphql-jit's compiled coercion, whose messages differ (and name a
 * nested input field as if it were the variable), never answers a caller.
 */
export function coerceVariables(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> | undefined,
): GraphQLError[] {
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {}, {
    maxErrors: MAX_VARIABLE_ERRORS,
  });
  return (coerced.errors ?? []).map((error) => withCode(error, "BAD_USER_INPUT"));
}
