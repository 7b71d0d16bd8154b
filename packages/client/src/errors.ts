/**
 * The SDK's one error class. `code` is a closed union: the service's `extensions.code` values
 * (docs/errors.md) plus the failures only a client can see (network, timeout, a refused token
 * request, an answer that breaks the contract).
 */

/** `extensions.code` values the service answers with (CONTRACT §3, docs/errors.md). */
export const SERVICE_ERROR_CODES = [
  "UNAUTHENTICATED",
  "FORBIDDEN",
  "RATE_LIMITED",
  "BAD_REQUEST",
  "NOT_FOUND",
  "SERVICE_UNAVAILABLE",
  "INTERNAL_SERVER_ERROR",
  "GRAPHQL_PARSE_FAILED",
  "GRAPHQL_VALIDATION_FAILED",
  "BAD_USER_INPUT",
  "DATE_RANGE_TOO_LONG",
  "INVALID_DATE_RANGE",
  "INVALID_PAGINATION",
  "TOO_MANY_SORT_ENTRIES",
  "INVALID_SORT_FIELD",
  "METRIC_NOT_REQUESTED",
  "UNSUPPORTED_CURRENCY",
  "QUERY_TOO_COMPLEX",
  "INVALID_DATA_VERSION",
] as const;

/** Codes raised by the SDK itself. */
export const CLIENT_ERROR_CODES = [
  /** The connection failed or was dropped, after every retry. */
  "NETWORK",
  /** A request got no complete answer within `timeoutMs`, after every retry. */
  "TIMEOUT",
  /** The token endpoint refused the request (RFC 6749 §5.2); `oauthError` holds its `error`. */
  "AUTH_FAILED",
  /** The answer broke the contract: not JSON, no `data`, no `pageInfo`, an unexpected status. */
  "PROTOCOL",
  /** The caller's `AbortSignal` fired. */
  "ABORTED",
  /** The options or the environment are wrong (missing variable, bad URL, bad date). */
  "INVALID_CONFIG",
  /** A window's data kept changing while it was walked (its `dataVersion` moved on every try). */
  "DATA_CHANGED",
  /** `waitUntilReady` reached its timeout with the data still `NOT_READY`. */
  "NOT_READY",
  /** The service answered with an `extensions.code` this SDK does not know; see `serviceCode`. */
  "UNKNOWN_ERROR",
] as const;

/** A service code. */
export type ServiceErrorCode = (typeof SERVICE_ERROR_CODES)[number];
/** Every `code` an {@link MdqClientError} can carry. */
export type MdqClientErrorCode = ServiceErrorCode | (typeof CLIENT_ERROR_CODES)[number];

/** One entry of a GraphQL response's `errors`. */
export interface GraphQLErrorEntry {
  message: string;
  extensions?: { code?: string; [key: string]: unknown };
  locations?: { line: number; column: number }[];
  path?: (string | number)[];
}

/** What an {@link MdqClientError} may carry besides its code and message. */
export interface MdqClientErrorDetails {
  /** HTTP status of the answer that caused it, if there was one. */
  status?: number;
  /** Every GraphQL error of the answer (the first one gave `code` and `message`). */
  errors?: GraphQLErrorEntry[];
  /** The raw `extensions.code` (or token endpoint `error`) as the service sent it. */
  serviceCode?: string;
  /** RFC 6749 `error` of a refused token request (`invalid_client`, ...). */
  oauthError?: string;
  /** `Retry-After` of the answer, in seconds. */
  retryAfterSeconds?: number;
  /** How many HTTP attempts were made before giving up. */
  attempts?: number;
  cause?: unknown;
}

const SERVICE_CODES: ReadonlySet<string> = new Set(SERVICE_ERROR_CODES);

/** Whether `code` is one of the service's `extensions.code` values. */
export function isServiceErrorCode(code: unknown): code is ServiceErrorCode {
  return typeof code === "string" && SERVICE_CODES.has(code);
}

/**
 * Every failure the SDK reports. Branch on `code`, never on `message`.
 * @example
 * try { await client.readiness(); }
 * catch (error) { if (error instanceof MdqClientError && error.code === "FORBIDDEN") ... }
 */
export class MdqClientError extends Error {
  override readonly name = "MdqClientError";
  readonly code: MdqClientErrorCode;
  readonly status: number | undefined;
  readonly errors: GraphQLErrorEntry[];
  readonly serviceCode: string | undefined;
  readonly oauthError: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly attempts: number | undefined;

  constructor(code: MdqClientErrorCode, message: string, details: MdqClientErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.status = details.status;
    this.errors = details.errors ?? [];
    this.serviceCode = details.serviceCode;
    this.oauthError = details.oauthError;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.attempts = details.attempts;
  }

  /**
   * The error for a GraphQL answer with `errors`: the first error's code and message, all attached.
   * @example throw MdqClientError.fromGraphQLErrors(body.errors, response.status);
   */
  static fromGraphQLErrors(errors: GraphQLErrorEntry[], status: number): MdqClientError {
    const first = errors[0];
    const raw = first?.extensions?.code;
    const code: MdqClientErrorCode = isServiceErrorCode(raw) ? raw : "UNKNOWN_ERROR";
    return new MdqClientError(code, first?.message ?? `the service answered ${status} with errors`, {
      status,
      errors,
      ...(typeof raw === "string" ? { serviceCode: raw } : {}),
    });
  }
}
