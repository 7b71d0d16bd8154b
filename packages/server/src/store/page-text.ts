/**
 * Records pages written as JSON text from a planned text page (query-planner.ts
 * `planRecordsText`: one text value for many rows, instead of a driver value per row and
 * column), so that GraphQL execution never walks their rows: the bytes graphql-jit and
 * `JSON.stringify` write for the same rows, keys in the query's field order.
 *
 * Every value is the one the object path serialises: strings as stored, whole numbers (`Int`) as
 * numbers, conversions as the stored ten-thousandths divided as a double, money converted by
 * `MoneyConverter` (the planner's arithmetic, to the bit). Whatever the object path would answer
 * differently — an `Int` outside 32 bits (a field error there), a conversion lacking a rate, a
 * value holding a separator — makes the text unusable (`null`), and the caller answers with the
 * object path instead.
 */
import type { CurrencyCode } from "../currencies.js";
import { TEXT_VALUE_SEPARATOR } from "./query-planner.js";
import type { RecordField } from "./query-request.js";
import type { MoneyConverter } from "./record-money.js";
import type { PageBoundary } from "./walk-memory.js";

/** A records page as the JSON text of its rows, with what its page info needs. */
export interface TextPage {
  /**
   * The JSON array of the page's records, UTF-8: encoded once, when read, so that the response
   * is written without measuring or encoding the page's text again.
   */
  json: Buffer;
  rows: number;
  totalCount: number;
  dataVersion: string;
}

/** Pages cut from one planned text page: each page's JSON rows and where it ended. */
export interface TextPageRows {
  json: Buffer;
  rows: number;
  boundary: PageBoundary;
}

/** The largest value of GraphQL's `Int` (32-bit signed). */
const MAX_INT = 2_147_483_647;
/** Values every row of a planned text page starts with: record id, day, source currency. */
const LEADING_VALUES = 3;

/** How a field's value comes from a row's values. */
enum Source {
  /** A text value as stored. */
  Text,
  /** A whole number that must fit GraphQL's `Int`. */
  Whole,
  /** Stored ten-thousandths, as a double. */
  TenThousandths,
  /** A stored amount converted to the query's currency. */
  Money,
  /** The query's currency. */
  Currency,
}

/** Where each field's value comes from: its source and the index of its value in a row. */
function fieldSources(fields: readonly RecordField[], columns: readonly string[]): [Source, number][] {
  const at = (column: string): number => {
    const index = columns.indexOf(column);
    if (index === -1) throw new Error(`the planned text page lacks ${column}`);
    return LEADING_VALUES + index;
  };
  const sourceOf = (field: RecordField): [Source, number] => {
    switch (field) {
      case "recordId":
        return [Source.Text, 0];
      case "date":
        return [Source.Text, 1];
      case "currency":
        return [Source.Currency, -1];
      case "market":
        return [Source.Text, at("market")];
      case "dataSource":
        return [Source.Text, at("data_source")];
      case "channel":
        return [Source.Text, at("channel")];
      case "campaignId":
        return [Source.Text, at("campaign_id")];
      case "campaignName":
        return [Source.Text, at("campaign_name")];
      case "impressions":
        return [Source.Whole, at("impressions")];
      case "clicks":
        return [Source.Whole, at("clicks")];
      case "conversions":
        return [Source.TenThousandths, at("conversions_e4")];
      case "spend":
        return [Source.Money, at("spend_e4")];
      case "revenue":
        return [Source.Money, at("revenue_e4")];
    }
  };
  return fields.map(sourceOf);
}

/**
 * Cuts the text of `rowCount` rows into pages of `pageSize` and writes each as JSON (a row
 * object per record, keys in `fields` order, then `JSON.stringify`: V8's fast path, cheaper
 * than any string building); null when a row cannot be written as the object path would.
 */
export function textPages(
  text: string,
  rowCount: number,
  plan: {
    fields: readonly RecordField[];
    columns: readonly string[];
    currency: CurrencyCode;
    money: MoneyConverter | null;
    pageSize: number;
  },
): TextPageRows[] | null {
  if (rowCount === 0) return [];
  const width = LEADING_VALUES + plan.columns.length;
  // One split for the whole text: a separator inside a value would show as a count off.
  const values = text.split(TEXT_VALUE_SEPARATOR);
  if (values.length !== rowCount * width) return null;
  const { fields, currency, money } = plan;
  const sources = fieldSources(fields, plan.columns);
  const kinds = sources.map(([source]) => source);
  const offsets = sources.map(([, offset]) => offset);
  const pages: TextPageRows[] = [];
  for (let start = 0; start < rowCount; start += plan.pageSize) {
    const end = Math.min(start + plan.pageSize, rowCount);
    const rows: Record<string, string | number>[] = new Array(end - start);
    for (let index = start; index < end; index += 1) {
      const base = index * width;
      const row: Record<string, string | number> = {};
      for (let field = 0; field < fields.length; field += 1) {
        const offset = offsets[field]!;
        let value: string | number | null | undefined;
        switch (kinds[field]) {
          case Source.Text:
            value = values[base + offset];
            break;
          case Source.Whole:
            value = Number(values[base + offset]);
            if (!(value <= MAX_INT)) return null;
            break;
          case Source.TenThousandths:
            value = Number(values[base + offset]) / 10000;
            break;
          case Source.Money:
            value = money?.convert(values[base + offset], values[base + 2]!, values[base + 1]!);
            if (value === null || value === undefined) return null;
            break;
          case Source.Currency:
            value = currency;
            break;
        }
        row[fields[field]!] = value!;
      }
      rows[index - start] = row;
    }
    const last = (end - 1) * width;
    pages.push({
      json: Buffer.from(JSON.stringify(rows)),
      rows: end - start,
      boundary: { date: values[last + 1]!, recordId: values[last]! },
    });
  }
  return pages;
}
