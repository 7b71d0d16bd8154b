/**
 * Validates a GraphQL document against the schema with graphql-js's specified rules and MDQ's
 * query limits; each error carries the code of the rule that reported it.
 */
import {
  type ASTVisitor,
  type DocumentNode,
  GraphQLError,
  type GraphQLSchema,
  MaxIntrospectionDepthRule,
  specifiedRules,
  type ValidationContext,
  type ValidationRule,
  validate,
} from "graphql";
import type { ErrorCode } from "../errors.js";
import { withCode } from "./coded-error.js";
import { queryLimitsRule } from "./query-limits.js";

/** The rules that bound what a query costs; the others check it against the schema. */
const COST_RULES: ReadonlySet<ValidationRule> = new Set([MaxIntrospectionDepthRule, queryLimitsRule]);

/** Each rule with the code of its errors. */
const RULES = [...specifiedRules, queryLimitsRule].map((rule): { rule: ValidationRule; code: ErrorCode } => ({
  rule,
  code: COST_RULES.has(rule) ? "QUERY_TOO_COMPLEX" : "GRAPHQL_VALIDATION_FAILED",
}));

const TOO_COMPLEX_TO_VALIDATE =
  "the query is too complex to validate: too many overlapping fields or fragment spreads";

type VisitFn = (...args: unknown[]) => unknown;

/** `visitor` with every callback calling `onThrow` with what it throws before rethrowing it. */
function guarded(visitor: ASTVisitor, onThrow: (thrown: unknown) => void): ASTVisitor {
  const guard =
    (fn: VisitFn): VisitFn =>
    (...args) => {
      try {
        return fn.apply(visitor, args);
      } catch (thrown) {
        onThrow(thrown);
        throw thrown;
      }
    };
  const wrapped: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(visitor) as [string, unknown][]) {
    if (typeof value === "function") {
      wrapped[key] = guard(value as VisitFn);
    } else if (typeof value === "object" && value !== null) {
      const { enter, leave } = value as { enter?: VisitFn; leave?: VisitFn };
      wrapped[key] = { ...(enter && { enter: guard(enter) }), ...(leave && { leave: guard(leave) }) };
    }
  }
  return wrapped as ASTVisitor;
}

/**
 * The validation errors of `document`, each with `extensions.code`: the code of the rule that
 * reported it, or QUERY_TOO_COMPLEX when a rule gave up because the document costs too much to
 * check (graphql-js throws its abort error out of that rule's visitor, then returns it).
 */
export function validateDocument(schema: GraphQLSchema, document: DocumentNode): GraphQLError[] {
  const aborts = new Set<unknown>();
  const rules = RULES.map(
    ({ rule, code }): ValidationRule =>
      (context) => {
        const reporting: ValidationContext = Object.create(context, {
          reportError: { value: (error: GraphQLError) => context.reportError(withCode(error, code)) },
        });
        return guarded(rule(reporting), (thrown) => {
          if (thrown instanceof GraphQLError) aborts.add(thrown);
        });
      },
  );
  return validate(schema, document, rules).map((error) =>
    aborts.has(error)
      ? new GraphQLError(TOO_COMPLEX_TO_VALIDATE, { extensions: { code: "QUERY_TOO_COMPLEX" } })
      : // graphql-js's own "too many validation errors" marker, reported by no rule.
        withCode(error, "GRAPHQL_VALIDATION_FAILED"),
  );
}
