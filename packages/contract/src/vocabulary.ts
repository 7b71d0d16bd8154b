/**
 * The names of CONTRACT §3's schema, declared once: the fields of `MarketingRecord`, the values of
 * the `Metric`, `Dimension`, sort-field, `SortDirection` and `ReadinessStatus` enums, and the
 * snake_case columns of a records file (docs/load-format.md). Server, CLI and client import these.
 */

/** Fields of `MarketingRecord`, in schema order (also the column order of sync files). */
export const RECORD_FIELDS = Object.freeze([
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
] as const);
/** A field of `MarketingRecord`. */
export type RecordField = (typeof RECORD_FIELDS)[number];

/** `recordId` → `record_id`: a record field as a column name. */
type SnakeCase<Name extends string> = Name extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : Name;

/** The columns of a records file's canonical layout: the record fields in snake_case, same order. */
export const RECORD_COLUMNS = Object.freeze(
  RECORD_FIELDS.map((field) => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)),
) as readonly SnakeCase<RecordField>[];
/** A column of the canonical records-file layout. */
export type RecordColumn = SnakeCase<RecordField>;

/** Values of `Metric`. */
export const METRICS = Object.freeze(["IMPRESSIONS", "CLICKS", "SPEND", "CONVERSIONS", "REVENUE"] as const);
/** A `Metric` value. */
export type Metric = (typeof METRICS)[number];

/** Values of `Dimension`. */
export const DIMENSIONS = Object.freeze([
  "DATE_DAY",
  "DATE_WEEK",
  "DATE_MONTH",
  "MARKET",
  "DATA_SOURCE",
  "CHANNEL",
  "CAMPAIGN_ID",
] as const);
/** A `Dimension` value. */
export type Dimension = (typeof DIMENSIONS)[number];

/** The `Dimension` values that group by a calendar period, finest first: day, ISO week (Monday), month (1st). */
export const DATE_DIMENSIONS = Object.freeze(["DATE_DAY", "DATE_WEEK", "DATE_MONTH"] as const);

/** Whether `name` is one of the `DATE_DIMENSIONS`. */
export function isDateDimension(name: string): boolean {
  return (DATE_DIMENSIONS as readonly string[]).includes(name);
}

/** A `TOTAL_<metric>` field of `MarketingAggregate`, which is also an aggregate sort field. */
export type TotalField = `TOTAL_${Metric}`;
/** The `TOTAL_` fields, in `Metric` order. */
export const TOTAL_FIELDS = Object.freeze(METRICS.map((metric): TotalField => `TOTAL_${metric}`));

/** Values of `RecordSortField`. */
export const RECORD_SORT_FIELDS = Object.freeze([
  "DATE_DAY",
  "MARKET",
  "DATA_SOURCE",
  "CHANNEL",
  "CAMPAIGN_ID",
  ...METRICS,
] as const);
/** A `RecordSortField` value. */
export type RecordSortField = (typeof RECORD_SORT_FIELDS)[number];

/** A value of `AggregateSortField`: the dimensions and the `TOTAL_` fields. */
export type AggregateSortField = Dimension | TotalField;
/** Values of `AggregateSortField`. */
export const AGGREGATE_SORT_FIELDS: readonly AggregateSortField[] = Object.freeze([
  ...DIMENSIONS,
  ...TOTAL_FIELDS,
]);

/** Values of `SortDirection`. */
export const SORT_DIRECTIONS = Object.freeze(["ASC", "DESC"] as const);
/** A `SortDirection` value. */
export type SortDirection = (typeof SORT_DIRECTIONS)[number];

/** Values of `ReadinessStatus`. */
export const READINESS_STATUSES = Object.freeze(["READY", "NOT_READY"] as const);
/** A `ReadinessStatus` value. */
export type ReadinessStatus = (typeof READINESS_STATUSES)[number];

/** Formats of a records file `mdq load` reads (CONTRACT §4, docs/load-format.md). */
export const LOAD_FORMATS = Object.freeze(["csv", "ndjson", "parquet"] as const);
/** A records-file format. */
export type LoadFormat = (typeof LOAD_FORMATS)[number];

/**
 * What a load replaces (`mdq load --replace`, admin API `replace`): every record of the brand on
 * each day in the file, or only its records of each (day, data source) in the file.
 */
export const REPLACE_SCOPES = Object.freeze(["days", "sources"] as const);
export type ReplaceScope = (typeof REPLACE_SCOPES)[number];

/** Longest `dateRange` of `marketingDataChanges`, counting both ends (CONTRACT §6 rule 2). */
export const MAX_CHANGES_RANGE_DAYS = 366;

/** Longest `dateRange`, in days counting both ends (CONTRACT §3 rule 2). */
export const MAX_RANGE_DAYS = 90;
/** Smallest `pagination.pageSize` (CONTRACT §3 rule 3). */
export const MIN_PAGE_SIZE = 1000;
/** Largest `pagination.pageSize` (CONTRACT §3 rule 3). */
export const MAX_PAGE_SIZE = 5000;
/** `pagination.pageSize` when it is not given (CONTRACT §3). */
export const DEFAULT_PAGE_SIZE = 1000;
/** Most sort entries of a `marketingAggregate` query (CONTRACT §3 rule 4). */
export const MAX_AGGREGATE_SORT_ENTRIES = 2;

/** Longest grace period of a rotated app secret, in seconds: 30 days (docs/admin-api.md). */
export const MAX_SECRET_GRACE_SECONDS = 30 * 86_400;
