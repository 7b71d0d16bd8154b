/** Which fields of a returned object a query selects, through fragments and inline fragments. */
import { type FieldNode, type FragmentDefinitionNode, Kind, type SelectionSetNode } from "graphql";

interface SelectionInfo {
  fieldNodes: readonly FieldNode[];
  fragments: Record<string, FragmentDefinitionNode>;
}

/** The names (not aliases) of the fields selected under the resolved field. */
export function selectedFieldNames(info: SelectionInfo): Set<string> {
  const names = new Set<string>();
  const visit = (selectionSet: SelectionSetNode | undefined, seen: Set<string>) => {
    for (const selection of selectionSet?.selections ?? []) {
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
