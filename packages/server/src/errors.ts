/**
 * The service's error classes over the one error catalogue (`@mdq/contract`, docs/errors.md):
 * every error the service answers with has a catalogue code, with its HTTP status and whether its
 * message may be shown to the caller. Exactly one place per protocol turns these into responses: `oauth/oauth-errors.ts` (RFC 6749 §5.2 bodies) and
 * `graphql/error-formatting.ts` (GraphQL `errors` with `extensions.code`).
 */
import {
  ADMIN_ERROR_CODES,
  type AdminErrorCode,
  type ErrorCode,
  GRAPHQL_ERROR_CODES,
  OAUTH_ERROR_CODES,
  type OAuthErrorCode,
} from "@mdq/contract";

export {
  ADMIN_ERROR_CODES,
  type AdminErrorCode,
  type ErrorCode,
  GRAPHQL_ERROR_CODES,
  OAUTH_ERROR_CODES,
  type OAuthErrorCode,
} from "@mdq/contract";

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
    this.status = OAUTH_ERROR_CODES[error].status;
    this.headers = headers;
  }
}

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
    this.status = ADMIN_ERROR_CODES[code].status;
    this.details = details;
  }
}
