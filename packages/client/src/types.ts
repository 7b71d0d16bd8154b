/**
 * The public types of the mdq-client SDK: what the service answers (CONTRACT §3). The enum
 * names come from `@mdq/contract`, never from server code.
 */
import type * as contract from "@mdq/contract";

/** A `Currency` value (`EUR`, `GBP`): a string, so that currencies added later still fit. */
export type Currency = string;
export type {
  AggregateSortField,
  ChangedDay,
  DataChanges,
  Dimension,
  MarketingAggregate,
  MarketingFilter,
  MarketingRecord,
  Metric,
  MyAccess,
  PageInfo,
  Readiness,
  ReadinessStatus,
  RecordField,
  RecordSortField,
  SortDirection,
} from "@mdq/contract";

/** Every `MarketingAggregate` field. */
export type AggregateField = keyof contract.MarketingAggregate;
/** `RecordSortInput`. */
export interface RecordSort {
  field: contract.RecordSortField;
  direction: contract.SortDirection;
}

/** `AggregateSortInput`. */
export interface AggregateSort {
  field: contract.AggregateSortField;
  direction: contract.SortDirection;
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
  filter?: contract.MarketingFilter;
  /** Rows per request, 1000..5000; default 5000 (fewest requests). */
  pageSize?: number;
  /** Days per window, 1..90; default 90. Smaller windows bound the memory of one window's buffer. */
  windowDays?: number;
  /** Requests in flight at once within a window; default 2. */
  concurrency?: number;
  signal?: AbortSignal;
}

/** Options of `records()` and `recordPages()`. */
export interface RecordsOptions<Field extends contract.RecordField = contract.RecordField>
  extends WalkOptions {
  /**
   * Sort within each window; default `[{field: "DATE_DAY", direction: "ASC"}]` (ties by
   * recordId). Windows are walked oldest first, or newest first when the first entry is
   * `DATE_DAY` descending, so that a sort by day holds over the whole range.
   */
  sort?: RecordSort[];
  /** Fields to fetch; every field by default. `recordId` is always fetched. */
  fields?: readonly Field[];
}

/** Options of `syncPages()`: every field, oldest day first, ties by recordId. */
export interface SyncPagesOptions extends WalkOptions {
  /**
   * Walk GraphQL pages rather than read each window through the bulk export (what the SDK does
   * anyway for a service without the export). The rows are the same.
   */
  pageWalk?: boolean;
}

/** Options of `aggregate()` and `aggregatePages()`. */
export interface AggregateOptions extends WalkOptions {
  metrics: contract.Metric[];
  /** Default `[DATE_DAY]`; `[]` gives one row of grand totals per window. */
  groupBy?: contract.Dimension[];
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
  pageInfo: contract.PageInfo;
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
  /** The service has no bulk export (404): the download walks GraphQL pages from `from` on. */
  | { type: "export-unavailable"; from: string }
  /** A window met a load and only the days it changed were fetched again (CONTRACT §6). */
  | { type: "window-repair"; window: { from: string; to: string }; days: string[] }
  | { type: "page"; window: { from: string; to: string }; page: number; rows: number; totalCount: number };
