/**
 * The export's `MDQ-Resume` token (CONTRACT §7): the whole query a response answers (clientId,
 * range, currency, format, filters) and the data version it reads, so that a resume (`after=`)
 * can be checked against the response it continues. A resume that asks anything else is refused
 * with 409 `RESUME_MISMATCH` naming the first parameter that differs: its rows would be another
 * question's, appended to the first one's file.
 *
 * The token is `v1.<base64url JSON>.<checksum>`. The checksum (SHA-256 of the payload, cut to
 * 16 bytes) makes an edited or truncated token evident; it is not a secret and grants nothing,
 * since every request's grants are checked anew. A token names no instance, so any instance of
 * the region can check it.
 */
import { createHash } from "node:crypto";
import { EXPORT_FORMATS, type ExportFormat } from "@mdq/contract";
import { MdqError } from "../errors.js";

/** The parameters a resume must repeat, as the export understood them. */
export interface ResumableQuery {
  clientId: string;
  from: string;
  to: string;
  currency: string;
  format: ExportFormat;
  markets: string[] | null;
  dataSources: string[] | null;
  channels: string[] | null;
  campaignIds: string[] | null;
}

/** What a token holds: the query and the data version (as `MDQ-Data-Version` shows it). */
export interface ResumePoint {
  query: ResumableQuery;
  dataVersion: string;
}

const VERSION = "v1";
const LISTS = ["markets", "dataSources", "channels", "campaignIds"] as const;
/** The parameters in the order a mismatch is looked for (and named). */
const COMPARED = ["clientId", "from", "to", "currency", "format", ...LISTS] as const;

/** A list parameter in a form that ignores order and repeats: `GB,DE` resumes `DE,GB`. */
export function canonicalList(values: readonly string[] | undefined): string[] | null {
  return values === undefined ? null : [...new Set(values)].sort();
}

function checksum(payload: string): string {
  return createHash("sha256").update(`mdq-resume.${payload}`).digest("base64url").slice(0, 22);
}

/**
 * The `MDQ-Resume` value of a response answering `query` at `dataVersion`.
 * @example resumeToken({ query, dataVersion: "uk.12" }) // "v1.eyJ…" (opaque)
 */
export function resumeToken(point: ResumePoint): string {
  const { query } = point;
  const fields = [
    query.clientId,
    query.from,
    query.to,
    query.currency,
    query.format,
    ...LISTS.map((name) => query[name]),
    point.dataVersion,
  ];
  const payload = Buffer.from(JSON.stringify(fields)).toString("base64url");
  return `${VERSION}.${payload}.${checksum(payload)}`;
}

function badToken(text: string): MdqError {
  return new MdqError(
    "BAD_USER_INPUT",
    `resume (${JSON.stringify(text.slice(0, 40))}) is not an MDQ-Resume token: pass the MDQ-Resume header of the response you resume, unchanged`,
  );
}

const isText = (value: unknown): value is string => typeof value === "string";
const isList = (value: unknown): value is string[] | null =>
  value === null || (Array.isArray(value) && value.every(isText));

/** The query and data version of a token; BAD_USER_INPUT when it was not issued by an export. */
export function parseResumeToken(text: string): ResumePoint {
  const [version, payload, sum, ...rest] = text.split(".");
  if (version !== VERSION || payload === undefined || sum === undefined || rest.length > 0)
    throw badToken(text);
  if (checksum(payload) !== sum) throw badToken(text);
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    throw badToken(text);
  }
  if (!Array.isArray(fields) || fields.length !== 10) throw badToken(text);
  const [clientId, from, to, currency, format, markets, dataSources, channels, campaignIds, dataVersion] =
    fields as unknown[];
  if (
    ![clientId, from, to, currency, dataVersion].every(isText) ||
    !(EXPORT_FORMATS as readonly unknown[]).includes(format) ||
    ![markets, dataSources, channels, campaignIds].every(isList)
  ) {
    throw badToken(text);
  }
  return {
    query: {
      clientId: clientId as string,
      from: from as string,
      to: to as string,
      currency: currency as string,
      format: format as ExportFormat,
      markets: markets as string[] | null,
      dataSources: dataSources as string[] | null,
      channels: channels as string[] | null,
      campaignIds: campaignIds as string[] | null,
    },
    dataVersion: dataVersion as string,
  };
}

function shown(value: string | string[] | null): string {
  if (value === null) return "(not given)";
  return JSON.stringify(Array.isArray(value) ? value.join(",") : value);
}

/**
 * Checks that `asked` is the query `point` was issued for; 409 RESUME_MISMATCH naming the first
 * parameter that differs, both values shown.
 */
export function checkResume(point: ResumePoint, asked: ResumableQuery): void {
  for (const name of COMPARED) {
    const original = point.query[name];
    const now = asked[name];
    if (JSON.stringify(original) === JSON.stringify(now)) continue;
    throw new MdqError(
      "RESUME_MISMATCH",
      `this resume asks ${name} ${shown(now)}, but the export it resumes asked ${shown(original)}: send the original request's parameters with after and resume, or start again without them`,
    );
  }
}
