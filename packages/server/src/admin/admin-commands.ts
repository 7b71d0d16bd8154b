/**
 * The admin API's requests as typed commands (docs/admin-api.md), checked at the route before
 * `RegionAdmin` sees them. A route's JSON Schema (`OBJECT_BODY`) checks the body's shape; the
 * parsers here check each field's meaning with the API's documented wording, which a generic
 * schema message could not give. Checks that need the store (does the brand exist?) stay in
 * `RegionAdmin`, so an input error (400) is answered before a lookup error (404, 409).
 */
import { isAbsolute } from "node:path";
import {
  BRAND_ID_PATTERN as BRAND_ID,
  DATA_SOURCE_PATTERN as ID_PATTERN,
  isCalendarDate,
  MARKET_CODES,
  MAX_SECRET_GRACE_SECONDS,
  LOAD_FORMATS as RECORDS_FILE_FORMATS,
} from "@mdq/contract";
import { AdminError } from "../errors.js";
import type { RecordsFileFormat } from "../load/records-file.js";
import type { Grants } from "../store/model/store.js";
import { REPLACE_SCOPES, type ReplaceScope } from "../store/writes/replace-scope.js";

export { MAX_SECRET_GRACE_SECONDS };
/** The grace period of a rotated secret when none is given: one day. */
export const DEFAULT_SECRET_GRACE_SECONDS = 86_400;

/** The route schema of an admin body: a JSON object, or no body at all. */
export const OBJECT_BODY = { type: ["object", "null"] } as const;

/** The route schema of `/admin/apps/:appClientId/…`. */
export const APP_PARAMS = {
  type: "object",
  properties: { appClientId: { type: "string" } },
  required: ["appClientId"],
} as const;

/** The message of a body that fails `OBJECT_BODY`. */
export const NOT_AN_OBJECT = "the body must be a JSON object";

/** A request body once `OBJECT_BODY` has passed: the fields are still unchecked. */
type Body = Record<string, unknown> | null | undefined;

/** `POST /admin/brands`. */
export interface CreateBrandCommand {
  brandId: string;
  name: string;
}

/** `POST /admin/apps`: `markets` / `dataSources` narrow the brand's grants for this app. */
export interface CreateAppCommand {
  brandId: string;
  name: string;
  narrowing: Partial<Grants>;
}

/** `POST /admin/apps/:appClientId/rotate-secret`. */
export interface RotateSecretCommand {
  appClientId: string;
  graceSeconds: number;
}

/** `POST /admin/grants` and `POST /admin/grants/remove`: at least one list is given. */
export interface ChangeGrantsCommand {
  brandId: string;
  grants: Partial<Grants>;
}

/** `POST /admin/fx`. */
export interface LoadFxCommand {
  path: string;
  ignoreUnknownCurrencies: boolean;
}

/** `POST /admin/loads`; without `processingDate` the region's today is meant. */
export interface LoadCommand {
  brandId: string;
  path: string;
  format?: RecordsFileFormat;
  mapping?: Record<string, string>;
  processingDate?: string;
  /** What the load replaces (replace-scope.ts); whole days by default. */
  replace?: ReplaceScope;
  /** Where the file came from, as the load's log records it; the path by default. */
  source?: string;
}

/** `POST /admin/publishes`; without `processingDate` the region's today is meant. */
export interface PublishCommand {
  brandId: string;
  processingDate?: string;
}

/** A brand id to look up: anything but a string names no brand. */
export function brandIdOf(value: unknown): string {
  if (typeof value !== "string") throw new AdminError("NOT_FOUND", `no brand ${JSON.stringify(value)}`);
  return value;
}

/** Parses `POST /admin/brands`; the brand id defaults to a slug of the name. */
export function createBrandCommand(body: Body): CreateBrandCommand {
  const name = nameOf(body?.["name"]);
  const given = body?.["brandId"];
  const brandId =
    given === undefined
      ? name
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, "-")
          .replace(/^-+|-+$/g, "")
          .slice(0, 63)
      : given;
  if (typeof brandId !== "string" || !BRAND_ID.test(brandId)) {
    throw new AdminError(
      "BAD_INPUT",
      `brandId must match ${BRAND_ID.source}; got ${JSON.stringify(brandId)}`,
    );
  }
  return { brandId, name: name.trim() };
}

