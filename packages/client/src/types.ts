/**
 * The public types of the mdq-client SDK: what the service answers (CONTRACT §3), described
 * here again on purpose: the client package never imports server code.
 */

export type Currency = string;
export type ReadinessStatus = "READY" | "NOT_READY";
export type SortDirection = "ASC" | "DESC";
export type Metric = "IMPRESSIONS" | "CLICKS" | "SPEND" | "CONVERSIONS" | "REVENUE";
export type Dimension =
  | "DATE_DAY"
  | "DATE_WEEK"
  | "DATE_MONTH"
  | "MARKET"
  | "DATA_SOURCE"
  | "CHANNEL"
  | "CAMPAIGN_ID";
export type RecordSortField =
  | "DATE_DAY"
  | "MARKET"
  | "DATA_SOURCE"
  | "CHANNEL"
  | "CAMPAIGN_ID"
  | "IMPRESSIONS"
  | "CLICKS"
  | "SPEND"
  | "CONVERSIONS"
  | "REVENUE";

/** `myAccess`: what the credentials may read (CONTRACT §6 rule 3). */
export interface MyAccess {
  brandId: string;
  appClientId: string;
  markets: string[];
  dataSources: string[];
  scope: string;
  region: string;
  tokenExpiresAt: string;
}

/** A day whose visible data changed (`marketingDataChanges`, CONTRACT §6). */
export interface ChangedDay {
  date: string;
  dataVersion: string;
  changedAt: string;
  /** The caller's visible rows that day now; 0 when a restatement emptied it. */
  rows: number;
}

/** `marketingDataChanges` over a range of any length (asked in ≤ 366-day windows). */
export interface DataChanges {
  /** Pass it as `since` next time: the version of the first window's answer (versions only grow). */
  dataVersion: string;
  fullResyncRequired: boolean;
  reason: string | null;
  /** Ascending by date. */
  days: ChangedDay[];
}

/** `marketingDataReadiness`. */
export interface Readiness {
  status: ReadinessStatus;
  lastProcessedAt: string | null;
  date: string;
  availableThrough: string | null;
  /** The brand's latest data version (null from a service that predates data versions). */
  dataVersion?: string | null;
}

/** One `MarketingRecord`, every field. */
export interface MarketingRecord {
  recordId: string;
  date: string;
  market: string;
  dataSource: string;
  channel: string;
  campaignId: string;
  campaignName: string;
  impressions: number;
  clicks: number;
  spend: number;
  conversions: number;
  revenue: number;
  currency: Currency;
}

/** One `MarketingAggregate` row: grouped dimensions set, the others null; TOTAL_ of requested metrics. */
export interface MarketingAggregate {
  DATE_DAY: string | null;
  DATE_WEEK: string | null;
  DATE_MONTH: string | null;
  MARKET: string | null;
  DATA_SOURCE: string | null;
  CHANNEL: string | null;
  CAMPAIGN_ID: string | null;
  TOTAL_IMPRESSIONS: number | null;
  TOTAL_CLICKS: number | null;
  TOTAL_SPEND: number | null;
  TOTAL_CONVERSIONS: number | null;
  TOTAL_REVENUE: number | null;
  currency: Currency;
}

/** `MarketingFilterInput`. */
export interface MarketingFilter {
  markets?: string[];
  dataSources?: string[];
  channels?: string[];
  campaignIds?: string[];
}

/** `extensions.pageInfo.<field>` of a page (CONTRACT §3 rule 3, plus `dataVersion`). */
export interface PageInfo {
  page: number;
  pageSize: number;
  totalCount: number;
  hasNextPage: boolean;
  /** Changes when the range's data is reloaded: a walk that sees it change must restart. */
  dataVersion: string;
}

/** Every `MarketingRecord` field, in schema order. */
export type RecordField = keyof MarketingRecord;
/** Every `MarketingAggregate` field. */
export type AggregateField = keyof MarketingAggregate;
/** `AggregateSortField`: the dimensions and the `TOTAL_` fields. */
export type AggregateSortField =
  | Dimension
  | "TOTAL_IMPRESSIONS"
  | "TOTAL_CLICKS"
  | "TOTAL_SPEND"
  | "TOTAL_CONVERSIONS"
  | "TOTAL_REVENUE";

