/**
 * The plan of a records walk (`records()`, `recordPages()`): the fields asked for, the sort, the
 * windows in the sort's direction, and, for a walk by day over every field with no filter, how it
 * is repaired when it meets a load (window-repair.ts).
 */
import { RECORD_FIELDS } from "@mdq/contract";
import { checkRecords } from "../answer-validation.js";
import { recordsQuery } from "../queries.js";
import type { MarketingRecord, RecordField, RecordSort, RecordsOptions } from "../types.js";
import type { WalkPlan } from "../walk-types.js";
import { checkedList } from "./option-checks.js";
import { commonVariables, type PlanContext, walkSettings, windowsOf } from "./walk-settings.js";

/** The sort of a walk that names none, and of every sync. */
export const DEFAULT_RECORD_SORT: RecordSort[] = [{ field: "DATE_DAY", direction: "ASC" }];

/** The walk of `options`' records. */
export function recordsPlan<Field extends RecordField>(
  context: PlanContext,
  options: RecordsOptions<Field>,
): WalkPlan<Pick<MarketingRecord, Field | "recordId">> {
  const fields = recordFields(options.fields);
  const sort = options.sort && options.sort.length > 0 ? options.sort : DEFAULT_RECORD_SORT;
  const newestFirst = sort[0]?.field === "DATE_DAY" && sort[0].direction === "DESC";
  type Row = Pick<MarketingRecord, Field | "recordId">;
  return {
    field: "marketingRecords",
    query: recordsQuery(fields),
    variables: commonVariables(context, options, sort),
    ...walkSettings(context, options, windowsOf(options, "day", newestFirst)),
    rowsOf: (raw, window) => checkRecords<Row>(raw, fields, window),
    keyOf: (row) => row.recordId,
    ...(sort.length === 1 &&
    sort[0]!.field === "DATE_DAY" &&
    !options.filter &&
    fields.length === RECORD_FIELDS.length
      ? { repair: { dateOf: (row: Row) => String((row as Record<string, unknown>)["date"]), newestFirst } }
      : {}),
  };
}

/** The fields asked for, in the schema's order, `recordId` always among them; all by default. */
function recordFields(fields: readonly RecordField[] | undefined): RecordField[] {
  if (fields === undefined || fields.length === 0) return [...RECORD_FIELDS];
  const chosen = new Set(checkedList(fields, RECORD_FIELDS, "fields"));
  chosen.add("recordId");
  return RECORD_FIELDS.filter((field) => chosen.has(field));
}
