/**
 * Reads a `marketingAggregate` page inside one snapshot: its rows, group count, missing-rate
 * check and data version.
 */
import type { CurrencyCode } from "../../../currencies.js";
import type { ResultTable, SnapshotReader } from "../../model/engine.js";
import type { AggregateQuery } from "../../model/query-request.js";
import type { PageResult } from "../../model/store.js";
import { missingRateError } from "../../model/store-errors.js";
import { walkRates } from "../fx-rates/fx-rates-reader.js";
import { readDataVersion } from "../versions/versions-reader.js";
import type { WalkCount, WalkMemory } from "../walk-memory.js";
import {
  aggregateReadsRollup,
  type PlannedAggregatePage,
  type PlannedCount,
  planAggregateCount,
  planAggregateMissingRate,
  planAggregatePage,
  planRollupPartials,
} from "./aggregate-plan.js";
import { rollupPageRows, totalRollupPartials } from "./rollup-aggregate.js";

type Row = Record<string, unknown>;

/** A planned count's answer. */
type CountResult = WalkCount;

/** An aggregate page's rows with what its window columns say. */
interface AggregateRows {
  rows: Row[];
  totalCount: number;
  missingRateRows: number;
}

/** A `marketingAggregate` page, its group count and data version; MissingFxRateError when a rate lacks. */
export async function readAggregatePage(
  reader: SnapshotReader,
  query: AggregateQuery,
  walks: WalkMemory,
): Promise<PageResult<Row>> {
  if (aggregateReadsRollup(query)) return readRollupAggregatePage(reader, query, walks);
  const page = await readAggregateRows(reader, planAggregatePage(query, reader.dialect));
  let totalCount = page.totalCount;
  if (page.rows.length === 0) {
    totalCount = (await readCount(reader, planAggregateCount(query, reader.dialect))).total;
    // A page past the end needs the same conversions as page 1: same answer as records give.
    if (totalCount > 0 && query.metrics.some((metric) => metric === "SPEND" || metric === "REVENUE")) {
      const sample = await readCount(reader, planAggregateMissingRate(query, reader.dialect));
      if (sample.missingRate !== null) throw missingRateError(sample.missingRate);
    }
  } else if (page.missingRateRows > 0) {
    const sample = await readCount(reader, planAggregateMissingRate(query, reader.dialect));
    throw missingRateError(sample.missingRate ?? { currency: query.currency, date: query.scope.from });
  }
  const dataVersion = await readDataVersion(reader, query);
  return { rows: withCurrency(page.rows, query.currency), totalCount, dataVersion };
}

/**
 * An aggregate page from the record rollup (rollup-aggregate.ts): the partial sums read by one
 * statement, converted with the FX history kept per generation, like a records page's money.
 */
async function readRollupAggregatePage(
  reader: SnapshotReader,
  query: AggregateQuery,
  walks: WalkMemory,
): Promise<PageResult<Row>> {
  const table = await reader.run(planRollupPartials(query, reader.dialect));
  const withMoney = query.metrics.some((metric) => metric === "SPEND" || metric === "REVENUE");
  const rates = withMoney ? await walkRates(reader, walks, await reader.generation(), query.scope)() : null;
  const totals = totalRollupPartials(table, query, rates);
  if (totals.missingRate !== null) throw missingRateError(totals.missingRate);
  const rows = rollupPageRows(totals.groups, query);
  const dataVersion = await readDataVersion(reader, query);
  return { rows: withCurrency(rows, query.currency), totalCount: totals.groups.length, dataVersion };
}

/** Runs a planned aggregate page; its window columns are read off the first row. */
async function readAggregateRows(reader: SnapshotReader, plan: PlannedAggregatePage): Promise<AggregateRows> {
  const table = await reader.run(plan);
  const rows = rowsOf(table, plan.fields);
  if (table.rowCount === 0) return { rows, totalCount: 0, missingRateRows: 0 };
  return {
    rows,
    totalCount: Number(table.value(0, plan.windowColumns.totalCount)),
    missingRateRows: Number(table.value(0, plan.windowColumns.missingRateRows)),
  };
}

function rowsOf(table: ResultTable, fields: readonly string[]): Row[] {
  const rows: Row[] = new Array(table.rowCount);
  for (let index = 0; index < table.rowCount; index += 1) {
    const row: Row = {};
    for (let column = 0; column < fields.length; column += 1)
      row[fields[column]!] = table.value(index, column);
    rows[index] = row;
  }
  return rows;
}

/** Runs a planned count (columns: total, missing_currency, missing_day). */
async function readCount(reader: SnapshotReader, plan: PlannedCount): Promise<CountResult> {
  const table = await reader.run(plan);
  if (table.rowCount === 0) return { total: 0, missingRate: null };
  const currency = table.value(0, 1);
  return {
    total: Number(table.value(0, 0) ?? 0),
    missingRate:
      currency === null || currency === undefined
        ? null
        : { currency: String(currency), date: String(table.value(0, 2)) },
  };
}

function withCurrency(rows: Row[], currency: CurrencyCode): Row[] {
  for (const row of rows) row["currency"] = currency;
  return rows;
}
