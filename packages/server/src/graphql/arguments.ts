/**
 * Turns the arguments of the three queries into validated requests for the planner, applying
 * CONTRACT §3 rules 1–5: brand and grants, date range, pagination, sort, metrics.
 */
import {
  type AggregateSortField,
  CHANNEL_PATTERN,
  type CurrencyCode,
  DATA_SOURCE_PATTERN,
  DATE_DIMENSIONS,
  DEFAULT_PAGE_SIZE,
  type Dimension,
  inclusiveDayCount,
  MARKET_PATTERN,
  MAX_AGGREGATE_SORT_ENTRIES,
  MAX_PAGE_SIZE,
  MAX_RANGE_DAYS,
  type Metric,
  MIN_PAGE_SIZE,
  RECORD_FIELDS,
  type RecordField,
  type RecordSortField,
} from "@mdq/contract";
import { MdqError } from "../errors.js";
import type {
  AggregateQuery,
  PageRequest,
  RecordsQuery,
  RowScope,
  SortEntry,
} from "../store/model/query-request.js";
import type { Grants } from "../store/model/store.js";

const MAX_FILTER_VALUES = 500;

/** Who is asking: the token's brand and the app's effective grants. */
export interface Caller {
  brandId: string;
  appClientId: string;
  /** The brand's grants with the app's narrowing applied. */
  grants: Grants;
  /** The token's `scope` claim. */
  scope: string;
  /** The token's `region` claim (always this process's region once verified). */
  region: string;
  /** When the caller's token expires (its `exp` claim). */
  tokenExpiresAt: Date;
}

export interface DateRangeArgument {
  from: string;
  to: string;
}
interface PaginationArgument {
  page?: number | null;
  pageSize?: number | null;
}
export interface FilterArgument {
  markets?: string[] | null;
  dataSources?: string[] | null;
  channels?: string[] | null;
  campaignIds?: string[] | null;
}

/** Arguments common to `marketingRecords` and `marketingAggregate`. */
export interface DataQueryArguments {
  clientId: string;
  dateRange: DateRangeArgument;
  currency?: CurrencyCode | null;
  pagination?: PaginationArgument | null;
  filter?: FilterArgument | null;
}

export interface RecordsArguments extends DataQueryArguments {
  sort?: SortEntry<RecordSortField>[] | null;
}

export interface AggregateArguments extends DataQueryArguments {
  metrics: Metric[];
  groupBy?: Dimension[] | null;
  sort?: SortEntry<AggregateSortField>[] | null;
}

/** Rule 1: `clientId` must be the token's brand. */
export function checkClientId(clientId: string, caller: Caller): void {
  if (clientId !== caller.brandId) {
    throw new MdqError("FORBIDDEN", "clientId is not the brand these credentials belong to");
  }
}

/** Checks a `dateRange` argument against rule 2, with `maxDays` days at most. */
export function checkDateRange(range: DateRangeArgument, maxDays: number): void {
  const { from, to } = range;
  if (to < from)
    throw new MdqError("INVALID_DATE_RANGE", `dateRange.to (${to}) is before dateRange.from (${from})`);
  const days = inclusiveDayCount(from, to);
  if (days > maxDays) {
    throw new MdqError(
      "DATE_RANGE_TOO_LONG",
      `dateRange covers ${days} days; at most ${maxDays} are allowed per request (both ends count)`,
    );
  }
}

/**
 * Rules 1–2: the rows a request may read, its filter checked against the grants; `maxDays` is the
 * longest range (90 for GraphQL, 366 for the bulk export).
 */
export function scopeOf(
  args: Pick<DataQueryArguments, "clientId" | "dateRange" | "filter">,
  caller: Caller,
  maxDays = MAX_RANGE_DAYS,
): RowScope {
  checkClientId(args.clientId, caller);
  checkDateRange(args.dateRange, maxDays);
  const { from, to } = args.dateRange;
  const filter = args.filter ?? {};
  return {
    brandId: caller.brandId,
    from,
    to,
    markets: grantedSubset("markets", filter.markets, caller.grants.markets, MARKET_PATTERN),
    dataSources: grantedSubset(
      "dataSources",
      filter.dataSources,
      caller.grants.dataSources,
      DATA_SOURCE_PATTERN,
    ),
    channels: filterValues("channels", filter.channels, CHANNEL_PATTERN),
    campaignIds: filterValues("campaignIds", filter.campaignIds, null),
  };
}

/** A filter list checked for shape; null when the filter is absent. Duplicates collapse. */
function filterValues(
  name: string,
  values: string[] | null | undefined,
  pattern: RegExp | null,
): string[] | null {
  if (values === null || values === undefined) return null;
  if (values.length === 0) {
    throw new MdqError("BAD_USER_INPUT", `filter.${name} must not be empty; omit it to mean "all"`);
  }
  if (values.length > MAX_FILTER_VALUES) {
    throw new MdqError("BAD_USER_INPUT", `filter.${name} lists more than ${MAX_FILTER_VALUES} values`);
  }
  for (const value of values) {
    if (pattern ? !pattern.test(value) : value.length === 0 || value.length > 128) {
      throw new MdqError("BAD_USER_INPUT", `filter.${name} has a malformed value ${JSON.stringify(value)}`);
    }
  }
  return [...new Set(values)].sort();
}

