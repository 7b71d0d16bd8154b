/** Stored records for store tests: one record with every column set, overridable. */
import type { StoredRecord } from "../src/store/model/store.js";

/** A record of DE, google_ads, search, campaign cmp-a, EUR 1.00 spent; `values` override any column. */
export function record(
  recordId: string,
  date: string,
  values: Partial<Omit<StoredRecord, "recordId" | "date">> = {},
): StoredRecord {
  return {
    recordId,
    date,
    market: "DE",
    dataSource: "google_ads",
    channel: "search",
    campaignId: "cmp-a",
    campaignName: "Campaign A",
    impressions: 100,
    clicks: 10,
    spendE4: 10_000n,
    conversionsE4: 0n,
    revenueE4: 0n,
    currency: "EUR",
    ...values,
  };
}

/** A GB record of a campaign of its own, `c-<recordId>` named `campaignName`; `values` override any column. */
export function ownCampaignRecord(
  recordId: string,
  date: string,
  campaignName: string,
  values: Partial<Omit<StoredRecord, "recordId" | "date">> = {},
): StoredRecord {
  return record(recordId, date, { market: "GB", campaignId: `c-${recordId}`, campaignName, ...values });
}
