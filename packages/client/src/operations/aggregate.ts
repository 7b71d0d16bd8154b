/**
 * The plan of an aggregate walk (`aggregate()`, `aggregatePages()`): the metrics and groups asked
 * for, windows aligned so that a grouped week or month is never split, in the sort's direction.
 */
import { DIMENSIONS, isDateDimension, METRICS } from "@mdq/contract";
import { checkAggregates } from "../answer-validation.js";
import type { WindowAlignment } from "../date-windows.js";
import { MdqClientError } from "../errors.js";
import { aggregateQuery } from "../queries.js";
import type { AggregateOptions, MarketingAggregate } from "../types.js";
import type { WalkPlan } from "../walk-types.js";
import { checkedList } from "./option-checks.js";
import { commonVariables, type PlanContext, walkSettings, windowsOf } from "./walk-settings.js";

/** The walk of `options`' aggregate rows. */
export function aggregatePlan(context: PlanContext, options: AggregateOptions): WalkPlan<MarketingAggregate> {
  const metrics = checkedList(options.metrics, METRICS, "metrics");
  if (metrics.length === 0)
    throw new MdqClientError("INVALID_CONFIG", "metrics must name at least one metric");
  const groupBy =
    options.groupBy === undefined ? undefined : checkedList(options.groupBy, DIMENSIONS, "groupBy");
  const grouped = groupBy ?? ["DATE_DAY"];
  const align: WindowAlignment = grouped.includes("DATE_MONTH")
    ? "month"
    : grouped.includes("DATE_WEEK")
      ? "week"
      : "day";
  const firstSort = options.sort?.[0];
  const newestFirst = firstSort
    ? isDateDimension(firstSort.field) && firstSort.direction === "DESC"
    : grouped.some(isDateDimension);
  const totals = metrics.map((metric) => `TOTAL_${metric}`);
  const variables = {
    ...commonVariables(context, options, options.sort),
    metrics,
    ...(groupBy === undefined ? {} : { groupBy }),
  };
  return {
    field: "marketingAggregate",
    query: aggregateQuery(totals),
    variables,
    ...walkSettings(context, options, windowsOf(options, align, newestFirst)),
    rowsOf: (raw) => checkAggregates(raw),
  };
}
