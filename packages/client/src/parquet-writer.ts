/**
 * Converts a complete NDJSON spool of records into a Parquet file, one row group per
 * `rowGroupSize` records, so memory holds one row group at a time, not the whole download.
 */
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { createInterface } from "node:readline";
import { toEpochDay } from "@mdq/contract";
import { fileWriter, ParquetWriter } from "hyparquet-writer";
import { RECORD_FIELDS } from "./record-formats.js";
import type { MarketingRecord } from "./types.js";

/**
 * Rows per row group. Memory grows with it (measured on 1M demo rows: 50k rows ≈ 250 MB peak
 * RSS, 100k ≈ 440 MB) while the file barely shrinks (35.5 MB vs 35.2 MB).
 */
export const PARQUET_ROW_GROUP_SIZE = 50_000;

type ParquetColumnType = "STRING" | "DATE" | "INT32" | "DOUBLE";

/** Parquet types of the record fields: ids and names as UTF-8 strings, `date` as a DATE. */
const COLUMN_TYPES: Record<(typeof RECORD_FIELDS)[number], ParquetColumnType> = {
  recordId: "STRING",
  date: "DATE",
  market: "STRING",
  dataSource: "STRING",
  channel: "STRING",
  campaignId: "STRING",
  campaignName: "STRING",
  impressions: "INT32",
  clicks: "INT32",
  spend: "DOUBLE",
  conversions: "DOUBLE",
  revenue: "DOUBLE",
  currency: "STRING",
};

const PHYSICAL = {
  STRING: { type: "BYTE_ARRAY", converted_type: "UTF8" },
  DATE: { type: "INT32", converted_type: "DATE" },
  INT32: { type: "INT32" },
  DOUBLE: { type: "DOUBLE" },
} as const;

/** The file schema: every field REQUIRED (the GraphQL fields are all non-null). */
const SCHEMA = [
  { name: "root", num_children: RECORD_FIELDS.length },
  ...RECORD_FIELDS.map((name) => ({
    name,
    ...PHYSICAL[COLUMN_TYPES[name]],
    repetition_type: "REQUIRED" as const,
  })),
];

/**
 * Reads `spoolPath` (NDJSON records) and writes `parquetPath` (created or replaced), then fsyncs it.
 * @example await spoolToParquet("out.parquet.partial", "out.parquet.converting")
 */
export async function spoolToParquet(
  spoolPath: string,
  parquetPath: string,
  rowGroupSize = PARQUET_ROW_GROUP_SIZE,
): Promise<number> {
  const writer = new ParquetWriter({
    writer: fileWriter(parquetPath),
    // The type definitions want the thrift enums' string unions; SCHEMA uses exactly those names.
    schema: SCHEMA as ConstructorParameters<typeof ParquetWriter>[0]["schema"],
    createdBy: "mdq-client",
  });
  let columns = RECORD_FIELDS.map(() => [] as unknown[]);
  let buffered = 0;
  let total = 0;
  const flush = async () => {
    if (buffered === 0) return;
    await writer.write({
      columnData: RECORD_FIELDS.map((name, index) => ({ name, data: columns[index]! })),
      rowGroupSize: buffered,
    });
    total += buffered;
    columns = RECORD_FIELDS.map(() => []);
    buffered = 0;
  };
  const lines = createInterface({ input: createReadStream(spoolPath), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (line === "") continue;
    const record = JSON.parse(line) as MarketingRecord;
    RECORD_FIELDS.forEach((field, index) => {
      columns[index]!.push(field === "date" ? toEpochDay(record.date) : record[field]);
    });
    buffered += 1;
    if (buffered >= rowGroupSize) await flush();
  }
  await flush();
  await writer.finish();
  const handle = await open(parquetPath, "r+");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  return total;
}
