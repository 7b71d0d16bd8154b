/**
 * NDJSON (`application/x-ndjson`): one JSON object per row and line, the `MarketingRecord` fields
 * in the schema's order with GraphQL's values: strings escaped as `JSON.stringify` escapes them,
 * numbers as it prints them, so a line equals `JSON.stringify` of the GraphQL record.
 */
import { RECORD_FIELDS, type RecordField } from "@mdq/contract";
import type { RecordValue } from "../store/model/store.js";
import { batchValues, type ExportBatch } from "../store/reads/export/record-export.js";
import type { RecordsWriter } from "./records-writer.js";

/** One `MarketingRecord` per line. */
export function ndjsonWriter(): RecordsWriter {
  return {
    start: () => "",
    write(batch: ExportBatch): string {
      const c = Object.fromEntries(
        RECORD_FIELDS.map((field) => [field, batchValues(batch, field)]),
      ) as Record<RecordField, readonly RecordValue[]>;
      let text = "";
      for (let row = 0; row < batch.rowCount; row += 1) {
        text += `{"recordId":${JSON.stringify(c.recordId[row])},"date":"${c.date[row]}","market":${JSON.stringify(
          c.market[row],
        )},"dataSource":${JSON.stringify(c.dataSource[row])},"channel":${JSON.stringify(
          c.channel[row],
        )},"campaignId":${JSON.stringify(c.campaignId[row])},"campaignName":${JSON.stringify(
          c.campaignName[row],
        )},"impressions":${JSON.stringify(c.impressions[row])},"clicks":${JSON.stringify(
          c.clicks[row],
        )},"spend":${JSON.stringify(c.spend[row])},"conversions":${JSON.stringify(
          c.conversions[row],
        )},"revenue":${JSON.stringify(c.revenue[row])},"currency":"${c.currency[row]}"}\n`;
      }
      return text;
    },
    end: () => "",
  };
}
