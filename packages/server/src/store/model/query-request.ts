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

/**
 * Where a records page ended in its sort order: its last row's sort keys, as text (`sortKeyText`:
 * a day as `YYYY-MM-DD`, a number as its integer digits, money as the converted minor units the
 * engine ordered by), and its record id, the final tie-break.
 */
export interface SortBoundary {
  keys: string[];
  recordId: string;
}

/**
 * Whether `query` is sorted by the day alone (the default, or ascending): the order is (date,
 * record id) on stored columns, so a page spans a few known days (`pageDays`) and is read over
 * those days alone. Pages of every sort are read from the previous page's boundary.
 */
export function sortedByDayAlone(query: RecordsQuery): boolean {
  return query.sort.length === 1 && query.sort[0]!.field === "DATE_DAY";
}
