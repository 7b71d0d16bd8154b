// The questions of the growth bench (bench/scale.mjs, issue 17): what a brand's dashboard and
// daily sync ask first, each as the GraphQL body MDQ is sent and, where the engine can answer the
// same thing with one SELECT, the engine's SQL for it (engine-sql.mjs). `kind` says which of the
// issue's targets a question falls under.
import { addDays, CURRENCY_CODES } from "../../packages/server/dist/src/index.js";
import { aggregateSql, recordsSql } from "./engine-sql.mjs";
import { RECORD_SELECTION } from "./queries.mjs";

const METRICS = ["IMPRESSIONS", "CLICKS", "SPEND", "CONVERSIONS", "REVENUE"];

/** Days of a `marketingDataChanges` range (its maximum). */
export const CHANGES_DAYS = 366;

/**
 * Timed asks per rep of the questions answered in milliseconds: the summary questions (readiness,
 * changes, myAccess) and the first page of a walk. A median of three landed on either side of
 * their targets from run to run (readiness against "≤ 1.2× scale 1"; the first page against
 * "≤ 2× the engine" on PostgreSQL at scale 150: three asks of 41, 62 and 56 ms, 2.08×, where 60
 * asks of the same server had a median of 45 ms, 1.71×); more asks of fresh variants give a
 * steadier median for milliseconds more. Fifteen still left myAccess, which reads no table, at
 * 1.24× its scale-1 cost on PostgreSQL at 600 (1.8 against 1.4 ms) in a run where DuckDB's was
 * 1.09× and 150's 1.02×: thirty.
 */
export const FAST_ASKS_PER_REP = 10;

/** How many timed asks `question` gets at `reps` a question. */
export const timedAsks = (question, reps) => (question.fast ? reps * FAST_ASKS_PER_REP : reps);

/**
 * The variant of timed ask `rep` of question `index` (or the warm-up's): every one a window or a
 * currency no other ask of the run uses. Windows end yesterday (rep 0), or 2, 3, … days before
 * it: the cold walk's timed walks end the day before yesterday's window and must not meet them;
 * the warm-up ends after the last rep's. Currencies: one per question (index 0 is the cold walk's
 * reference walk's).
 */
export function variantOf({ scope, today, index, rep, warmUp, asks, sourceCurrencies }) {
  const shift = warmUp ? asks + 1 : rep === 0 ? 0 : rep + 1;
  const to = addDays(scope.to, -shift);
  return {
    scope: { ...scope, from: addDays(to, -89), to },
    currency: CURRENCY_CODES[(1 + index) % CURRENCY_CODES.length],
    date: addDays(today, -shift),
    sourceCurrencies,
  };
}

/** Rows per page of the walk questions. */
export const WALK_PAGE_SIZE = 5000;

const graphql = (query, variables) => JSON.stringify({ query, variables });

const READINESS = `query Readiness($c: ID!, $d: Date) {
  marketingDataReadiness(clientId: $c, date: $d) { status lastProcessedAt date availableThrough dataVersion }
}`;

const CHANGES = `query Changes($c: ID!, $from: Date!, $to: Date!) {
  marketingDataChanges(clientId: $c, dateRange: {from: $from, to: $to}) {
    dataVersion fullResyncRequired reason days { date dataVersion changedAt rows }
  }
}`;

const ACCESS = `query Access($c: ID!) {
  myAccess(clientId: $c) { brandId appClientId markets dataSources scope region tokenExpiresAt }
}`;

const RECORDS = `query Records($c: ID!, $from: Date!, $to: Date!, $currency: Currency, $sort: [RecordSortInput!], $page: Int, $pageSize: Int) {
  marketingRecords(clientId: $c, dateRange: {from: $from, to: $to}, currency: $currency, sort: $sort, pagination: {page: $page, pageSize: $pageSize}) { ${RECORD_SELECTION} }
}`;

/** An aggregate document selecting the grouped dimensions and every total. */
const aggregateDocument = (
  groupBy,
) => `query Aggregate($c: ID!, $from: Date!, $to: Date!, $currency: Currency, $sort: [AggregateSortInput!]) {
  marketingAggregate(clientId: $c, dateRange: {from: $from, to: $to}, metrics: [${METRICS.join(", ")}], groupBy: [${groupBy.join(", ")}], currency: $currency, sort: $sort, pagination: {page: 1, pageSize: ${WALK_PAGE_SIZE}}) {
    ${[...groupBy, ...METRICS.map((metric) => `TOTAL_${metric}`), "currency"].join(" ")}
  }
}`;

/**
 * A question: `id`, `label`, the response `field` it fills, its `kind` (summary: readiness,
 * changes, access; rollup: aggregates without CAMPAIGN_ID; engine: what the issue compares with
 * the engine's SQL), `body(variant)` and, when the engine answers it, `engine(store, variant)`.
 * A variant is `{scope: {brandId, from, to, markets, dataSources}, currency, date}`: the bench
 * gives each timed ask a variant no earlier ask used, so that no cache of MDQ can answer it.
 */
