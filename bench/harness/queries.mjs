// The GraphQL documents every contender is asked, and how a bare route reads the same request:
// one source, so that MDQ, graphql-yoga and the bare routes answer the very same question.
import { RECORD_FIELDS } from "../../packages/server/dist/src/store/model/query-request.js";

/**
 * The rows brand-acme's first demo app may read from `from` to `to` (its granted markets and data
 * sources), as the store's queries take a scope: what the in-process store benches read.
 */
export function acmeScope(from, to) {
  return {
    brandId: "brand-acme",
    from,
    to,
    markets: ["DE", "FR", "GB", "SE", "US"],
    dataSources: ["google_ads", "meta_ads", "tiktok_ads"],
    channels: null,
    campaignIds: null,
  };
}

/** Every field of a record, in the schema's order (the order the server writes them). */
export const RECORD_SELECTION = RECORD_FIELDS.join(" ");

/** A records page: a 90-day range, converted to one currency, newest first (the default sort). */
export const RECORDS_DOCUMENT = `query Records($c: ID!, $from: Date!, $to: Date!, $currency: Currency, $page: Int, $pageSize: Int) {
  marketingRecords(clientId: $c, dateRange: {from: $from, to: $to}, currency: $currency, pagination: {page: $page, pageSize: $pageSize}) { ${RECORD_SELECTION} }
}`;

/** The metrics and grouping of the aggregate scenario. */
export const AGGREGATE_METRICS = ["IMPRESSIONS", "CLICKS", "SPEND", "CONVERSIONS", "REVENUE"];
export const AGGREGATE_GROUP_BY = ["DATE_DAY", "MARKET", "DATA_SOURCE"];

/** A 90-day aggregate grouped by day × market × data source, every metric, one page of 5000 groups. */
export const AGGREGATE_DOCUMENT = `query Aggregate($c: ID!, $from: Date!, $to: Date!, $currency: Currency) {
  marketingAggregate(clientId: $c, dateRange: {from: $from, to: $to}, metrics: [${AGGREGATE_METRICS.join(", ")}], groupBy: [${AGGREGATE_GROUP_BY.join(", ")}], currency: $currency, pagination: {page: 1, pageSize: 5000}) { ${AGGREGATE_GROUP_BY.join(" ")} ${AGGREGATE_METRICS.map((metric) => `TOTAL_${metric}`).join(" ")} currency }
}`;

/** Whether a brand's data for today is ready: the first question of a daily sync. */
export const READINESS_DOCUMENT = `query Readiness($c: ID!) {
  marketingDataReadiness(clientId: $c) { status lastProcessedAt date availableThrough }
}`;

/** The JSON body of a records page request. */
export function recordsBody({ brandId, from, to, currency, page, pageSize }) {
  return JSON.stringify({
    query: RECORDS_DOCUMENT,
    variables: { c: brandId, from, to, currency, page, pageSize },
  });
}

/** The JSON body of an aggregate request. */
export function aggregateBody({ brandId, from, to, currency }) {
  return JSON.stringify({ query: AGGREGATE_DOCUMENT, variables: { c: brandId, from, to, currency } });
}

/** The JSON body of a readiness request. */
export function readinessBody({ brandId }) {
  return JSON.stringify({ query: READINESS_DOCUMENT, variables: { c: brandId } });
}

/** Which query a request body asks (bare routes read the variables, not the document). */
export function kindOf(body) {
  if (body.query.includes("marketingRecords")) return "records";
  if (body.query.includes("marketingAggregate")) return "aggregate";
  return "readiness";
}