/** Parses `POST /admin/apps`. */
export function createAppCommand(body: Body): CreateAppCommand {
  const brandId = brandIdOf(body?.["brandId"]);
  return { brandId, name: nameOf(body?.["name"]).trim(), narrowing: grantsOf(body) };
}

/** Parses `POST /admin/apps/:appClientId/rotate-secret`. */
export function rotateSecretCommand(appClientId: string, body: Body): RotateSecretCommand {
  const grace = body?.["graceSeconds"] ?? DEFAULT_SECRET_GRACE_SECONDS;
  if (
    typeof grace !== "number" ||
    !Number.isInteger(grace) ||
    grace < 0 ||
    grace > MAX_SECRET_GRACE_SECONDS
  ) {
    throw new AdminError(
      "BAD_INPUT",
      `graceSeconds must be a whole number from 0 to ${MAX_SECRET_GRACE_SECONDS}`,
    );
  }
  return { appClientId, graceSeconds: grace };
}

/**
 * `POST /admin/apps/:appClientId/narrow`: a list replaces the app's narrowing of that kind; null
 * or `[]` removes it (all the brand's); an absent key leaves it as it is.
 */
export interface NarrowAppCommand {
  appClientId: string;
  markets?: string[] | null;
  dataSources?: string[] | null;
}

/** Parses `POST /admin/apps/:appClientId/narrow`. */
export function narrowAppCommand(appClientId: string, body: Body): NarrowAppCommand {
  if (body?.["markets"] === undefined && body?.["dataSources"] === undefined) {
    throw new AdminError("BAD_INPUT", "name markets or dataSources (a list, or [] for all the brand's)");
  }
  const narrowing = grantsOf(body);
  const replaced = (key: "markets" | "dataSources") =>
    body?.[key] === undefined ? {} : { [key]: narrowing[key]?.length ? narrowing[key] : null };
  return { appClientId, ...replaced("markets"), ...replaced("dataSources") };
}

/** Parses `POST /admin/grants` and `POST /admin/grants/remove`. */
export function changeGrantsCommand(body: Body): ChangeGrantsCommand {
  const brandId = brandIdOf(body?.["brandId"]);
  const grants = grantsOf(body);
  if (!grants.markets && !grants.dataSources) {
    throw new AdminError("BAD_INPUT", "name at least one market or data source");
  }
  return { brandId, grants };
}

/** Parses `POST /admin/fx`. */
export function loadFxCommand(body: Body): LoadFxCommand {
  return {
    path: pathOf(body?.["path"]),
    ignoreUnknownCurrencies: body?.["ignoreUnknownCurrencies"] === true,
  };
}

/** Parses `POST /admin/loads`. */
export function loadCommand(body: Body): LoadCommand {
  const brandId = brandIdOf(body?.["brandId"]);
  const path = pathOf(body?.["path"]);
  const format = body?.["format"];
  if (format !== undefined && !RECORDS_FILE_FORMATS.includes(format as RecordsFileFormat)) {
    throw new AdminError("BAD_INPUT", "format must be csv, ndjson or parquet");
  }
  const mapping = body?.["mapping"];
  if (
    mapping !== undefined &&
    (typeof mapping !== "object" ||
      mapping === null ||
      Object.values(mapping).some((value) => typeof value !== "string"))
  ) {
    throw new AdminError("BAD_INPUT", "mapping must map canonical column names to the file's column names");
  }
  const processingDate = dateOf("processingDate", body?.["processingDate"]);
  const replace = body?.["replace"];
  if (replace !== undefined && !REPLACE_SCOPES.includes(replace as ReplaceScope)) {
    throw new AdminError("BAD_INPUT", `replace must be ${REPLACE_SCOPES.join(" or ")}`);
  }
  return {
    brandId,
    path,
    ...(replace === undefined ? {} : { replace: replace as ReplaceScope }),
    ...(format ? { format: format as RecordsFileFormat } : {}),
    ...(mapping ? { mapping: mapping as Record<string, string> } : {}),
    ...(processingDate === undefined ? {} : { processingDate }),
  };
}

