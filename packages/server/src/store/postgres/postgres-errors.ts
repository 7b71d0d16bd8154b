/**
 * Which PostgreSQL failures mean "the database cannot answer now" (the service answers 503 and
 * recovers by itself) rather than a bug or a bad statement. Messages are written here, from a
 * closed list, so that no connection string, host or password can reach a client or a log line.
 */
import { StoreUnavailableError } from "../model/store-errors.js";

/** Socket errors of a database that is down, restarting or unreachable. */
const NETWORK_CODES: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ECONNABORTED: "connection aborted",
  EPIPE: "connection closed",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
};

/** Errors node-postgres raises itself (no SQLSTATE) when a connection fails or is lost. */
const DRIVER_MESSAGES: readonly [RegExp, string][] = [
  [/^timeout exceeded when trying to connect$/, "no connection became free in time"],
  [/connection timeout/i, "connecting timed out"],
  [/^Connection terminated/, "connection terminated"],
  [/not queryable/, "connection lost"],
  [/^Query read timeout$/, "no answer in time"],
];

/** SQLSTATE classes and codes of an unavailable database (PostgreSQL Appendix A). */
function sqlStateReason(code: string): string | undefined {
  if (code === "57014") return "a statement ran past the statement timeout and was cancelled";
  if (code === "57P01") return "the server is shutting down";
  if (code === "57P02") return "the server crashed";
  if (code === "57P03") return "the server is not accepting connections yet";
  if (code === "57P04") return "the database was dropped";
  if (code === "57P05") return "the session timed out";
  if (code.startsWith("08")) return "connection failure";
  if (code === "53300") return "too many connections";
  if (code.startsWith("53")) return "the server is out of resources";
  return undefined;
}

/** Why `error` means the database is unavailable, or undefined when it means something else. */
export function unavailableReason(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    const network = NETWORK_CODES[code];
    if (network) return network;
    if (/^[0-9A-Z]{5}$/.test(code)) return sqlStateReason(code);
  }
  // Node reports a failed connection to every address of a host as one AggregateError.
  if (error instanceof AggregateError) {
    for (const inner of error.errors) {
      const reason = unavailableReason(inner);
      if (reason) return reason;
    }
  }
  for (const [pattern, reason] of DRIVER_MESSAGES) if (pattern.test(error.message)) return reason;
  return undefined;
}

/**
 * `error` as a `StoreUnavailableError` when the database is unavailable, else unchanged. The
 * original stays as `cause` for the operator's logs (driver messages name no password).
 */
export function storeError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return error;
  const reason = unavailableReason(error);
  if (reason === undefined) return error;
  return new StoreUnavailableError(`PostgreSQL is unavailable: ${reason}`, 5, { cause: error });
}
