/**
 * The GraphQL schema (CONTRACT §3). The committed `schema.graphql` at the package root is this
 * SDL printed; a test fails when the two drift.
 */
import { CURRENCY_CODES } from "../currencies.js";
import { DIMENSIONS, METRICS, RECORD_SORT_FIELDS } from "../store/query-request.js";
import { DATE_DESCRIPTION, DATE_TIME_DESCRIPTION } from "./scalars.js";

const TOTAL_FIELDS = METRICS.map((metric) => `TOTAL_${metric}`);

/** The schema's SDL. */
export const typeDefs = /* GraphQL */ `
"""${DATE_DESCRIPTION}"""
scalar Date

"""${DATE_TIME_DESCRIPTION}"""
scalar DateTime

"""Whether a processing date's data has been published."""
enum ReadinessStatus {
  READY
  NOT_READY
}

enum SortDirection {
  ASC
  DESC
}

"""Currencies the service holds reference rates for (ISO 4217)."""
enum Currency {
  ${CURRENCY_CODES.join("\n  ")}
}

enum Metric {
  ${METRICS.join("\n  ")}
}

enum Dimension {
  ${DIMENSIONS.join("\n  ")}
}

enum RecordSortField {
  ${RECORD_SORT_FIELDS.join("\n  ")}
}

enum AggregateSortField {
  ${[...DIMENSIONS, ...TOTAL_FIELDS].join("\n  ")}
}

"""Inclusive range of days, at most 90 days counting both ends."""
input DateRangeInput {
  from: Date!
  to: Date!
}

"""1000 <= pageSize <= 5000, page >= 1. A page past the end is empty."""
input PaginationInput {
  page: Int = 1
  pageSize: Int = 1000
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
