/**
 * The service's error classes over the one error catalogue (`@mdq/contract`, docs/errors.md):
 * every error the service answers with has a catalogue code, with its HTTP status and whether its
 * message may be shown to the caller. Exactly one place turns these into HTTP responses,
 * `plugins/error-responses.ts` (RFC 6749 §5.2 bodies on the token endpoint, GraphQL-shaped
 * bodies elsewhere), with `graphql/error-formatting.ts` shaping the `errors` of GraphQL answers.
 */
import {
  ADMIN_ERROR_CODES,
  type AdminErrorCode,
  type ErrorCode,
  type ErrorEntry,
  GRAPHQL_ERROR_CODES,
  OAUTH_ERROR_CODES,
  type OAuthErrorCode,
} from "@mdq/contract";

/** The catalogue names the modules that answer with these errors use. */
export { type ErrorCode, GRAPHQL_ERROR_CODES, type OAuthErrorCode } from "@mdq/contract";

/**
 * The message of every 503 caused by the store not answering (SERVICE_UNAVAILABLE,
 * temporarily_unavailable, the admin API's UNAVAILABLE): fixed, because the store's own message
 * may name hosts or carry driver detail.
 */
export const STORE_UNAVAILABLE_MESSAGE =
  "the service cannot reach its database right now; retry after the number of seconds in Retry-After";

/** An error answered with the HTTP status of its catalogue entry. */
abstract class CataloguedError extends Error {
  readonly status: number;
  /** Extra response headers (e.g. `Retry-After`). */
  readonly headers: Readonly<Record<string, string>>;

  protected constructor(
    name: string,
    message: string,
    entry: ErrorEntry,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = name;
    this.status = entry.status;
    this.headers = headers;
  }
}

/** An error with a catalogue code; its message is safe to show to callers. */
export class MdqError extends CataloguedError {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super("MdqError", message, GRAPHQL_ERROR_CODES[code], headers);
    this.code = code;
  }
}

/** An RFC 6749 §5.2 error of the token endpoint. */
export class OAuthError extends CataloguedError {
  readonly error: OAuthErrorCode;

  constructor(error: OAuthErrorCode, description: string, headers: Record<string, string> = {}) {
    super("OAuthError", description, OAUTH_ERROR_CODES[error], headers);
    this.error = error;
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
export class AdminError extends CataloguedError {
  readonly code: AdminErrorCode;
  readonly details: readonly { line: number; column?: string; message: string }[] | undefined;

  constructor(
    code: AdminErrorCode,
    message: string,
    details?: { line: number; column?: string; message: string }[],
  ) {
    super("AdminError", message, ADMIN_ERROR_CODES[code]);
    this.code = code;
    this.details = details;
  }
}
