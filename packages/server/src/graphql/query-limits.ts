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
  type SelectionNode,
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

/** What a selection set costs once fragments are expanded (a fragment spread twice counts twice). */
interface Cost {
  fields: number;
  aliases: number;
  /** Levels of nested fields, 1 for a set of leaf fields. */
  depth: number;
  /** Fields at this level, `__`-prefixed ones excepted; meaningful for the operation's own set. */
  topFields: number;
}

const NO_COST: Cost = { fields: 0, aliases: 0, depth: 0, topFields: 0 };

/**
 * Costs selections with each fragment costed once and then reused: walking every spread would
 * take time exponential in the number of fragments (each spreading the next twice), a denial of
 * service in a few hundred bytes.
 */
class CostCounter {
  readonly #fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  readonly #costs = new Map<string, Cost>();
  readonly #inProgress = new Set<string>();

  constructor(fragments: ReadonlyMap<string, FragmentDefinitionNode>) {
    this.#fragments = fragments;
  }

  costOf(selections: readonly SelectionNode[]): Cost {
    const total = { ...NO_COST };
    for (const selection of selections) {
      let cost: Cost;
      if (selection.kind === Kind.FIELD) {
        const below = selection.selectionSet ? this.costOf(selection.selectionSet.selections) : NO_COST;
        cost = {
          fields: 1 + below.fields,
          aliases: (selection.alias ? 1 : 0) + below.aliases,
          depth: 1 + below.depth,
          topFields: selection.name.value.startsWith("__") ? 0 : 1,
        };
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        cost = this.costOf(selection.selectionSet.selections);
      } else {
        cost = this.#fragmentCost(selection.name.value);
      }
      total.fields += cost.fields;
      total.aliases += cost.aliases;
      total.depth = Math.max(total.depth, cost.depth);
      total.topFields += cost.topFields;
    }
    return total;
  }

  #fragmentCost(name: string): Cost {
    const known = this.#costs.get(name);
    if (known) return known;
    const fragment = this.#fragments.get(name);
    // Unknown fragments and cycles are reported by the specified rules; they cost nothing here.
    if (!fragment || this.#inProgress.has(name)) return NO_COST;
    this.#inProgress.add(name);
    const cost = this.costOf(fragment.selectionSet.selections);
    this.#inProgress.delete(name);
    this.#costs.set(name, cost);
    return cost;
  }
}

/** A validation rule reporting the first limit an operation exceeds. */
export function queryLimitsRule(context: ValidationContext): ASTVisitor {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of context.getDocument().definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const counter = new CostCounter(fragments);
  return {
    OperationDefinition(operation) {
      const total = { ...NO_COST };
      const introspection = { ...NO_COST };
      for (const selection of operation.selectionSet.selections) {
        const isIntrospection = selection.kind === Kind.FIELD && selection.name.value.startsWith("__");
        const cost = counter.costOf([selection]);
        const tally = isIntrospection ? introspection : total;
        tally.fields += cost.fields;
        tally.aliases += cost.aliases;
        tally.depth = Math.max(tally.depth, cost.depth);
        tally.topFields += cost.topFields;
      }
      const aliases = total.aliases + introspection.aliases;
      if (total.depth > QUERY_LIMITS.maxDepth) {
        context.reportError(tooComplex(`query depth ${total.depth} exceeds ${QUERY_LIMITS.maxDepth}`));
      } else if (introspection.depth > QUERY_LIMITS.maxIntrospectionDepth) {
        context.reportError(
          tooComplex(
            `introspection depth ${introspection.depth} exceeds ${QUERY_LIMITS.maxIntrospectionDepth}`,
          ),
        );
      } else if (aliases > QUERY_LIMITS.maxAliases) {
        context.reportError(tooComplex(`query uses ${aliases} aliases; at most ${QUERY_LIMITS.maxAliases}`));
      } else if (total.topFields > QUERY_LIMITS.maxRootFields) {
        context.reportError(
          tooComplex(
            `query asks for ${total.topFields} top-level fields; at most ${QUERY_LIMITS.maxRootFields}`,
          ),
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
