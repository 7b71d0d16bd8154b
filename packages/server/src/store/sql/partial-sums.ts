/**
 * An aggregate's partial sums: the metrics they sum and the stored columns, in the one order both
 * the plan that reads them (reads/aggregate/aggregate-plan.ts) and the code that totals them
 * (reads/aggregate/rollup-aggregate.ts) use.
 */
import type { Metric } from "../model/query-request.js";

export const METRIC_COLUMNS: Record<Metric, string> = {
  IMPRESSIONS: "impressions",
  CLICKS: "clicks",
  SPEND: "spend_e4",
  CONVERSIONS: "conversions_e4",
  REVENUE: "revenue_e4",
};

/**
 * The metrics of an aggregate's partial sums, in the order `planRollupPartials` gives them
 * (rollup-aggregate.ts reads them so), and the stored columns they sum.
 */
export const PARTIAL_METRICS: readonly Metric[] = [
  "IMPRESSIONS",
  "CLICKS",
  "CONVERSIONS",
  "SPEND",
  "REVENUE",
];

export const PARTIAL_SUMS = PARTIAL_METRICS.map((metric) => METRIC_COLUMNS[metric]);
