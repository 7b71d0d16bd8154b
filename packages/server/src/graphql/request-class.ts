/**
 * Which lane a GraphQL request takes (CONTRACT §8): heavy when its operation selects a records
 * page or an aggregate at its root, cheap otherwise (readiness, changes, `myAccess`,
 * introspection). A document mixing both is heavy: it holds the engine as long as its heaviest
 * field. And which question it asks, for `mdq_question_duration_seconds`: the class of its root
 * fields when they all have the same one, `other` when they mix or none has one.
 */
import {
  type FragmentDefinitionNode,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
import type { GraphQLQuestion } from "../observability/question-class.js";

/** A request's lane: cheap questions never wait behind heavy work. */
export type RequestClass = "cheap" | "heavy";

/** The root fields that read many rows (a records page, an aggregate). */
export const HEAVY_ROOT_FIELDS: ReadonlySet<string> = new Set(["marketingRecords", "marketingAggregate"]);

/** The names of `selectionSet`'s fields, through fragments and inline fragments (each once). */
function rootFieldNames(
  selectionSet: SelectionSetNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  names = new Set<string>(),
  seen = new Set<string>(),
): Set<string> {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) names.add(selection.name.value);
    else if (selection.kind === Kind.INLINE_FRAGMENT)
      rootFieldNames(selection.selectionSet, fragments, names, seen);
    else if (!seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      const fragment = fragments.get(selection.name.value);
      if (fragment) rootFieldNames(fragment.selectionSet, fragments, names, seen);
    }
  }
  return names;
}

/**
 * The class of `operation`: its root fields through fragments and inline fragments. `@skip` and
 * `@include` are not evaluated: a heavy field that a variable may skip still counts, so that no
 * variable can move heavy work into the cheap lane.
 */
export function requestClassOf(
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): RequestClass {
  const names = rootFieldNames(operation.selectionSet, fragments);
  return [...names].some((name) => HEAVY_ROOT_FIELDS.has(name)) ? "heavy" : "cheap";
}

/** The question class of each root field that has one (`__typename` and introspection: none). */
const QUESTION_OF_ROOT_FIELD: ReadonlyMap<string, GraphQLQuestion> = new Map([
  ["marketingDataReadiness", "readiness"],
  ["marketingDataChanges", "changes"],
  ["myAccess", "myAccess"],
  ["marketingRecords", "records"],
  ["marketingAggregate", "aggregate"],
]);

/**
 * The question `operation` asks: the class its root fields share (`__typename` aside), `other`
 * when they mix classes or one has none (introspection).
 */
export function questionClassOf(
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): GraphQLQuestion {
  const questions = new Set<GraphQLQuestion>();
  for (const name of rootFieldNames(operation.selectionSet, fragments)) {
    if (name === "__typename") continue;
    questions.add(QUESTION_OF_ROOT_FIELD.get(name) ?? "other");
  }
  const [only] = questions;
  return questions.size === 1 && only !== undefined ? only : "other";
}
