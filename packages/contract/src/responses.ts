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
