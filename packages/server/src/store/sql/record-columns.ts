/**
 * A record field's output expression, shared by the records page and the export plans.
 */
import type { SqlDialect } from "../model/engine.js";
import type { RecordField } from "../model/query-request.js";

/** The output expression of a record field other than money and currency. */
export function recordColumn(
  field: Exclude<RecordField, "spend" | "revenue" | "currency">,
  dialect: SqlDialect,
): string {
  switch (field) {
    case "recordId":
      return "r.record_id";
    case "date":
      return dialect.formatDate("r.date");
    case "market":
      return "r.market";
    case "dataSource":
      return "r.data_source";
    case "channel":
      return "r.channel";
    case "campaignId":
      return "r.campaign_id";
    case "campaignName":
      return "r.campaign_name";
    case "impressions":
      return `CAST(r.impressions AS ${dialect.double})`;
    case "clicks":
      return `CAST(r.clicks AS ${dialect.double})`;
    case "conversions":
      return `CAST(r.conversions_e4 AS ${dialect.double}) / 10000`;
  }
}
