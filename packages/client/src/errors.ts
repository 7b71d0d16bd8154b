/**
 * The SDK's one error class. `code` is a closed union: the service's `extensions.code` values
 * (docs/errors.md) plus the failures only a client can see (network, timeout, a refused token
 * request, an answer that breaks the contract), both from the contract's catalogue.
 */
import {
  type ClientErrorCode,
  CLIENT_ERROR_CODES as CONTRACT_CLIENT_ERROR_CODES,
  type ErrorCode,
  GRAPHQL_ERROR_CODES,
  isErrorCode,
} from "@mdq/contract";

/** `extensions.code` values the service answers with (CONTRACT §3, docs/errors.md). */
export const SERVICE_ERROR_CODES = Object.freeze(Object.keys(GRAPHQL_ERROR_CODES) as ErrorCode[]);

/** Codes raised by the SDK itself (docs/errors.md, "Client SDK"). */
export const CLIENT_ERROR_CODES = Object.freeze(
  Object.keys(CONTRACT_CLIENT_ERROR_CODES) as ClientErrorCode[],
);

/** A service code. */
export type ServiceErrorCode = ErrorCode;
/** Every `code` an {@link MdqClientError} can carry. */
export type MdqClientErrorCode = ServiceErrorCode | ClientErrorCode;

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

/** Longest service message an error carries (a hostile answer could send megabytes). */
const MAX_SERVICE_MESSAGE = 2000;

/** Whether `code` is one of the service's `extensions.code` values. */
export const isServiceErrorCode: (code: unknown) => code is ServiceErrorCode = isErrorCode;

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
    // The message is the service's text: shown only when it is text, and never without bound.
    const message =
      typeof first?.message === "string" && first.message !== ""
        ? first.message.slice(0, MAX_SERVICE_MESSAGE)
        : `the service answered ${status} with errors`;
    return new MdqClientError(code, message, {
      status,
      errors,
      ...(typeof raw === "string" ? { serviceCode: raw } : {}),
    });
  }
}
