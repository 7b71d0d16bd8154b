/**
 * `mdq-client`'s exit codes (docs/daily-sync.md): what a scheduler branches on. Each failure the
 * SDK reports (`MdqClientError.code`) maps to exactly one of them.
 */
import { CommanderError } from "commander";
import { MdqClientError, type MdqClientErrorCode } from "../errors.js";
import { SyncLockedError } from "../sync-lock.js";
import { UsageError } from "./cli-options.js";

export const EXIT = {
  /** Done: every record is in the output file (or the answer was printed). */
  OK: 0,
  /** An unexpected failure: a bug, a broken answer, a file that cannot be written. */
  FAILURE: 1,
  /** Bad flags or values, or a missing/invalid MDQ_* environment variable. */
  USAGE: 2,
  /** `--wait-ready` reached `--timeout` with the data still NOT_READY. */
  NOT_READY: 3,
  /** The credentials were refused (token endpoint `invalid_client`, or 401 after a fresh token). */
  AUTH: 4,
  /** 403 FORBIDDEN: the brand is not the app's, or a filter names a market/source outside the grants. */
  FORBIDDEN: 5,
  /** Rate limited, unavailable or unreachable after every retry: run again later. */
  UNAVAILABLE: 6,
  /**
   * The service refused the query (a query-level code such as DATE_RANGE_TOO_LONG): the flags'
   * fault, but for UNSUPPORTED_CURRENCY of the stored records' currency, which only the operator
   * can fix (docs/daily-sync.md).
   */
  INVALID_QUERY: 7,
  /** An answer failed validation (SERVER_ANSWER_INVALID): the server's fault; nothing was written. */
  SERVER_ANSWER_INVALID: 8,
  /** `mirror` refused to touch its directory (MIRROR_REFUSED): see `--force` and `--allow-empty`. */
  MIRROR_REFUSED: 9,
  /** Stopped by SIGINT (Ctrl-C); a sync resumes from its checkpoint when run again. */
  INTERRUPTED: 130,
  /** Stopped by SIGTERM; likewise resumable. */
  TERMINATED: 143,
} as const;

const BY_CODE: Record<MdqClientErrorCode, number> = {
  UNAUTHENTICATED: EXIT.AUTH,
  AUTH_FAILED: EXIT.AUTH,
  FORBIDDEN: EXIT.FORBIDDEN,
  RATE_LIMITED: EXIT.UNAVAILABLE,
  SERVICE_UNAVAILABLE: EXIT.UNAVAILABLE,
  INTERNAL_SERVER_ERROR: EXIT.UNAVAILABLE,
  NETWORK: EXIT.UNAVAILABLE,
  TIMEOUT: EXIT.UNAVAILABLE,
  DATA_CHANGED: EXIT.UNAVAILABLE,
  DATA_VERSION_GONE: EXIT.UNAVAILABLE,
  // The client repeats its own request's parameters: a mismatch is a bug of the client.
  RESUME_MISMATCH: EXIT.FAILURE,
  BAD_REQUEST: EXIT.INVALID_QUERY,
  GRAPHQL_PARSE_FAILED: EXIT.INVALID_QUERY,
  GRAPHQL_VALIDATION_FAILED: EXIT.INVALID_QUERY,
  BAD_USER_INPUT: EXIT.INVALID_QUERY,
  DATE_RANGE_TOO_LONG: EXIT.INVALID_QUERY,
  INVALID_DATE_RANGE: EXIT.INVALID_QUERY,
  INVALID_PAGINATION: EXIT.INVALID_QUERY,
  TOO_MANY_SORT_ENTRIES: EXIT.INVALID_QUERY,
  INVALID_SORT_FIELD: EXIT.INVALID_QUERY,
  METRIC_NOT_REQUESTED: EXIT.INVALID_QUERY,
  UNSUPPORTED_CURRENCY: EXIT.INVALID_QUERY,
  QUERY_TOO_COMPLEX: EXIT.INVALID_QUERY,
  INVALID_DATA_VERSION: EXIT.INVALID_QUERY,
  INVALID_CONFIG: EXIT.USAGE,
  NOT_READY: EXIT.NOT_READY,
  NOT_FOUND: EXIT.FAILURE,
  PROTOCOL: EXIT.FAILURE,
  SERVER_ANSWER_INVALID: EXIT.SERVER_ANSWER_INVALID,
  MIRROR_REFUSED: EXIT.MIRROR_REFUSED,
  UNKNOWN_ERROR: EXIT.FAILURE,
  ABORTED: EXIT.INTERRUPTED,
};

/** The exit code for an error thrown by a command. */
export function exitCodeOf(error: unknown, signal?: NodeJS.Signals): number {
  if (signal === "SIGTERM") return EXIT.TERMINATED;
  if (signal === "SIGINT") return EXIT.INTERRUPTED;
  if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
  if (error instanceof UsageError) return EXIT.USAGE;
  if (error instanceof SyncLockedError) return EXIT.FAILURE;
  if (error instanceof MdqClientError) return BY_CODE[error.code] ?? EXIT.FAILURE;
  return EXIT.FAILURE;
}

/** The table `--help` ends with. */
export const EXIT_CODES_HELP = `
Exit codes:
  0  done
  1  unexpected failure (a bug, a broken answer, an output file that cannot be written,
     another sync to the same --out still running)
  2  usage: bad flags or values, or a missing/invalid MDQ_* environment variable
  3  not ready: --wait-ready reached --timeout with the data still NOT_READY
  4  authentication failed: the credentials were refused (invalid_client, UNAUTHENTICATED)
  5  forbidden: the brand or a filtered market/data source is outside the app's grants
  6  rate limited, unavailable or unreachable after every retry: run again later
  7  invalid query: the service refused the query (DATE_RANGE_TOO_LONG, UNSUPPORTED_CURRENCY, ...):
     fix the flags; but UNSUPPORTED_CURRENCY naming "the currency of the brand's stored records"
     is no flag's fault: only the operator can load the missing FX rates, contact them
  8  server answer invalid: an answer failed validation (wrong types, dates outside the range,
     counts that do not add up, an answer over MDQ_CLIENT_MAX_ANSWER_BYTES, more requests than
     the range needs); nothing was written
  9  mirror refused: --dir is not empty and not a mirror (--force), or the service listed no
     days for a mirror that holds rows (--allow-empty)
  130/143  interrupted by SIGINT/SIGTERM: run the same sync again to resume

Environment (credentials are never read from flags):
  MDQ_APP_CLIENT_ID, MDQ_APP_CLIENT_SECRET  the app's credentials
  MDQ_BRAND_CLIENT_ID                       the brand to query
  MDQ_AUTH_URL, MDQ_BASE_URL                the region's addresses (default http://localhost:4000)
`;