/** `RecordSortInput`. */
export interface RecordSort {
  field: RecordSortField;
  direction: SortDirection;
}

/** `AggregateSortInput`. */
export interface AggregateSort {
  field: AggregateSortField;
  direction: SortDirection;
}

/** A rate limit: at most `max` requests per `windowSeconds` (the service's `q` and `w`). */
export interface RateLimitPolicy {
  max: number;
  windowSeconds: number;
}

/** Time as the SDK sees it; tests inject a fake one. Request timeouts always use real time. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`; rejects with ABORTED when `signal` fires first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** What `records()`, `recordPages()`, `aggregate()` and `aggregatePages()` share. */
export interface WalkOptions {
  /** First day, `YYYY-MM-DD`, inclusive. */
  from: string;
  /** Last day, `YYYY-MM-DD`, inclusive. Any length: the SDK splits it into ≤ 90-day windows. */
  to: string;
  /** Currency of money fields; the service's default (EUR) when omitted. */
  currency?: Currency;
  filter?: MarketingFilter;
  /** Rows per request, 1000..5000; default 5000 (fewest requests). */
  pageSize?: number;
  /** Days per window, 1..90; default 90. Smaller windows bound the memory of one window's buffer. */
  windowDays?: number;
  /** Requests in flight at once within a window; default 2. */
  concurrency?: number;
  signal?: AbortSignal;
}

/** Options of `records()` and `recordPages()`. */
export interface RecordsOptions<Field extends RecordField = RecordField> extends WalkOptions {
  /**
   * Sort within each window; default `[{field: "DATE_DAY", direction: "ASC"}]` (ties by
   * recordId). Windows are walked oldest first, or newest first when the first entry is
   * `DATE_DAY` descending, so that a sort by day holds over the whole range.
   */
  sort?: RecordSort[];
  /** Fields to fetch; every field by default. `recordId` is always fetched. */
  fields?: readonly Field[];
}

/** Options of `aggregate()` and `aggregatePages()`. */
export interface AggregateOptions extends WalkOptions {
  metrics: Metric[];
  /** Default `[DATE_DAY]`; `[]` gives one row of grand totals per window. */
  groupBy?: Dimension[];
  /** At most 2 entries; the service's default when omitted (newest date first). */
  sort?: AggregateSort[];
}

/** One page as the service returned it, with where it belongs. */
export interface Page<Row> {
  /** The ≤ 90-day window this page belongs to. */
  window: { from: string; to: string };
  /** 0-based index of the window among all windows of the walk. */
  windowIndex: number;
  windowCount: number;
  /** `extensions.pageInfo` of this page. */
  pageInfo: PageInfo;
  rows: Row[];
  /** Whether this is the last page of its window. */
  lastInWindow: boolean;
}

/** Options of `waitUntilReady()`. */
export interface WaitUntilReadyOptions {
  /** Processing date to wait for; the region's today by default. */
  date?: string;
  /** Milliseconds between polls; default 300 000 (5 minutes, spec §1 "wait a few minutes"). */
  interval?: number;
  /** Milliseconds to wait in all before failing with NOT_READY; default: no limit. */
  timeout?: number;
  signal?: AbortSignal;
}

/** What the SDK tells an `onEvent` listener (for progress and logs; never holds secrets). */
export type MdqClientEvent =
  | { type: "token"; expiresInSeconds: number }
  | {
      type: "retry";
      attempt: number;
      delayMs: number;
      reason: "status" | "network" | "timeout";
      status?: number;
      url: string;
    }
  | { type: "rate-limited"; retryAfterSeconds: number; url: string }
  | { type: "token-rejected"; url: string }
  | { type: "window-restart"; window: { from: string; to: string }; reason: string }
  | { type: "page"; window: { from: string; to: string }; page: number; rows: number; totalCount: number };
