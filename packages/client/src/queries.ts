/**
 * The GraphQL texts the client sends (CONTRACT §4), one per operation; the records and aggregate
 * queries are written for the fields and totals a walk asks for.
 */
import { DIMENSIONS, type RecordField } from "@mdq/contract";

export const MY_ACCESS_QUERY = `query MdqMyAccess($clientId: ID!) {
  myAccess(clientId: $clientId) { brandId appClientId markets dataSources scope region tokenExpiresAt }
}`;

export const READINESS_QUERY = `query MdqReadiness($clientId: ID!, $date: Date) {
  marketingDataReadiness(clientId: $clientId, date: $date) { status lastProcessedAt date availableThrough dataVersion }
}`;

export const CHANGES_QUERY = `query MdqChanges($clientId: ID!, $dateRange: DateRangeInput!, $since: String) {
  marketingDataChanges(clientId: $clientId, dateRange: $dateRange, since: $since) {
    dataVersion fullResyncRequired reason days { date dataVersion changedAt rows }
  }
}`;

/** `marketingRecords` asking for `fields`. */
export function recordsQuery(fields: readonly RecordField[]): string {
  return `query MdqRecords($clientId: ID!, $dateRange: DateRangeInput!, $currency: Currency, $pagination: PaginationInput, $sort: [RecordSortInput!], $filter: MarketingFilterInput) {
  marketingRecords(clientId: $clientId, dateRange: $dateRange, currency: $currency, pagination: $pagination, sort: $sort, filter: $filter) { ${fields.join(" ")} }
}`;
}

/** `marketingAggregate` asking for every dimension, the `totals` fields and the currency. */
export function aggregateQuery(totals: readonly string[]): string {
  return `query MdqAggregate($clientId: ID!, $dateRange: DateRangeInput!, $metrics: [Metric!]!, $groupBy: [Dimension!], $currency: Currency, $pagination: PaginationInput, $sort: [AggregateSortInput!], $filter: MarketingFilterInput) {
  marketingAggregate(clientId: $clientId, dateRange: $dateRange, metrics: $metrics, groupBy: $groupBy, currency: $currency, pagination: $pagination, sort: $sort, filter: $filter) { ${DIMENSIONS.join(" ")} ${totals.join(" ")} currency }
}`;
}
