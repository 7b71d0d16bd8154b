/**
 * Which lane a GraphQL request takes (CONTRACT §8): heavy when its operation selects a records
 * page or an aggregate at its root, cheap otherwise (readiness, changes, `myAccess`,
 * introspection). A document mixing both is heavy: it holds the engine as long as its heaviest
 * field.
 */
import {
  type FragmentDefinitionNode,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";

/** A request's lane: cheap questions never wait behind heavy work. */
export type RequestClass = "cheap" | "heavy";

/** The root fields that read many rows (a records page, an aggregate). */
export const HEAVY_ROOT_FIELDS: ReadonlySet<string> = new Set(["marketingRecords", "marketingAggregate"]);

/**
 * The class of `operation`: its root fields through fragments and inline fragments. `@skip` and
 * `@include` are not evaluated: a heavy field that a variable may skip still counts, so that no
 * variable can move heavy work into the cheap lane.
 */
export function requestClassOf(
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): RequestClass {
  const seen = new Set<string>();
  const heavy = (selectionSet: SelectionSetNode | undefined): boolean =>
    (selectionSet?.selections ?? []).some((selection) => {
      if (selection.kind === Kind.FIELD) return HEAVY_ROOT_FIELDS.has(selection.name.value);
      if (selection.kind === Kind.INLINE_FRAGMENT) return heavy(selection.selectionSet);
      if (seen.has(selection.name.value)) return false;
      seen.add(selection.name.value);
      return heavy(fragments.get(selection.name.value)?.selectionSet);
    });
  return heavy(operation.selectionSet) ? "heavy" : "cheap";
}
