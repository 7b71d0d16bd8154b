/**
 * The one error catalogue of MDQ (docs/errors.md): every code the service, its admin API and the
 * client SDK answer with, each with its HTTP status and whether its message is shown to callers.
 * Server error classes and the client's `MdqClientError` take their codes from here.
 */

/** One catalogue entry: the HTTP status the code is answered with, and whether its message is shown. */
export interface ErrorEntry {
  readonly status: number;
  readonly exposeMessage: boolean;
}

const shown = (status: number) => ({ status, exposeMessage: true }) as const;

/** Codes of GraphQL `extensions.code` (CONTRACT §3). BAD_REQUEST's 405/413/415 are documented variants. */
export const GRAPHQL_ERROR_CODES = Object.freeze({
  UNAUTHENTICATED: shown(401),
  FORBIDDEN: shown(403),
  RATE_LIMITED: shown(429),
  BAD_REQUEST: shown(400),
  NOT_FOUND: shown(404),
  SERVICE_UNAVAILABLE: shown(503),
  GRAPHQL_PARSE_FAILED: shown(200),
  GRAPHQL_VALIDATION_FAILED: shown(200),
  BAD_USER_INPUT: shown(200),
  DATE_RANGE_TOO_LONG: shown(200),
  INVALID_DATE_RANGE: shown(200),
  INVALID_PAGINATION: shown(200),
  TOO_MANY_SORT_ENTRIES: shown(200),
  INVALID_SORT_FIELD: shown(200),
  METRIC_NOT_REQUESTED: shown(200),
  UNSUPPORTED_CURRENCY: shown(200),
  QUERY_TOO_COMPLEX: shown(200),
  INVALID_DATA_VERSION: shown(200),
  /** The export's `dataVersion` (with `after`) is no longer the range's: start the export again. */
  DATA_VERSION_GONE: shown(409),
  /** The export's resume (`resume=` with `after`) asks another query than the response it continues. */
  RESUME_MISMATCH: shown(409),
  INTERNAL_SERVER_ERROR: { status: 500, exposeMessage: false },
} as const satisfies Record<string, ErrorEntry>);
/** A GraphQL `extensions.code`. */
export type ErrorCode = keyof typeof GRAPHQL_ERROR_CODES;

/** RFC 6749 §5.2 `error` codes of the token endpoint; `server_error` hides its cause. */
export const OAUTH_ERROR_CODES = Object.freeze({
  invalid_request: shown(400),
  invalid_client: shown(400),
  unsupported_grant_type: shown(400),
  invalid_scope: shown(400),
  rate_limited: shown(429),
  not_found: shown(404),
  temporarily_unavailable: shown(503),
  server_error: { status: 500, exposeMessage: false },
} as const satisfies Record<string, ErrorEntry>);
/** An RFC 6749 §5.2 `error` of the token endpoint. */
export type OAuthErrorCode = keyof typeof OAUTH_ERROR_CODES;

/** Codes of the admin API (`{"error": {"code", "message"}}`); `INTERNAL` hides its cause. */
export const ADMIN_ERROR_CODES = Object.freeze({
  BAD_INPUT: shown(400),
  UNAUTHORIZED: shown(401),
  NOT_FOUND: shown(404),
  CONFLICT: shown(409),
  INVALID_FILE: shown(422),
  INTERNAL: { status: 500, exposeMessage: false },
  UNAVAILABLE: shown(503),
} as const satisfies Record<string, ErrorEntry>);
/** A code of the admin API. */
export type AdminErrorCode = keyof typeof ADMIN_ERROR_CODES;

/**
 * Codes only the client SDK raises: no HTTP answer carries them (status 0), and their messages
 * are the SDK's own, always shown.
 */
export const CLIENT_ERROR_CODES = Object.freeze({
  /** The connection failed or was dropped, after every retry. */
  NETWORK: shown(0),
  /** A request got no complete answer within `timeoutMs`, after every retry. */
  TIMEOUT: shown(0),
  /** The token endpoint refused the request (RFC 6749 §5.2); `oauthError` holds its `error`. */
  AUTH_FAILED: shown(0),
  /** The answer broke the contract: not JSON, no `data`, no `pageInfo`, an unexpected status. */
  PROTOCOL: shown(0),
  /** The caller's `AbortSignal` fired. */
  ABORTED: shown(0),
  /** The options or the environment are wrong (missing variable, bad URL, bad date). */
  INVALID_CONFIG: shown(0),
  /** A window's data kept changing while it was walked (its `dataVersion` moved on every try). */
  DATA_CHANGED: shown(0),
  /** `waitUntilReady` reached its timeout with the data still `NOT_READY`. */
  NOT_READY: shown(0),
  /** The service answered with an `extensions.code` the SDK does not know; see `serviceCode`. */
  UNKNOWN_ERROR: shown(0),
  /**
   * An answer failed the SDK's validation (wrong types, a date outside the asked range or listed
   * twice, counts that do not add up, a body over `maxBodyBytes`, more requests than the range
   * needs): the server's fault, and nothing was written.
   */
  SERVER_ANSWER_INVALID: shown(0),
  /**
   * `mirror` refused to touch the directory: it is not empty and not a mirror (`--force`), its
   * state file is not one the SDK wrote, or the service listed no days for a mirror that holds
   * rows (`--allow-empty`).
   */
  MIRROR_REFUSED: shown(0),
} as const satisfies Record<string, ErrorEntry>);
/** A code only the client SDK raises. */
export type ClientErrorCode = keyof typeof CLIENT_ERROR_CODES;

/** Whether `code` is a GraphQL `extensions.code` of the catalogue. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && Object.hasOwn(GRAPHQL_ERROR_CODES, code);
}