function aggregateQuestion(id, groupBy, sort = []) {
  return {
    id,
    label: `aggregate groupBy [${groupBy.join(", ")}]${sort.length > 0 ? ` sort ${sort.map((entry) => `${entry.field} ${entry.direction}`).join(", ")}` : ""}`,
    field: "marketingAggregate",
    kind: groupBy.includes("CAMPAIGN_ID") ? "engine" : "rollup",
    usesCurrency: true,
    body: ({ scope, currency }) =>
      graphql(aggregateDocument(groupBy), {
        c: scope.brandId,
        from: scope.from,
        to: scope.to,
        currency,
        sort,
      }),
    engine: (store, { scope, currency, sourceCurrencies }) =>
      aggregateSql(store, {
        scope,
        currency,
        groupBy,
        // MDQ's default: a date dimension descending, then the groups ascending.
        sort:
          sort.length > 0
            ? sort
            : groupBy
                .filter((dimension) => dimension.startsWith("DATE_"))
                .map((field) => ({ field, direction: "DESC" })),
        pageSize: WALK_PAGE_SIZE,
        sourceCurrencies,
      }),
  };
}

function recordsQuestion(id, label, sort, page, pageSize) {
  return {
    id,
    label,
    field: "marketingRecords",
    kind: "engine",
    usesCurrency: true,
    body: ({ scope, currency }) =>
      graphql(RECORDS, {
        c: scope.brandId,
        from: scope.from,
        to: scope.to,
        currency,
        sort: [sort],
        page,
        pageSize,
      }),
    engine: (store, { scope, currency, sourceCurrencies }) =>
      recordsSql(store, { scope, currency, sort, page, pageSize, sourceCurrencies }),
  };
}

/** Every question, in the order the bench asks them. */
export const QUESTIONS = [
  {
    id: "readiness",
    fast: true,
    label: "marketingDataReadiness",
    field: "marketingDataReadiness",
    kind: "summary",
    body: ({ scope, date }) => graphql(READINESS, { c: scope.brandId, d: date }),
  },
  {
    id: "changes",
    fast: true,
    label: `marketingDataChanges over ${CHANGES_DAYS} days`,
    field: "marketingDataChanges",
    kind: "summary",
    body: ({ scope }) =>
      graphql(CHANGES, { c: scope.brandId, from: addDays(scope.to, -(CHANGES_DAYS - 1)), to: scope.to }),
  },
  {
    id: "my-access",
    fast: true,
    label: "myAccess",
    field: "myAccess",
    kind: "summary",
    body: ({ scope }) => graphql(ACCESS, { c: scope.brandId }),
  },
  aggregateQuestion("aggregate-day", ["DATE_DAY"]),
  aggregateQuestion("aggregate-week", ["DATE_WEEK"]),
  aggregateQuestion("aggregate-month", ["DATE_MONTH"]),
  aggregateQuestion("aggregate-market", ["MARKET"]),
  aggregateQuestion("aggregate-data-source", ["DATA_SOURCE"]),
  aggregateQuestion("aggregate-channel", ["CHANNEL"]),
  aggregateQuestion("aggregate-total", []),
  aggregateQuestion("aggregate-campaign", ["CAMPAIGN_ID"], [{ field: "TOTAL_SPEND", direction: "DESC" }]),
  ...["SPEND", "REVENUE", "CLICKS", "IMPRESSIONS", "CONVERSIONS"].map((field) =>
    recordsQuestion(
      `page-20-${field.toLowerCase()}`,
      `records page 20 (1000 rows) sorted by ${field} DESC`,
      { field, direction: "DESC" },
      20,
      1000,
    ),
  ),
  {
    ...recordsQuestion(
      "walk-first-page",
      `first ${WALK_PAGE_SIZE}-row page of a fresh walk (DATE_DAY DESC)`,
      { field: "DATE_DAY", direction: "DESC" },
      1,
      WALK_PAGE_SIZE,
    ),
    fast: true,
  },
];

/**
 * Rows as text that does not depend on the order of each row's keys: MDQ writes fields in the
 * selection's order, the engine's driver in the SELECT's; values compare exactly (the same
 * doubles, the same strings).
 */
export function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object")
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
      .join(",")}}`;
  return JSON.stringify(value);
}

/** The first row where MDQ's answer and the engine's differ, for the error that stops the run. */
export function firstDifference(mdqRows, engineRows) {
  const count = Math.max(mdqRows.length, engineRows.length);
  for (let index = 0; index < count; index += 1) {
    const a = canonical(mdqRows[index] ?? null);
    const b = canonical(engineRows[index] ?? null);
    if (a !== b)
      return `row ${index + 1} of ${mdqRows.length} (MDQ) / ${engineRows.length} (engine): MDQ ${a} vs engine ${b}`;
  }
  return null;
}
