/**
 * Limits against abusive queries, checked during validation so that they answer quickly and
 * before any store work: depth, aliases, root fields and total fields. Token count and length
 * are bounded at parse time (see `graphql-endpoint.ts`).
 */
import {
  type ASTVisitor,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  type SelectionSetNode,
  type ValidationContext,
} from "graphql";

/** The bounds; each exceeded one is `QUERY_TOO_COMPLEX`. */
export const QUERY_LIMITS = {
  maxDepth: 4,
  /** Introspection (what GraphQL tools send) nests `ofType` deeply but is bounded by the schema. */
  maxIntrospectionDepth: 20,
  maxAliases: 15,
  maxRootFields: 5,
  maxFields: 100,
  maxTokens: 2000,
  maxQueryLength: 20_000,
} as const;

function tooComplex(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: "QUERY_TOO_COMPLEX" } });
}

interface Tally {
  fields: number;
  aliases: number;
  depth: number;
}

function tally(
  selectionSet: SelectionSetNode,
  fragments: Record<string, FragmentDefinitionNode>,
  depth: number,
  seen: Set<string>,
  total: Tally,
): void {
  total.depth = Math.max(total.depth, depth);
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      total.fields += 1;
      if (selection.alias) total.aliases += 1;
      if (selection.selectionSet) tally(selection.selectionSet, fragments, depth + 1, seen, total);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      tally(selection.selectionSet, fragments, depth, seen, total);
    } else {
      const fragment = fragments[selection.name.value];
      // A fragment spread twice counts twice; a cycle (invalid anyway) is walked once.
      if (fragment && !seen.has(fragment.name.value)) {
        seen.add(fragment.name.value);
        tally(fragment.selectionSet, fragments, depth, seen, total);
        seen.delete(fragment.name.value);
      }
    }
  }
}

/** A validation rule reporting the first limit an operation exceeds. */
export function queryLimitsRule(context: ValidationContext): ASTVisitor {
  return {
    OperationDefinition(operation) {
      const fragments: Record<string, FragmentDefinitionNode> = {};
      for (const definition of context.getDocument().definitions) {
        if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
      }
      const total: Tally = { fields: 0, aliases: 0, depth: 0 };
      const introspection: Tally = { fields: 0, aliases: 0, depth: 0 };
      for (const selection of operation.selectionSet.selections) {
        const isIntrospection = selection.kind === Kind.FIELD && selection.name.value.startsWith("__");
        tally(
          { kind: Kind.SELECTION_SET, selections: [selection] },
          fragments,
          1,
          new Set(),
          isIntrospection ? introspection : total,
        );
      }
      const roots = countRootFields(operation.selectionSet, fragments, new Set());
      if (total.depth > QUERY_LIMITS.maxDepth) {
        context.reportError(tooComplex(`query depth ${total.depth} exceeds ${QUERY_LIMITS.maxDepth}`));
      } else if (introspection.depth > QUERY_LIMITS.maxIntrospectionDepth) {
        context.reportError(
          tooComplex(
            `introspection depth ${introspection.depth} exceeds ${QUERY_LIMITS.maxIntrospectionDepth}`,
          ),
        );
      } else if (total.aliases + introspection.aliases > QUERY_LIMITS.maxAliases) {
        context.reportError(
          tooComplex(
            `query uses ${total.aliases + introspection.aliases} aliases; at most ${QUERY_LIMITS.maxAliases}`,
          ),
        );
      } else if (roots > QUERY_LIMITS.maxRootFields) {
        context.reportError(
          tooComplex(`query asks for ${roots} top-level fields; at most ${QUERY_LIMITS.maxRootFields}`),
        );
      } else if (total.fields > QUERY_LIMITS.maxFields) {
        context.reportError(
          tooComplex(`query selects ${total.fields} fields; at most ${QUERY_LIMITS.maxFields}`),
        );
      }
      return false;
    },
  };
}

function countRootFields(
  selectionSet: SelectionSetNode,
  fragments: Record<string, FragmentDefinitionNode>,
  seen: Set<string>,
): number {
  let count = 0;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) count += selection.name.value.startsWith("__") ? 0 : 1;
    else if (selection.kind === Kind.INLINE_FRAGMENT)
      count += countRootFields(selection.selectionSet, fragments, seen);
    else {
      const fragment = fragments[selection.name.value];
      if (fragment && !seen.has(fragment.name.value)) {
        seen.add(fragment.name.value);
        count += countRootFields(fragment.selectionSet, fragments, seen);
        seen.delete(fragment.name.value);
      }
    }
  }
  return count;
}
