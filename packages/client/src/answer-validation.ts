/**
 * Every answer of the service is untrusted input (STYLE §14): before the SDK acts on one, it is
 * checked here, once, against a schema (valibot) built from what was asked. Dates are calendar
 * days inside the asked range, each listed day once, record fields of their GraphQL types, counts
 * finite whole numbers consistent with the rows that arrived. An answer that fails is a
 * SERVER_ANSWER_INVALID error naming the first problem; nothing is written from it.
 */
import {
  DIMENSIONS,
  isCalendarDate,
  isDateDimension,
  READINESS_STATUSES,
  RECORD_FIELDS,
  type RecordField,
  TOTAL_FIELDS,
} from "@mdq/contract";
import * as v from "valibot";
import type { DateWindow } from "./date-windows.js";
import { MdqClientError } from "./errors.js";
import { compareRecordIds } from "./record-order.js";
import type {
  ChangedDay,
  DataChanges,
  MarketingAggregate,
  MarketingRecord,
  MyAccess,
  PageInfo,
  Readiness,
} from "./types.js";

/** Longest text a version, id or name may have: far above any real one, far below a flood. */
const MAX_TEXT = 4096;

const text = v.pipe(v.string(), v.maxLength(MAX_TEXT));
const version = v.pipe(v.string(), v.minLength(1), v.maxLength(256));
const count = v.pipe(v.number(), v.safeInteger(), v.minValue(0));
const finite = v.pipe(v.number(), v.finite());
const calendarDate = v.pipe(v.string(), v.check(isCalendarDate, "is not a calendar day (YYYY-MM-DD)"));

/** A calendar day inside `window` (both ends inclusive; ISO dates compare as text). */
function dateIn(window: DateWindow) {
  return v.pipe(
    calendarDate,
    v.check(
      (date: string) => date >= window.from && date <= window.to,
      `is outside the asked range ${window.from}..${window.to}`,
    ),
  );
}

/** Runs `schema` on `value`; a failure becomes SERVER_ANSWER_INVALID naming where and what. */
function checked<Schema extends v.GenericSchema>(
  schema: Schema,
  value: unknown,
  what: string,
): v.InferOutput<Schema> {
  const result = v.safeParse(schema, value, { abortEarly: true });
  if (result.success) return result.output;
  const issue = result.issues[0]!;
  const path = v.getDotPath(issue);
  const received = issue.received.length > 80 ? `${issue.received.slice(0, 77)}...` : issue.received;
  throw new MdqClientError(
    "SERVER_ANSWER_INVALID",
    `the service's ${what} is invalid${path ? ` at ${path}` : ""}: ${issue.message.replace(/^Invalid [^:]*: /, "")} (received ${received})`,
  );
}

/** The `data` of a GraphQL answer without `errors`: an object. */
export function checkGraphQLData(data: unknown): Record<string, unknown> {
  return checked(v.record(v.string(), v.unknown()), data, "GraphQL answer's data");
}

/** `marketingDataReadiness`; its `date` must be the asked one, when one was asked. */
export function checkReadiness(value: unknown, askedDate: string | undefined): Readiness {
  const schema = v.object({
    status: v.picklist(READINESS_STATUSES),
    lastProcessedAt: v.nullable(text),
    date: askedDate === undefined ? calendarDate : dateIn({ from: askedDate, to: askedDate }),
    availableThrough: v.nullable(calendarDate),
    dataVersion: v.optional(v.nullable(version)),
  });
  return checked(schema, value, "marketingDataReadiness");
}

/** `myAccess`. */
export function checkMyAccess(value: unknown): MyAccess {
  const schema = v.object({
    brandId: text,
    appClientId: text,
    markets: v.array(text),
    dataSources: v.array(text),
    scope: text,
    region: text,
    tokenExpiresAt: text,
  });
  return checked(schema, value, "myAccess");
}

/** One window's `marketingDataChanges`: days inside `window`, ascending, each once. */
export function checkDataChanges(value: unknown, window: DateWindow): DataChanges {
  const day = v.object({ date: dateIn(window), dataVersion: version, changedAt: text, rows: count });
  const schema = v.object({
    dataVersion: version,
    fullResyncRequired: v.boolean(),
    reason: v.nullable(text),
    days: v.pipe(
      v.array(day),
      v.check(
        (days: ChangedDay[]) =>
          days.every((entry, index) => index === 0 || entry.date > days[index - 1]!.date),
        "lists a day twice or out of order",
      ),
    ),
  });
  return checked(schema, value, "marketingDataChanges");
}

