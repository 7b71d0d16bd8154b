/**
 * Validated query requests: what the GraphQL layer hands to the query planner once every
 * argument has been checked and the grants applied. Nothing here is raw user input.
 */
import type {
  AggregateSortField,
  CurrencyCode,
  Dimension,
  Metric,
  RecordField,
  RecordSortField,
  SortDirection,
} from "@mdq/contract";

export {
  type AggregateSortField,
  DIMENSIONS,
  type Dimension,
  METRICS,
  type Metric,
  RECORD_FIELDS,
  RECORD_SORT_FIELDS,
  type RecordField,
  type RecordSortField,
  type SortDirection,
  type TotalField,
} from "@mdq/contract";

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