/** Rule 1: a filter naming a market or data source outside the grants is 403. */
function grantedSubset(
  name: string,
  values: string[] | null | undefined,
  granted: string[],
  pattern: RegExp,
): string[] {
  const requested = filterValues(name, values, pattern);
  if (requested === null) return granted;
  const outside = requested.filter((value) => !granted.includes(value));
  if (outside.length > 0) {
    // "UK" is a well-formed code that ISO 3166-1 never assigned: say so, as `mdq grant add` does.
    const hint = outside.includes("UK") ? ' (the United Kingdom is "GB" in ISO 3166-1, not "UK")' : "";
    throw new MdqError(
      "FORBIDDEN",
      `filter.${name} names ${outside.join(", ")}, outside this app's grants${hint}`,
    );
  }
  return requested;
}

/** Rule 3: pagination defaults and bounds; explicit nulls mean the default. */
function pageOf(pagination: PaginationArgument | null | undefined): PageRequest {
  const page = pagination?.page ?? 1;
  const pageSize = pagination?.pageSize ?? DEFAULT_PAGE_SIZE;
  if (page < 1) throw new MdqError("INVALID_PAGINATION", `pagination.page must be at least 1; got ${page}`);
  if (pageSize < MIN_PAGE_SIZE || pageSize > MAX_PAGE_SIZE) {
    throw new MdqError(
      "INVALID_PAGINATION",
      `pagination.pageSize must be between ${MIN_PAGE_SIZE} and ${MAX_PAGE_SIZE}; got ${pageSize}`,
    );
  }
  return { page, pageSize };
}

function noDuplicates<Value>(name: string, values: readonly Value[], key: (value: Value) => string): void {
  const seen = new Set<string>();
  for (const value of values) {
    const id = key(value);
    if (seen.has(id)) throw new MdqError("BAD_USER_INPUT", `${name} names ${id} more than once`);
    seen.add(id);
  }
}

/** Validates `marketingRecords` arguments; `selected` are the record fields the query selects. */
export function recordsQueryOf(args: RecordsArguments, caller: Caller, selected: Set<string>): RecordsQuery {
  const scope = scopeOf(args, caller);
  const sort =
    args.sort && args.sort.length > 0 ? args.sort : [{ field: "DATE_DAY", direction: "DESC" } as const];
  noDuplicates("sort", sort, (entry) => entry.field);
  const fields: RecordField[] = RECORD_FIELDS.filter((field) => selected.has(field));
  return { scope, currency: args.currency ?? "EUR", fields, sort: [...sort], page: pageOf(args.pagination) };
}

/** Validates `marketingAggregate` arguments; `selected` are the aggregate fields the query selects. */
export function aggregateQueryOf(
  args: AggregateArguments,
  caller: Caller,
  selected: Set<string>,
): AggregateQuery {
  const scope = scopeOf(args, caller);
  if (args.metrics.length === 0)
    throw new MdqError("BAD_USER_INPUT", "metrics must name at least one metric");
  noDuplicates("metrics", args.metrics, (metric) => metric);
  for (const name of selected) {
    if (name.startsWith("TOTAL_") && !args.metrics.includes(name.slice("TOTAL_".length) as Metric)) {
      throw new MdqError(
        "METRIC_NOT_REQUESTED",
        `${name} is selected but ${name.slice("TOTAL_".length)} is not in metrics; add it to metrics`,
      );
    }
  }
  const groupBy = args.groupBy ?? ["DATE_DAY"];
  noDuplicates("groupBy", groupBy, (dimension) => dimension);
  const sort = args.sort && args.sort.length > 0 ? args.sort : defaultAggregateSort(groupBy);
  if (sort.length > MAX_AGGREGATE_SORT_ENTRIES) {
    throw new MdqError(
      "TOO_MANY_SORT_ENTRIES",
      `sort has ${sort.length} entries; aggregate queries allow at most ${MAX_AGGREGATE_SORT_ENTRIES}`,
    );
  }
  noDuplicates("sort", sort, (entry) => entry.field);
  for (const { field } of sort) {
    if (field.startsWith("TOTAL_")) {
      if (!args.metrics.includes(field.slice("TOTAL_".length) as Metric)) {
        throw new MdqError("INVALID_SORT_FIELD", `cannot sort by ${field}: its metric is not in metrics`);
      }
    } else if (!groupBy.includes(field as Dimension)) {
      throw new MdqError("INVALID_SORT_FIELD", `cannot sort by ${field}: it is not in groupBy`);
    }
  }
  return {
    scope,
    currency: args.currency ?? "EUR",
    metrics: [...args.metrics],
    groupBy: [...groupBy],
    sort: [...sort],
    page: pageOf(args.pagination),
  };
}

/** Rule 4's default, DATE_DAY descending, where DATE_DAY is grouped; else the finest date dimension grouped. */
function defaultAggregateSort(groupBy: Dimension[]): SortEntry<AggregateSortField>[] {
  const date = DATE_DIMENSIONS.find((dimension) => groupBy.includes(dimension));
  return date ? [{ field: date, direction: "DESC" }] : [];
}
