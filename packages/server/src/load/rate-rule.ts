/**
 * The rule that a load keeps every reader whole (issue 57): a row's currency has a reference rate
 * on or before the row's day (CONTRACT §3 rule 7), else every read over that day would fail for
 * the brand, in any currency. Rates are never removed (store/reads/fx-coverage/), so a currency's
 * first rate is all a check needs: a day is covered when it is on or after it. The region's first
 * rates are read from the store before the load (`RecordLoads.fxRateStarts`); a rate loaded
 * meanwhile only covers more.
 */
import { type DuckDBConnection, LIST, listValue, VARCHAR } from "@duckdb/node-api";
import { BASE_CURRENCY, CURRENCY_CODES } from "../currencies.js";
import type { FxRateStarts } from "../store/model/store.js";
import { MAX_REPORTED_PROBLEMS } from "./load-errors.js";

/** Why a row of `currency` on `date` cannot be loaded (`firstRate`: the currency's first rate). */
export function unratedMessage(currency: string, date: string, firstRate: string | undefined): string {
  const held =
    firstRate === undefined
      ? `the region holds no ${currency} rates`
      : `${currency} rates start on ${firstRate}`;
  return `no ${currency} reference rate on or before ${date} (${held}): load the rates first (mdq fx load), then this file`;
}

/** Whether `date` of a row in `currency` has a rate (EUR, the base, always has). */
export function isRated(starts: FxRateStarts, currency: string, date: string): boolean {
  if (currency === BASE_CURRENCY) return true;
  const first = starts.get(currency);
  return first !== undefined && first <= date;
}

/**
 * The fast path's check (record-staging.ts), over a load's rows rolled up (a few rows per day):
 * whether every currency's first day in the file has a rate. Valid days and currencies only: the
 * other checks have passed.
 */
export async function allRated(
  connection: DuckDBConnection,
  rolledUp: string,
  starts: FxRateStarts,
): Promise<boolean> {
  const reader = await connection.runAndReadAll(
    `SELECT currency, CAST(min(date) AS VARCHAR) AS first_day FROM ${rolledUp} GROUP BY currency`,
  );
  return reader
    .getRowObjectsJS()
    .every((row) => isRated(starts, String(row["currency"]), String(row["first_day"])));
}

/** A row of the staged file with no rate: its 0-based index, currency and day. */
export interface UnratedRow {
  rowIndex: number;
  currency: string;
  date: string;
}

/**
 * The diagnosis (record-checks.ts): the staged rows (VARCHAR columns `currency`, `date`) whose
 * currency has no rate on or before their day, counted and the first of them listed, in file
 * order. Rows whose day or currency breaks its own rule are left to that rule's message.
 */
export async function findUnratedRows(
  connection: DuckDBConnection,
  starts: FxRateStarts,
): Promise<{ count: number; rows: UnratedRow[] }> {
  const rated = CURRENCY_CODES.filter((code) => code !== BASE_CURRENCY);
  const known = [...starts].filter(([currency]) => currency !== BASE_CURRENCY);
  const params = [
    listValue(rated),
    listValue(known.map(([currency]) => currency)),
    listValue(known.map(([, first]) => first)),
  ];
  // Typed: an empty list (a region with no rates yet) has no item type to infer.
  const types = params.map(() => LIST(VARCHAR));
  const unrated = `SELECT row_index, currency, date FROM staged
    WHERE list_contains($1, currency)
      AND regexp_full_match(date, '[0-9]{4}-[0-9]{2}-[0-9]{2}') AND TRY_CAST(date AS DATE) IS NOT NULL
      AND coalesce(date < list_extract($3, list_position($2, currency)), true)`;
  const total = await connection.runAndReadAll(`SELECT count(*) AS n FROM (${unrated})`, params, types);
  const count = Number(total.getRowObjectsJS()[0]?.["n"] ?? 0);
  if (count === 0) return { count, rows: [] };
  const listed = await connection.runAndReadAll(
    `${unrated} ORDER BY row_index LIMIT ${MAX_REPORTED_PROBLEMS}`,
    params,
    types,
  );
  return {
    count,
    rows: listed.getRowObjectsJS().map((row) => ({
      rowIndex: Number(row["row_index"]),
      currency: String(row["currency"]),
      date: String(row["date"]),
    })),
  };
}
