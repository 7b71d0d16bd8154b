/**
 * The shapes of CONTRACT §3's answers and inputs as JSON carries them: a `MarketingRecord`, a
 * `MarketingAggregate` row, readiness, the filter, and `extensions.pageInfo`.
 */
import type { Dimension, ReadinessStatus, RecordField, TotalField } from "./vocabulary.js";

/** `marketingDataReadiness`. */
export interface Readiness {
  status: ReadinessStatus;
  lastProcessedAt: string | null;
  date: string;
  availableThrough: string | null;
  /** The brand's latest data version (CONTRACT §6); null from a service that predates it. */
  dataVersion?: string | null;
}

/**
 * One `MarketingRecord`, every field. `currency` is a `Currency` value, typed as a string so that
 * an answer naming a currency added later still fits.
 */
export interface MarketingRecord extends Record<RecordField, string | number> {
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
  currency: string;
}

/** One `MarketingAggregate` row: grouped dimensions set, the others null; TOTAL_ of requested metrics. */
export interface MarketingAggregate
  extends Record<Dimension, string | null>,
    Record<TotalField, number | null> {
  currency: string;
}

/** `MarketingFilterInput`. */
export interface MarketingFilter {
  markets?: string[];
  dataSources?: string[];
  channels?: string[];
  campaignIds?: string[];
}

/** `extensions.pageInfo.<response key>` of a paginated field (CONTRACT §3 rule 3, plus `dataVersion`). */
export interface PageInfo {
  page: number;
  pageSize: number;
  totalCount: number;
  hasNextPage: boolean;
  /** Changes when the range's data is reloaded: a walk that sees it change must restart. */
  dataVersion: string;
}

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

/** `marketingDataChanges` (CONTRACT §6 rule 2); the SDK asks a range of any length in ≤ 366-day windows. */
export interface DataChanges {
  /** Pass it as `since` next time: the version of the (first window's) answer (versions only grow). */
  dataVersion: string;
  fullResyncRequired: boolean;
  reason: string | null;
  /** Ascending by date. */
  days: ChangedDay[];
}
