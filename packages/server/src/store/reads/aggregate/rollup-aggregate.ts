/**
 * A `marketingAggregate` page that is not grouped by campaign, answered from the record rollup
 * (sql/rollup-table.ts): the engine sums the rollup per group, source currency and day
 * (`planRollupPartials`), and the partial sums are converted, totalled, sorted and paged here with
 * the FX history the store keeps per data generation (walk-memory.ts), so no statement joins the
 * rates. The arithmetic is the planner's (`planAggregatePage`, CONTRACT §3 rule 7), to the bit:
 * each partial converted exactly to 10⁻⁸ units (half-even), the partials summed per group, the
 * sum rounded half-even to the currency's minor unit, then divided as a double; groups ordered by
 * the asked sort (money by its unrounded sum), ties by the group keys ascending.
 */
import { CURRENCIES, type CurrencyCode } from "../../../currencies.js";
import type { ResultTable } from "../../model/engine.js";
import type { AggregateQuery, Metric } from "../../model/query-request.js";
import { PARTIAL_METRICS } from "../../sql/partial-sums.js";
import { type DayRates, divHalfEven } from "../../sql/record-money.js";

type Row = Record<string, unknown>;

const MONEY: ReadonlySet<Metric> = new Set(["SPEND", "REVENUE"]);

/** One group: its keys (text) and per metric its exact sum (money in 10⁻⁸ of the target). */
interface Group {
  keys: string[];
  sums: bigint[];
}

/** The totalled groups of a query, before sorting and paging, and the first missing rate. */
export interface RollupTotals {
  groups: Group[];
  /** The least `CUR YYYY-MM-DD` whose conversion lacks a rate (CONTRACT §3 rule 7), or null. */
  missingRate: { currency: string; date: string } | null;
}

/**
 * Converts and totals the partial sums of `table` (`planRollupPartials`' columns) per group.
 * `rates` is only read when the query asks for money.
 */
export function totalRollupPartials(
  table: ResultTable,
  query: AggregateQuery,
  rates: DayRates | null,
): RollupTotals {
  const keyCount = query.groupBy.length;
  const target = query.currency;
  const groups = new Map<string, Group>();
  let sample: string | null = null;
  for (let row = 0; row < table.rowCount; row += 1) {
    const keys: string[] = [];
    for (let column = 0; column < keyCount; column += 1) keys.push(String(table.value(row, column)));
    const currency = String(table.value(row, keyCount));
    const day = String(table.value(row, keyCount + 1));
    const id = keys.join("\u0000");
    let group = groups.get(id);
    if (group === undefined) {
      group = { keys, sums: PARTIAL_METRICS.map(() => 0n) };
      groups.set(id, group);
    }
    let targetRate: bigint | undefined;
    let sourceRate: bigint | undefined;
    if (rates !== null && currency !== target) {
      targetRate = rates.rateOn(target, day);
      sourceRate = rates.rateOn(currency, day);
      if (targetRate === undefined || sourceRate === undefined) {
        const missing = `${sourceRate === undefined ? currency : target} ${day}`;
        if (sample === null || missing < sample) sample = missing;
      }
    }
    for (let index = 0; index < PARTIAL_METRICS.length; index += 1) {
      const sum = BigInt((table.value(row, keyCount + 2 + index) as bigint | string | number | null) ?? 0);
      if (!MONEY.has(PARTIAL_METRICS[index]!)) {
        group.sums[index]! += sum;
        continue;
      }
      if (rates === null) continue;
      if (currency === target) group.sums[index]! += sum * 10_000n;
      else if (targetRate !== undefined && sourceRate !== undefined)
        group.sums[index]! += divHalfEven(sum * targetRate * 10_000n, sourceRate);
    }
  }
  // Without a grouping there is one group, even over no rows (SQL's aggregate of nothing).
  if (keyCount === 0 && groups.size === 0) groups.set("", { keys: [], sums: PARTIAL_METRICS.map(() => 0n) });
  return {
    groups: [...groups.values()],
    missingRate: sample === null ? null : { currency: sample.slice(0, 3), date: sample.slice(4) },
  };
}

/** The page's rows of `groups`: sorted as the query asks, then cut to its page. */
export function rollupPageRows(groups: Group[], query: AggregateQuery): Row[] {
  const order = query.sort.map((entry) => {
    const sign = entry.direction === "DESC" ? -1 : 1;
    const key = query.groupBy.indexOf(entry.field as AggregateQuery["groupBy"][number]);
    if (key !== -1) return (a: Group, b: Group) => sign * compareText(a.keys[key]!, b.keys[key]!);
    const metric = PARTIAL_METRICS.indexOf(entry.field.slice("TOTAL_".length) as Metric);
    return (a: Group, b: Group) => sign * compareBig(a.sums[metric]!, b.sums[metric]!);
  });
  groups.sort((a, b) => {
    for (const compare of order) {
      const answer = compare(a, b);
      if (answer !== 0) return answer;
    }
    for (let key = 0; key < a.keys.length; key += 1) {
      const answer = compareText(a.keys[key]!, b.keys[key]!);
      if (answer !== 0) return answer;
    }
    return 0;
  });
  const start = (query.page.page - 1) * query.page.pageSize;
  return groups.slice(start, start + query.page.pageSize).map((group) => rowOf(group, query));
}

/** A group as the page's row: its keys, then each asked total as GraphQL serialises it. */
function rowOf(group: Group, query: AggregateQuery): Row {
  const row: Row = {};
  query.groupBy.forEach((dimension, index) => {
    row[dimension] = group.keys[index];
  });
  for (const metric of query.metrics) {
    const sum = group.sums[PARTIAL_METRICS.indexOf(metric)]!;
    row[`TOTAL_${metric}`] = totalValue(metric, sum, query.currency);
  }
  return row;
}

function totalValue(metric: Metric, sum: bigint, currency: CurrencyCode): number {
  if (metric === "CONVERSIONS") return Number(sum) / 10_000;
  if (!MONEY.has(metric)) return Number(sum);
  const minorUnits = CURRENCIES[currency].minorUnits;
  return Number(divHalfEven(sum, 10n ** BigInt(8 - minorUnits))) / 10 ** minorUnits;
}

/** Byte order for the keys (ASCII codes and dates): the engines' order of these columns. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
