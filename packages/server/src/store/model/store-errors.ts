/**
 * Every error a store raises on purpose, in one module, each with a stable `code` (as jose's
 * `util/errors.ts`): callers branch on the class or the code, never on a message. An error that is
 * an answer (`answersRequest`: a missing FX rate, a load's clashing record ids) is told apart from a
 * failure by `isExpectedStoreError`.
 */

/** The codes of store errors. */
export type StoreErrorCode =
  | "ERR_MISSING_FX_RATE"
  | "ERR_RECORD_ID_CONFLICT"
  | "ERR_STORE_UNAVAILABLE"
  | "ERR_SCHEMA_VERSION";

/** What every store error has: its code, and whether it answers a request rather than failing it. */
export abstract class StoreError extends Error {
  abstract readonly code: StoreErrorCode;
  /** An answer (the caller gets a documented error), not a failure of the store. */
  readonly answersRequest: boolean = false;
}

/** Raised by a store when a conversion needs a rate that does not exist (rule 7). */
export class MissingFxRateError extends StoreError {
  readonly code = "ERR_MISSING_FX_RATE";
  override readonly answersRequest = true;

  constructor(
    readonly currency: string,
    readonly date: string,
  ) {
    super(`no FX rate for ${currency} on or before ${date}`);
    this.name = "MissingFxRateError";
  }
}

/** Raised by a load whose record ids already name records on days the load does not replace. */
export class RecordIdConflictError extends StoreError {
  readonly code = "ERR_RECORD_ID_CONFLICT";
  override readonly answersRequest = true;

  constructor(readonly clashes: { recordId: string; keptDay: string }[]) {
    super(
      `record_id already used on a day this load does not replace: ${clashes
        .map((clash) => `${clash.recordId} (${clash.keptDay})`)
        .join(", ")}`,
    );
    this.name = "RecordIdConflictError";
  }
}

/**
 * Raised by a store that cannot answer now: its database is down, unreachable, or a statement ran
 * past its timeout. The service answers 503 with `Retry-After` (SERVICE_UNAVAILABLE /
 * temporarily_unavailable) and recovers by itself once the database answers again.
 */
export class StoreUnavailableError extends StoreError {
  readonly code = "ERR_STORE_UNAVAILABLE";

  constructor(
    message: string,
    readonly retryAfterSeconds = 5,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}

/** Raised when a PostgreSQL schema is not the version this release needs (`mdq migrate`). */
export class SchemaVersionError extends StoreError {
  readonly code = "ERR_SCHEMA_VERSION";

  constructor(
    readonly found: number,
    readonly expected: number,
  ) {
    super(
      found < expected
        ? `the PostgreSQL schema is at version ${found}, this release needs ${expected}: run \`mdq migrate\` first`
        : `the PostgreSQL schema is at version ${found}, newer than this release knows (${expected}): upgrade mdq`,
    );
    this.name = "SchemaVersionError";
  }
}

/** Whether `error` is a store error that answers a request (not a failure of the store). */
export function isExpectedStoreError(error: unknown): boolean {
  return error instanceof StoreError && error.answersRequest;
}

/** A currency and day whose conversion lacks a rate (CONTRACT §3 rule 7). */
export interface MissingRate {
  currency: string;
  date: string;
}

export function missingRateError(missing: MissingRate): MissingFxRateError {
  return new MissingFxRateError(missing.currency, missing.date);
}
