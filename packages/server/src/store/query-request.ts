/**
 * Validated query requests: what the GraphQL layer hands to the query planner once every
 * argument has been checked and the grants applied. Nothing here is raw user input.
 */
import type { CurrencyCode } from "../currencies.js";

/** Fields of `MarketingRecord` (GraphQL names). */
export const RECORD_FIELDS = [
  "recordId",
  "date",
  "market",
  "dataSource",
  "channel",
  "campaignId",
  "campaignName",
  "impressions",
  "clicks",
  "spend",
  "conversions",
  "revenue",
  "currency",
] as const;
export type RecordField = (typeof RECORD_FIELDS)[number];

/** Values of `RecordSortField`. */
export const RECORD_SORT_FIELDS = [
  "DATE_DAY",
  "MARKET",
  "DATA_SOURCE",
  "CHANNEL",
  "CAMPAIGN_ID",
  "IMPRESSIONS",
  "CLICKS",
  "SPEND",
  "CONVERSIONS",
  "REVENUE",
] as const;
export type RecordSortField = (typeof RECORD_SORT_FIELDS)[number];

/** Values of `Metric`. */
export const METRICS = ["IMPRESSIONS", "CLICKS", "SPEND", "CONVERSIONS", "REVENUE"] as const;
export type Metric = (typeof METRICS)[number];

/** Values of `Dimension`. */
export const DIMENSIONS = [
  "DATE_DAY",
  "DATE_WEEK",
  "DATE_MONTH",
  "MARKET",
  "DATA_SOURCE",
  "CHANNEL",
  "CAMPAIGN_ID",
] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** `TOTAL_<metric>` field names, which are also aggregate sort fields. */
export type TotalField = `TOTAL_${Metric}`;
export type AggregateSortField = Dimension | TotalField;

export type SortDirection = "ASC" | "DESC";

export interface SortEntry<Field extends string> {
  field: Field;
  direction: SortDirection;
}

/** Row filter: each list is non-empty and already known to lie within the grants. */
export interface RowScope {
  brandId: string;
  from: string;
  to: string;
  markets: string[];
  dataSources: string[];
  channels: string[] | null;
  campaignIds: string[] | null;
}

export interface PageRequest {
  page: number;
  pageSize: number;
}

/** A validated `marketingRecords` request. */
export interface RecordsQuery {
  scope: RowScope;
  currency: CurrencyCode;
  /** Fields the query selects; only these columns are read. */
  fields: readonly RecordField[];
  sort: SortEntry<RecordSortField>[];
  page: PageRequest;
}

/** A validated `marketingAggregate` request. */
export interface AggregateQuery {
  scope: RowScope;
  currency: CurrencyCode;
  metrics: Metric[];
  groupBy: Dimension[];
  sort: SortEntry<AggregateSortField>[];
  page: PageRequest;
}