/** What a page request asked: the numbers its `pageInfo` and row count must agree with. */
export interface PageRequest {
  field: "marketingRecords" | "marketingAggregate";
  window: DateWindow;
  page: number;
  pageSize: number;
}

/**
 * A page's `extensions.pageInfo` and rows, checked against each other and the request: the page
 * and size asked, a finite whole `totalCount`, `hasNextPage` and the row count that total implies
 * (a full page before the last, the remainder on the last, none after it).
 */
export function checkPage(
  rows: unknown,
  pageInfo: unknown,
  request: PageRequest,
): { rows: Record<string, unknown>[]; pageInfo: PageInfo } {
  const what = `${request.field} page ${request.page} of ${request.window.from}..${request.window.to}`;
  const info = checked(
    v.object({
      page: v.literal(request.page),
      pageSize: v.literal(request.pageSize),
      totalCount: count,
      hasNextPage: v.boolean(),
      dataVersion: version,
    }),
    pageInfo,
    `${what} pageInfo`,
  );
  const before = (request.page - 1) * request.pageSize;
  const expected = Math.max(0, Math.min(request.pageSize, info.totalCount - before));
  const list = checked(v.array(v.record(v.string(), v.unknown())), rows, what);
  if (list.length !== expected || info.hasNextPage !== before + request.pageSize < info.totalCount) {
    throw new MdqClientError(
      "SERVER_ANSWER_INVALID",
      `the service's ${what} is invalid: it holds ${list.length} rows (hasNextPage ${info.hasNextPage}) where totalCount ${info.totalCount} means ${expected}`,
    );
  }
  return { rows: list, pageInfo: info };
}

const RECORD_FIELD_SCHEMAS = {
  recordId: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_TEXT)),
  market: text,
  dataSource: text,
  channel: text,
  campaignId: text,
  campaignName: text,
  impressions: count,
  clicks: count,
  spend: finite,
  conversions: finite,
  revenue: finite,
  currency: text,
} as const;

/** The schema of a records page's rows: exactly the asked `fields`, each of its type, dates in `window`. */
export function recordRowSchema(fields: readonly RecordField[], window: DateWindow) {
  const entries: Record<string, v.GenericSchema> = {};
  for (const field of fields) {
    entries[field] = field === "date" ? dateIn(window) : RECORD_FIELD_SCHEMAS[field];
  }
  return v.strictObject(entries);
}

/** A records page's rows, checked (`recordRowSchema`). */
export function checkRecords<Row extends Partial<MarketingRecord>>(
  rows: Record<string, unknown>[],
  fields: readonly RecordField[],
  window: DateWindow,
): Row[] {
  return checked(v.array(recordRowSchema(fields, window)), rows, "marketingRecords rows") as Row[];
}

/**
 * The check of an export's rows for `window` (CONTRACT §7): each a whole record of its GraphQL
 * types with its date inside the window (`recordRowSchema`), and each after the one before it in
 * the export's order, ascending `(date, recordId)`, so that none comes twice.
 */
export function exportRowsCheck(
  window: DateWindow,
): (records: MarketingRecord[], previous: MarketingRecord | null) => void {
  const schema = v.array(recordRowSchema(RECORD_FIELDS, window));
  const what = `export of ${window.from}..${window.to}`;
  return (records, previous) => {
    checked(schema, records, what);
    let before = previous;
    for (const record of records) {
      if (
        before !== null &&
        (record.date < before.date ||
          (record.date === before.date && compareRecordIds(record.recordId, before.recordId) <= 0))
      ) {
        throw new MdqClientError(
          "SERVER_ANSWER_INVALID",
          `the service's ${what} is invalid: ${record.date} ${JSON.stringify(record.recordId.slice(0, 80))} does not come after ${before.date} ${JSON.stringify(before.recordId.slice(0, 80))} (the export is ascending by date, then recordId)`,
        );
      }
      before = record;
    }
  };
}

/** An aggregate page's rows: dimensions text or null (dates calendar days), totals finite or null. */
export function checkAggregates(rows: Record<string, unknown>[]): MarketingAggregate[] {
  const entries: Record<string, v.GenericSchema> = { currency: text };
  for (const dimension of DIMENSIONS) {
    entries[dimension] = v.optional(v.nullable(isDateDimension(dimension) ? calendarDate : text), null);
  }
  for (const total of TOTAL_FIELDS) entries[total] = v.optional(v.nullable(finite), null);
  return checked(
    v.array(v.strictObject(entries)),
    rows,
    "marketingAggregate rows",
  ) as unknown as MarketingAggregate[];
}