/** The query of `POST /admin/loads/upload`: the fields of `POST /admin/loads` but the path. */
export interface UploadQuery {
  brandId?: unknown;
  name?: unknown;
  format?: unknown;
  processingDate?: unknown;
  replace?: unknown;
  /** `canonical=fileColumn`, once per mapped column. */
  map?: unknown;
}

/** The file name an upload is stored under: its own name's safe characters (its extension tells the format). */
export function uploadFileName(query: UploadQuery): string {
  const name = typeof query.name === "string" ? query.name.replace(/^.*[\\/]/, "") : "";
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/.test(name) ? name : "upload";
}

/**
 * Parses the query of `POST /admin/loads/upload` into a load of the uploaded file, which will be
 * at `path`: checked before the body is read, so a bad query costs no upload.
 */
export function uploadCommand(query: UploadQuery, path: string): LoadCommand {
  const maps = query.map === undefined ? [] : Array.isArray(query.map) ? query.map : [query.map];
  const mapping: Record<string, string> = {};
  for (const entry of maps) {
    const match = typeof entry === "string" ? /^([^=]+)=(.+)$/.exec(entry) : null;
    if (!match) throw new AdminError("BAD_INPUT", "map must be canonical=fileColumn");
    mapping[match[1]!] = match[2]!;
  }
  const command = loadCommand({
    brandId: query.brandId,
    path,
    ...(query.format === undefined ? {} : { format: query.format }),
    ...(maps.length === 0 ? {} : { mapping }),
    ...(query.processingDate === undefined ? {} : { processingDate: query.processingDate }),
    ...(query.replace === undefined ? {} : { replace: query.replace }),
  });
  return { ...command, source: `upload ${uploadFileName(query)}` };
}

/** Parses `POST /admin/publishes`. */
export function publishCommand(body: Body): PublishCommand {
  const brandId = brandIdOf(body?.["brandId"]);
  const processingDate = dateOf("processingDate", body?.["processingDate"]);
  return { brandId, ...(processingDate === undefined ? {} : { processingDate }) };
}

function nameOf(value: unknown): string {
  if (typeof value !== "string" || value.trim() === "" || value.length > 200) {
    throw new AdminError("BAD_INPUT", "name must be a non-empty string of at most 200 characters");
  }
  return value;
}

/** Grant lists: ISO 3166-1 markets, lower-case data source ids; sorted, without duplicates. */
function grantsOf(body: Body): Partial<Grants> {
  const markets = listOf("markets", body?.["markets"], (value) => MARKET_CODES.has(value));
  const dataSources = listOf("dataSources", body?.["dataSources"], (value) => ID_PATTERN.test(value));
  return { ...(markets ? { markets } : {}), ...(dataSources ? { dataSources } : {}) };
}

function listOf(name: string, values: unknown, check: (value: string) => boolean): string[] | undefined {
  if (values === undefined || values === null) return undefined;
  if (!Array.isArray(values) || values.some((value) => typeof value !== "string" || !check(value))) {
    throw new AdminError("BAD_INPUT", `${name} must be a list of valid codes; got ${JSON.stringify(values)}`);
  }
  return [...new Set(values as string[])].sort();
}

function dateOf(name: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || !isCalendarDate(value)) {
    throw new AdminError(
      "BAD_INPUT",
      `${name} must be a real day written YYYY-MM-DD; got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function pathOf(value: unknown): string {
  if (typeof value !== "string" || !isAbsolute(value)) {
    throw new AdminError("BAD_INPUT", "path must be an absolute path of a file on the service's machine");
  }
  return value;
}
