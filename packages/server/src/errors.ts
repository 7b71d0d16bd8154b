/**
 * The one error catalogue of the service. Every error the service answers with has a code here,
 * with its HTTP status and whether its message may be shown to the caller. Exactly one place per
 * protocol turns these into responses: `oauth/oauth-errors.ts` (RFC 6749 §5.2 bodies) and
 * `graphql/error-formatting.ts` (GraphQL `errors` with `extensions.code`).
 */

/** Codes that appear in GraphQL `extensions.code` (CONTRACT §3). */
export const GRAPHQL_ERROR_CODES = {
  UNAUTHENTICATED: { status: 401, exposeMessage: true },
  FORBIDDEN: { status: 403, exposeMessage: true },
  RATE_LIMITED: { status: 429, exposeMessage: true },
  BAD_REQUEST: { status: 400, exposeMessage: true },
  NOT_FOUND: { status: 404, exposeMessage: true },
  SERVICE_UNAVAILABLE: { status: 503, exposeMessage: true },
  GRAPHQL_PARSE_FAILED: { status: 200, exposeMessage: true },
  GRAPHQL_VALIDATION_FAILED: { status: 200, exposeMessage: true },
  BAD_USER_INPUT: { status: 200, exposeMessage: true },
  DATE_RANGE_TOO_LONG: { status: 200, exposeMessage: true },
  INVALID_DATE_RANGE: { status: 200, exposeMessage: true },
  INVALID_PAGINATION: { status: 200, exposeMessage: true },
  TOO_MANY_SORT_ENTRIES: { status: 200, exposeMessage: true },
  INVALID_SORT_FIELD: { status: 200, exposeMessage: true },
  METRIC_NOT_REQUESTED: { status: 200, exposeMessage: true },
  UNSUPPORTED_CURRENCY: { status: 200, exposeMessage: true },
  QUERY_TOO_COMPLEX: { status: 200, exposeMessage: true },
  INVALID_DATA_VERSION: { status: 200, exposeMessage: true },
  INTERNAL_SERVER_ERROR: { status: 500, exposeMessage: false },
} as const satisfies Record<string, { status: number; exposeMessage: boolean }>;

/** A closed union of every GraphQL-side error code. */
export type ErrorCode = keyof typeof GRAPHQL_ERROR_CODES;

/** RFC 6749 §5.2 error codes the token endpoint answers with, and their statuses. */
export const OAUTH_ERROR_CODES = {
  invalid_request: 400,
  invalid_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  rate_limited: 429,
  not_found: 404,
  temporarily_unavailable: 503,
  server_error: 500,
} as const satisfies Record<string, number>;

export type OAuthErrorCode = keyof typeof OAUTH_ERROR_CODES;

/**
 * The message of every 503 caused by the store not answering (SERVICE_UNAVAILABLE,
 * temporarily_unavailable, the admin API's UNAVAILABLE): fixed, because the store's own message
 * may name hosts or carry driver detail.
 */
export const STORE_UNAVAILABLE_MESSAGE =
  "the service cannot reach its database right now; retry after the number of seconds in Retry-After";

/** An error with a catalogue code; its message is safe to show to callers. */
export class MdqError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra response headers (e.g. `Retry-After`). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = "MdqError";
    this.code = code;
    this.status = GRAPHQL_ERROR_CODES[code].status;
    this.headers = headers;
  }
}

/** An RFC 6749 §5.2 error of the token endpoint. */
export class OAuthError extends Error {
  readonly error: OAuthErrorCode;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(error: OAuthErrorCode, description: string, headers: Record<string, string> = {}) {
    super(description);
    this.name = "OAuthError";
    this.error = error;
    this.status = OAUTH_ERROR_CODES[error];
    this.headers = headers;
  }
}

/** Codes of the admin API (docs/admin-api.md), with their statuses. */
export const ADMIN_ERROR_CODES = {
  BAD_INPUT: 400,
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  CONFLICT: 409,
  INVALID_FILE: 422,
  INTERNAL: 500,
  UNAVAILABLE: 503,
} as const satisfies Record<string, number>;

export type AdminErrorCode = keyof typeof ADMIN_ERROR_CODES;

/** One problem of a rejected file: `line` counts lines of a text file, or rows of a Parquet file (`position`). */
export interface AdminErrorDetail {
  line: number;
  position?: "line" | "row";
  column?: string;
  message: string;
}

/** An error of the admin API; its message (and details) are shown to the operator. */
export class AdminError extends Error {
  readonly code: AdminErrorCode;
  readonly status: number;
  readonly details: readonly { line: number; column?: string; message: string }[] | undefined;

  constructor(
    code: AdminErrorCode,
    message: string,
    details?: { line: number; column?: string; message: string }[],
  ) {
    super(message);
    this.name = "AdminError";
    this.code = code;
    this.status = ADMIN_ERROR_CODES[code];
    this.details = details;
  }
}
