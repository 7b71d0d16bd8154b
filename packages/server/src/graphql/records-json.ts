/**
 * A `marketingRecords` page written for the response, at the GraphQL layer only (the store speaks
 * columns, never bytes; graphql-yoga's result processor is the model): a plain selection
 * (selection.ts `plainSelection`) is written from the page's columns straight to the JSON bytes
 * graphql-jit and `JSON.stringify` would write for the same rows, keys in the query's field order,
 * and the endpoint splices them into the response (graphql-endpoint.ts `responseChunks`); any
 * other selection gets row objects, which GraphQL execution serialises field by field.
 *
 * The bytes are those of the object path by construction: text through `JSON.stringify`, numbers
 * through `String` (what `JSON.stringify` writes for a finite number). A value GraphQL would
 * refuse — an `Int` outside 32 bits, a number that is not finite, a missing amount — leaves the
 * page to the object path (`recordsJson` answers null), which raises the same field error as ever.
 */
import type { RecordField } from "../store/query-request.js";
import type { RecordsPage, RecordValue } from "../store/store.js";

/** How GraphQL serialises a field's values (schema.ts `MarketingRecord`). */
enum Output {
  /** `ID`, `String`, `Date`, `Currency`: the text as a JSON string. */
  Text,
  /** `Int`: a whole number of 32 bits. */
  Int,
  /** `Float`: a finite number. */
  Float,
}

const OUTPUTS: Record<RecordField, Output> = {
  recordId: Output.Text,
  date: Output.Text,
  market: Output.Text,
  dataSource: Output.Text,
  channel: Output.Text,
  campaignId: Output.Text,
  campaignName: Output.Text,
  impressions: Output.Int,
  clicks: Output.Int,
  spend: Output.Float,
  conversions: Output.Float,
  revenue: Output.Float,
  currency: Output.Text,
};

/** GraphQL's `Int` range (32-bit signed, GraphQL spec §3.5.1). */
const MIN_INT = -2_147_483_648;
const MAX_INT = 2_147_483_647;

/** Whether GraphQL serialises `value` as written here, for a field of `output`. */
function writable(value: RecordValue, output: Output): boolean {
  switch (output) {
    case Output.Text:
      return typeof value === "string";
    case Output.Int:
      return typeof value === "number" && Number.isInteger(value) && value >= MIN_INT && value <= MAX_INT;
    case Output.Float:
      return typeof value === "number" && Number.isFinite(value);
  }
}

/**
 * Each page's JSON, written once: a cached page (store/page-cache.ts) is the same object on every
 * hit, so its bytes are reused, and dropped with it.
 */
const written = new WeakMap<RecordsPage, Buffer | null>();

/**
 * The JSON array of the page's records, UTF-8, keys in `page.fields` order (a plain selection's
 * order); null when GraphQL would not serialise a value as it stands (then answer with
 * `recordObjects`).
 * @example const json = recordsJson(page); if (json) context.recordsJson.set(key, json);
 */
export function recordsJson(page: RecordsPage): Buffer | null {
  let json = written.get(page);
  if (json === undefined) {
    json = encoded(page);
    written.set(page, json);
  }
  return json;
}

function encoded({ fields, columns, rowCount }: RecordsPage): Buffer | null {
  const outputs = fields.map((field) => OUTPUTS[field]);
  for (const [index, column] of columns.entries()) {
    const output = outputs[index]!;
    for (let row = 0; row < rowCount; row += 1) if (!writable(column[row]!, output)) return null;
  }
  // `{"field":` for the first key of a row, `,"field":` for the others.
  const keys = fields.map((field, index) => `${index === 0 ? "{" : ","}${JSON.stringify(field)}:`);
  const rows = new Array<string>(rowCount);
  for (let row = 0; row < rowCount; row += 1) {
    let text = "";
    for (let field = 0; field < fields.length; field += 1) {
      const value = columns[field]![row];
      text += keys[field]! + (outputs[field] === Output.Text ? JSON.stringify(value) : String(value));
    }
    rows[row] = `${text}}`;
  }
  return Buffer.from(`[${rows.join(",")}]`);
}

/**
 * The page's rows as objects, one property per field: what GraphQL execution serialises for a
 * selection the JSON is not written for (aliases, fragments, directives, `__typename`).
 */
export function recordObjects({ fields, columns, rowCount }: RecordsPage): Record<string, RecordValue>[] {
  const rows = new Array<Record<string, RecordValue>>(rowCount);
  for (let row = 0; row < rowCount; row += 1) {
    const object: Record<string, RecordValue> = {};
    for (let field = 0; field < fields.length; field += 1) object[fields[field]!] = columns[field]![row]!;
    rows[row] = object;
  }
  return rows;
}
