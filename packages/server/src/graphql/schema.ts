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

  """
  The days of dateRange (at most 366) whose data visible to the credentials changed after since
  (a dataVersion this region returned; null: every day that has data).
  """
  marketingDataChanges(clientId: ID!, dateRange: DateRangeInput!, since: String): MarketingDataChanges!

  """What the credentials may read: the brand's grants with the app's narrowing applied."""
  myAccess(clientId: ID!): MyAccess!
}

"""The caller's effective access (CONTRACT §6 rule 3)."""
type MyAccess {
  brandId: ID!
  appClientId: ID!
  """Markets the credentials may read (ISO 3166-1 alpha-2), sorted."""
  markets: [String!]!
  """Data sources the credentials may read, sorted."""
  dataSources: [String!]!
  scope: String!
  region: String!
  """When the access token used for this request expires."""
  tokenExpiresAt: DateTime!
}

type MarketingDataReadiness {
  status: ReadinessStatus!
  """The brand's latest completed publish; null if none."""
  lastProcessedAt: DateTime
  """The processing date asked about."""
  date: Date!
  """The latest data day the credentials can read; null if none."""
  availableThrough: Date
  """The brand's latest data version: pass it as since to marketingDataChanges."""
  dataVersion: String
}

"""What changed since a data version (CONTRACT §6)."""
type MarketingDataChanges {
  """Opaque; pass it as since next time."""
  dataVersion: String!
  """The caller's visible scope (grants, app narrowing) changed since since: copy the whole range again."""
  fullResyncRequired: Boolean!
  """Why, when fullResyncRequired is true."""
  reason: String
  """Ascending by date."""
  days: [ChangedDay!]!
}

"""A day whose visible data changed."""
type ChangedDay {
  date: Date!
  """The version of the day's current data."""
  dataVersion: String!
  changedAt: DateTime!
  """The caller's visible rows on the day now (0 when a restatement emptied it)."""
  rows: Int!
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
