/**
 * The checks a GraphQL request passes before execution, as one pipeline: parse (within the token
 * limit) → validate (specified rules and query limits) → select the operation → coerce the
 * variables. Each step gives its errors the catalogue code for what it found, so no code is ever
 * chosen from graphql-js's message text.
 */
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  type GraphQLSchema,
  Kind,
} from "graphql";
import { LRUCache } from "lru-cache";
import type { GraphQLQuestion } from "../observability/question-class.js";
import { parseDocument } from "./document-parsing.js";
import { validateDocument } from "./document-validation.js";
import { questionClassOf, type RequestClass, requestClassOf } from "./request-class.js";
import { coerceVariables, selectOperation } from "./variable-coercion.js";

export interface CheckedRequest {
  query: string;
  variables: Record<string, unknown> | undefined;
  operationName: string | undefined;
}

/** Checks requests against one schema; `check` answers the errors refusing one, `[]` if none. */
export interface RequestChecks {
  check(request: CheckedRequest): readonly GraphQLError[];
  /** The lane of a request `check` passed (request-class.ts); heavy for any other. */
  classOf(request: CheckedRequest): RequestClass;
  /** The question a request `check` passed asks (request-class.ts); `other` for any other. */
  questionOf(request: CheckedRequest): GraphQLQuestion;
}

/**
 * Request checks for `schema`. Documents that passed, and the errors of those that did not, are
 * kept for `cacheSize` query strings each (two caches, so a flood of bad queries cannot evict the
 * good ones), so a repeated query is parsed and validated once.
 */
export function requestChecks(schema: GraphQLSchema, cacheSize: number): RequestChecks {
  const valid = new LRUCache<string, DocumentNode>({ max: cacheSize });
  const refused = new LRUCache<string, readonly GraphQLError[]>({ max: cacheSize });

  /** The document of `query` once parsed and validated, or the errors refusing it. */
  function checkedDocument(query: string): { document: DocumentNode } | { errors: readonly GraphQLError[] } {
    const document = valid.get(query);
    if (document) return { document };
    const known = refused.get(query);
    if (known) return { errors: known };
    const parsed = parseDocument(query);
    const errors = parsed instanceof GraphQLError ? [parsed] : validateDocument(schema, parsed);
    if (errors.length > 0 || parsed instanceof GraphQLError) {
      refused.set(query, errors);
      return { errors };
    }
    valid.set(query, parsed);
    return { document: parsed };
  }

  /** The operation a checked request runs and its document's fragments, or undefined. */
  function checkedOperation({ query, operationName }: CheckedRequest) {
    const document = valid.get(query);
    const operation = document && selectOperation(document, operationName);
    if (document === undefined || operation === undefined || operation instanceof GraphQLError)
      return undefined;
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const definition of document.definitions)
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    return { operation, fragments };
  }

  return {
    check({ query, variables, operationName }) {
      const checked = checkedDocument(query);
      if ("errors" in checked) return checked.errors;
      const operation = selectOperation(checked.document, operationName);
      if (operation instanceof GraphQLError) return [operation];
      return coerceVariables(schema, operation, variables);
    },
    classOf(request) {
      const checked = checkedOperation(request);
      return checked ? requestClassOf(checked.operation, checked.fragments) : "heavy";
    },
    questionOf(request) {
      const checked = checkedOperation(request);
      return checked ? questionClassOf(checked.operation, checked.fragments) : "other";
    },
  };
}
