/**
 * The export's query string (CONTRACT §7) as a validated request: the same rules as
 * `marketingRecords` (brand, grants and app narrowing, filter shapes, currency), with a range of
 * up to 366 days, comma-separated lists, a format, and `after` + `resume` (the `MDQ-Resume` token
 * of the response resumed, export-resume.ts) to resume. Any parameter the export does not know,
 * or one given twice, is refused: a typo must not widen an export silently; and a resume that
 * asks another query than the response it continues is refused too (409 `RESUME_MISMATCH`).
 */
import {
  CURRENCY_CODES,
  EXPORT_FORMATS,
  EXPORT_PARAMETERS,
  type ExportFormat,
  type ExportParameter,
  isCalendarDate,
  isCurrencyCode,
  MAX_EXPORT_RANGE_DAYS,
  parseExportAfter,
} from "@mdq/contract";
import { MdqError } from "../errors.js";
import { type Caller, type FilterArgument, scopeOf } from "../graphql/arguments.js";
import { parseDataVersion } from "../graphql/data-version-text.js";
import type { ExportQuery } from "../store/reads/export/record-export.js";
import { canonicalList, checkResume, parseResumeToken, type ResumableQuery } from "./export-resume.js";

/** A validated export request. */
export interface ExportRequest {
  query: ExportQuery;
  format: ExportFormat;
  /** The store version the caller resumes (`dataVersion=` or the token's), or null for whatever is current. */
  dataVersion: string | null;
  /** The query as a resume must repeat it: what the response's `MDQ-Resume` token names. */
  resumable: ResumableQuery;
}

const KNOWN: ReadonlySet<string> = new Set(EXPORT_PARAMETERS);
const LIST_PARAMETERS = ["markets", "dataSources", "channels", "campaignIds"] as const;

function badInput(message: string): MdqError {
  return new MdqError("BAD_USER_INPUT", message);
}

/** Each parameter's single value; BAD_USER_INPUT for an unknown or repeated one. */
function singleValues(query: unknown): Partial<Record<ExportParameter, string>> {
  const values: Partial<Record<ExportParameter, string>> = {};
  for (const [name, value] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    if (!KNOWN.has(name)) {
      throw badInput(
        `unknown parameter ${JSON.stringify(name.slice(0, 64))}; the export takes ${EXPORT_PARAMETERS.join(", ")}`,
      );
    }
    if (typeof value !== "string") throw badInput(`parameter ${name} is given more than once`);
    values[name as ExportParameter] = value;
  }
  return values;
}

function requiredDate(values: Partial<Record<ExportParameter, string>>, name: "from" | "to"): string {
  const value = values[name];
  if (value === undefined) throw badInput(`parameter ${name} is required (YYYY-MM-DD)`);
  if (!isCalendarDate(value))
    throw badInput(`${name} (${JSON.stringify(value.slice(0, 32))}) is not a calendar day YYYY-MM-DD`);
  return value;
}

/** Checks an export's query string for `caller`; throws MdqError with the code GraphQL would use. */
export function exportRequestOf(query: unknown, caller: Caller, region: string): ExportRequest {
  const values = singleValues(query);
  const clientId = values.clientId;
  if (clientId === undefined) throw badInput("parameter clientId is required");
  const dateRange = { from: requiredDate(values, "from"), to: requiredDate(values, "to") };
  const filter: FilterArgument = {};
  for (const name of LIST_PARAMETERS) {
    const value = values[name];
    if (value !== undefined) filter[name] = value.split(",");
  }
  const scope = scopeOf({ clientId, dateRange, filter }, caller, MAX_EXPORT_RANGE_DAYS);
  const currency = values.currency ?? "EUR";
  if (!isCurrencyCode(currency)) {
    throw badInput(
      `currency ${JSON.stringify(currency.slice(0, 16))} is not supported; use one of ${CURRENCY_CODES.join(", ")}`,
    );
  }
  const format = values.format ?? "ndjson";
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) {
    throw badInput(
      `format ${JSON.stringify(format.slice(0, 16))} is not one of ${EXPORT_FORMATS.join(", ")}`,
    );
  }
  const resumable: ResumableQuery = {
    clientId,
    ...dateRange,
    currency,
    format: format as ExportFormat,
    ...Object.fromEntries(LIST_PARAMETERS.map((name) => [name, canonicalList(filter[name] ?? undefined)])),
  } as ResumableQuery;
  let versionText = values.dataVersion;
  if (values.resume !== undefined) {
    const point = parseResumeToken(values.resume);
    checkResume(point, resumable);
    if (versionText !== undefined && versionText !== point.dataVersion) {
      throw new MdqError(
        "RESUME_MISMATCH",
        `this resume asks dataVersion ${JSON.stringify(versionText.slice(0, 80))}, but the export it resumes read ${JSON.stringify(point.dataVersion)}: send the original request's parameters with after and resume, or start again without them`,
      );
    }
    versionText = point.dataVersion;
  }
  let dataVersion: string | null = null;
  if (versionText !== undefined) {
    const version = parseDataVersion(region, versionText);
    if (version === undefined) {
      throw new MdqError(
        "INVALID_DATA_VERSION",
        `dataVersion (${JSON.stringify(versionText.slice(0, 80))}) is not a data version of region ${region}: pass the MDQ-Data-Version header of the response you resume`,
      );
    }
    dataVersion = version.toString();
  }
  let after = null;
  if (values.after !== undefined) {
    after = parseExportAfter(values.after) ?? null;
    if (after === null || !isCalendarDate(after.date)) {
      throw badInput(
        `after (${JSON.stringify(values.after.slice(0, 80))}) must be DATE,RECORD_ID of the last row received`,
      );
    }
    if (dataVersion === null) {
      throw badInput(
        "after needs resume (or dataVersion): pass the MDQ-Resume header of the response you resume, with that request's parameters",
      );
    }
  }
  return { query: { scope, currency, after }, format: format as ExportFormat, dataVersion, resumable };
}
