/**
 * CSV (`text/csv`, RFC 4180): a header line of the `MarketingRecord` field names, then a line per
 * row, CRLF line ends, a field quoted when it holds a comma, quote, CR or LF (quotes doubled) —
 * by csv-stringify. Text cells that a spreadsheet would run as a formula are neutralised first
 * (`neutraliseCsvCell`, OWASP); numbers are written as numbers, so a refund's `-12.5` stays one.
 */
import { neutraliseCsvCell, RECORD_FIELDS } from "@mdq/contract";
import { stringify } from "csv-stringify/sync";
import { batchValues, type ExportBatch } from "../store/reads/export/record-export.js";
import type { RecordsWriter } from "./records-writer.js";

/**
 * csv-stringify quotes a field holding the record delimiter (CRLF), not one holding a bare CR or
 * LF: `quoted_match` adds those, or a reader would end the row inside a name.
 */
const CSV_OPTIONS = { record_delimiter: "\r\n", quoted_match: /[\r\n]/ } as const;

/** CSV with a header line. */
export function csvWriter(): RecordsWriter {
  return {
    start: () => stringify([[...RECORD_FIELDS]], CSV_OPTIONS),
    write(batch: ExportBatch): string {
      // Text cells are neutralised; numbers are written as numbers.
      const columns = RECORD_FIELDS.map((field) =>
        (batchValues(batch, field) as readonly (string | number)[]).map((value) =>
          typeof value === "string" ? neutraliseCsvCell(value) : value,
        ),
      );
      const rows = new Array<(string | number)[]>(batch.rowCount);
      for (let row = 0; row < batch.rowCount; row += 1) rows[row] = columns.map((column) => column[row]!);
      return stringify(rows, CSV_OPTIONS);
    },
    end: () => "",
  };
}
