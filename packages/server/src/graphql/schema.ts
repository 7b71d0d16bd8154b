/**
 * The GraphQL schema (CONTRACT §3). The committed `schema.graphql` at the package root is this
 * SDL printed; a test fails when the two drift.
 */
import {
  AGGREGATE_SORT_FIELDS,
  CURRENCY_CODES,
  DEFAULT_PAGE_SIZE,
  DIMENSIONS,
  MAX_PAGE_SIZE,
  MAX_RANGE_DAYS,
  METRICS,
  MIN_PAGE_SIZE,
  READINESS_STATUSES,
  RECORD_SORT_FIELDS,
  SORT_DIRECTIONS,
} from "@mdq/contract";
import { DATE_DESCRIPTION, DATE_TIME_DESCRIPTION } from "./scalars.js";

/** The values of an enum, one per line as the printed SDL has them. */
const values = (names: readonly string[]) => names.join("\n  ");

/** The schema's SDL. */
export const typeDefs = /* GraphQL */ `
"""${DATE_DESCRIPTION}"""
scalar Date

"""${DATE_TIME_DESCRIPTION}"""
scalar DateTime

"""Whether a processing date's data has been published."""
enum ReadinessStatus {
  ${values(READINESS_STATUSES)}
}

enum SortDirection {
  ${values(SORT_DIRECTIONS)}
}

"""Currencies the service holds reference rates for (ISO 4217)."""
enum Currency {
  ${values(CURRENCY_CODES)}
}

enum Metric {
  ${values(METRICS)}
}

enum Dimension {
  ${values(DIMENSIONS)}
}

enum RecordSortField {
  ${values(RECORD_SORT_FIELDS)}
}

enum AggregateSortField {
  ${values(AGGREGATE_SORT_FIELDS)}
}

"""Inclusive range of days, at most ${MAX_RANGE_DAYS} days counting both ends."""
input DateRangeInput {
  from: Date!
  to: Date!
}

"""${MIN_PAGE_SIZE} <= pageSize <= ${MAX_PAGE_SIZE}, page >= 1. A page past the end is empty."""
input PaginationInput {
  page: Int = 1
  pageSize: Int = ${DEFAULT_PAGE_SIZE}
}

input RecordSortInput {
  field: RecordSortField!
  direction: SortDirection!
}

input AggregateSortInput {
  field: AggregateSortField!
  direction: SortDirection!
}

"""Narrows rows further; markets and data sources must lie within the grants."""
input MarketingFilterInput {
  markets: [String!]
  dataSources: [String!]
  channels: [String!]
  campaignIds: [ID!]
}

type Query {
  """Whether the brand's data for a processing date (default: today in the region) is ready."""
  marketingDataReadiness(clientId: ID!, date: Date): MarketingDataReadiness!

  """Marketing records in the date range the credentials may read, one page at a time."""
  marketingRecords(
    clientId: ID!
    dateRange: DateRangeInput!
    currency: Currency = EUR
    pagination: PaginationInput
    sort: [RecordSortInput!]
    filter: MarketingFilterInput
  ): [MarketingRecord!]!

  """Totals of the requested metrics, grouped by the requested dimensions."""
  marketingAggregate(
    clientId: ID!
    dateRange: DateRangeInput!
    metrics: [Metric!]!
    groupBy: [Dimension!] = [DATE_DAY]
    currency: Currency = EUR
    pagination: PaginationInput
    sort: [AggregateSortInput!]
    filter: MarketingFilterInput
  ): [MarketingAggregate!]!
}

type MarketingDataReadiness {
  status: ReadinessStatus!
  """The brand's latest completed publish; null if none."""
  lastProcessedAt: DateTime
  """The processing date asked about."""
  date: Date!
  """The latest data day the credentials can read; null if none."""
  availableThrough: Date
}

type MarketingRecord {
  recordId: ID!
  date: Date!
  market: String!
  dataSource: String!
  channel: String!
  campaignId: ID!
  campaignName: String!
  impressions: Int!
  clicks: Int!
  spend: Float!
  conversions: Float!
  revenue: Float!
  """The currency spend and revenue are expressed in: the requested one."""
  currency: Currency!
}

type MarketingAggregate {
  DATE_DAY: Date
  DATE_WEEK: Date
  DATE_MONTH: Date
  MARKET: String
  DATA_SOURCE: String
  CHANNEL: String
  CAMPAIGN_ID: ID
  TOTAL_IMPRESSIONS: Float
  TOTAL_CLICKS: Float
  TOTAL_SPEND: Float
  TOTAL_CONVERSIONS: Float
  TOTAL_REVENUE: Float
  currency: Currency!
}
`;
