/** Which fields of a returned object a query selects, through fragments and inline fragments. */
import {
  type FieldNode,
  type FragmentDefinitionNode,
  type FragmentSpreadNode,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  getDirectiveValues,
  type InlineFragmentNode,
  Kind,
  type SelectionSetNode,
} from "graphql";

interface SelectionInfo {
  fieldNodes: readonly FieldNode[];
  fragments: Record<string, FragmentDefinitionNode>;
  variableValues: Record<string, unknown>;
}

/** Whether `@skip`/`@include` keep a selection, as execution would (GraphQL spec §3.13). */
function isIncluded(
  node: FieldNode | FragmentSpreadNode | InlineFragmentNode,
  variables: Record<string, unknown>,
): boolean {
  if (!node.directives || node.directives.length === 0) return true;
  if (getDirectiveValues(GraphQLSkipDirective, node, variables)?.["if"] === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, node, variables)?.["if"] !== false;
}

/** The names (not aliases) of the fields selected under the resolved field. */
export function selectedFieldNames(info: SelectionInfo): Set<string> {
  const names = new Set<string>();
  const variables = info.variableValues ?? {};
  const visit = (selectionSet: SelectionSetNode | undefined, seen: Set<string>) => {
    for (const selection of selectionSet?.selections ?? []) {
      if (!isIncluded(selection, variables)) continue;
      if (selection.kind === Kind.FIELD) names.add(selection.name.value);
      else if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet, seen);
      else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        visit(info.fragments[selection.name.value]?.selectionSet, seen);
      }
    }
  };
  for (const node of info.fieldNodes) visit(node.selectionSet, new Set());
  return names;
}

/**
 * The fields selected under the resolved field, in the order the response writes them, when the
 * selection is plain — one field node, and under it only fields among `known`, each once, with no
 * alias, directive or fragment — so that a page can be written as text in that order
 * (records-json.ts); undefined for any other selection.
 */
export function plainSelection<Field extends string>(
  info: Pick<SelectionInfo, "fieldNodes">,
  known: readonly Field[],
): Field[] | undefined {
  if (info.fieldNodes.length !== 1) return undefined;
  const fields: Field[] = [];
  for (const selection of info.fieldNodes[0]!.selectionSet?.selections ?? []) {
    if (selection.kind !== Kind.FIELD || selection.alias || (selection.directives?.length ?? 0) > 0)
      return undefined;
    const name = selection.name.value as Field;
    if (!known.includes(name) || fields.includes(name)) return undefined;
    fields.push(name);
  }
  return fields.length > 0 ? fields : undefined;
}
