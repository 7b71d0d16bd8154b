/**
 * Parquet (`application/vnd.apache.parquet`), written with hyparquet-writer as rows arrive: one
 * row group per `PARQUET_ROW_GROUP_ROWS` rows (it holds a row group's values and pages in memory
 * at once, about 2 KB a row at its peak), each sent as soon as it is encoded, the footer last. Both
 * engines write an export's Parquet themselves (store/reads/export/ and each engine's export); this writer writes what no engine
 * statement does: the file of an export of no rows, its schema alone.
 * Typed columns, as the engines' COPY types them (so that every export has one schema, whatever
 * its rows): `date` a DATE, `impressions` and `clicks` INT64 (INT_64), `conversions` a DOUBLE,
 * `spend` and `revenue` DECIMAL(18, minor unit of the currency) — the exact amounts, not doubles —
 * every column OPTIONAL.
 */
import { CURRENCIES, type CurrencyCode, RECORD_FIELDS, type RecordField, toEpochDay } from "@mdq/contract";
import { ByteWriter, ParquetWriter } from "hyparquet-writer";
import { PARQUET_ROW_GROUP_ROWS } from "../store/reads/export/export-sql.js";
import { batchValues, type ExportBatch } from "../store/reads/export/record-export.js";
import type { RecordsWriter } from "./records-writer.js";

/** The schema's column of each field. */
function schemaOf(currency: CurrencyCode) {
  const text = { type: "BYTE_ARRAY", converted_type: "UTF8" } as const;
  const decimal = {
    type: "INT64",
    converted_type: "DECIMAL",
    precision: 18,
    scale: CURRENCIES[currency].minorUnits,
    logical_type: { type: "DECIMAL", precision: 18, scale: CURRENCIES[currency].minorUnits },
  } as const;
  const types: Record<RecordField, object> = {
    recordId: text,
    date: { type: "INT32", converted_type: "DATE" },
    market: text,
    dataSource: text,
    channel: text,
    campaignId: text,
    campaignName: text,
    impressions: { type: "INT64", converted_type: "INT_64" },
    clicks: { type: "INT64", converted_type: "INT_64" },
    spend: decimal,
    conversions: { type: "DOUBLE" },
    revenue: decimal,
    currency: text,
  };
  return [
    { name: "root", num_children: RECORD_FIELDS.length },
    // OPTIONAL, as the engines' COPY writes every column: an empty export has their schema.
    ...RECORD_FIELDS.map((name) => ({ name, ...types[name], repetition_type: "OPTIONAL" })),
  ];
}

/** A ByteWriter whose bytes are taken out after each row group, so memory holds one group at most. */
class ChunkedWriter extends ByteWriter {
  private readonly taken: Uint8Array[] = [];

  flush(): void {
    this.taken.push(new Uint8Array(this.buffer.slice(0, this.index)));
    this.index = 0;
  }

  /** The bytes written since the last call. */
  take(): Uint8Array {
    this.flush();
    const chunks = this.taken.splice(0);
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  }
}

/** Parquet with DECIMAL money in `currency`'s minor unit. */
export function parquetWriter(currency: CurrencyCode): RecordsWriter {
  const bytes = new ChunkedWriter();
  const scale = 10 ** CURRENCIES[currency].minorUnits;
  const writer = new ParquetWriter({
    writer: bytes,
    schema: schemaOf(currency) as ConstructorParameters<typeof ParquetWriter>[0]["schema"],
    createdBy: "mdq",
  });
  let pending = RECORD_FIELDS.map(() => [] as unknown[]);
  let rows = 0;
  const writeGroup = () => {
    if (rows === 0) return;
    writer.write({
      columnData: RECORD_FIELDS.map((name, index) => ({ name, data: pending[index]! })),
      rowGroupSize: rows,
    });
    pending = RECORD_FIELDS.map(() => []);
    rows = 0;
  };
  return {
    start: () => bytes.take(),
    write(batch: ExportBatch): Uint8Array {
      for (const [index, field] of RECORD_FIELDS.entries()) {
        const target = pending[index]!;
        const values = batchValues(batch, field) as readonly (string | number)[];
        if (field === "date") for (const value of values) target.push(toEpochDay(value as string));
        else if (field === "impressions" || field === "clicks")
          for (const value of values) target.push(BigInt(value));
        else if (field === "spend" || field === "revenue")
          for (const value of values) target.push(BigInt(Math.round((value as number) * scale)));
        else for (const value of values) target.push(value);
      }
      rows += batch.rowCount;
      if (rows >= PARQUET_ROW_GROUP_ROWS) writeGroup();
      return bytes.take();
    },
    end(): Uint8Array {
      writeGroup();
      writer.finish();
      return bytes.take();
    },
  };
}
