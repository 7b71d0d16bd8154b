/**
 * mdq-client: the SDK brands use for the daily sync (CONTRACT §5). It talks HTTP only and never
 * imports server code. This module only re-exports; see each export's documentation.
 *
 * @example
 * import { MdqClient, clientConfigFromEnv } from "mdq-client";
 * const client = new MdqClient(clientConfigFromEnv(process.env));
 * await client.waitUntilReady({ interval: 60_000, timeout: 3_600_000 });
 * for await (const record of client.records({ from: "2026-01-01", to: "2026-11-21" })) console.log(record);
 */

export {
  DEFAULT_MAX_BODY_BYTES,
  DIMENSIONS,
  MdqClient,
  type MdqClientOptions,
  METRICS,
  RECORD_FIELDS,
} from "./client.js";
export {
  CLIENT_ENV,
  type ClientCredentialsConfig,
  clientConfigFromEnv,
  DEFAULT_SERVICE_URL,
  validateClientConfig,
} from "./config.js";
export * from "./date-windows.js";
export {
  CLIENT_ERROR_CODES,
  type GraphQLErrorEntry,
  isServiceErrorCode,
  MdqClientError,
  type MdqClientErrorCode,
  type MdqClientErrorDetails,
  SERVICE_ERROR_CODES,
  type ServiceErrorCode,
} from "./errors.js";
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./http-transport.js";
export {
  MIRROR_STATE_FILE,
  type MirrorOptions,
  type MirrorProgress,
  type MirrorSummary,
  mirror,
} from "./mirror.js";
export {
  type ExportOptions,
  type ExportResponse,
  type ExportResume,
  exportUrl,
} from "./record-export.js";
export {
  DEFAULT_RATE_LIMIT,
  parseRateLimitPolicy,
  parseRateLimitRemaining,
  RequestBudget,
  type RequestBudgetOptions,
  systemClock,
} from "./request-budget.js";
export {
  DEFAULT_MAX_REQUESTS_PER_DAY,
  DEFAULT_RUN_DEADLINE_MS_PER_DAY,
  RUN_DEADLINE_ALLOWANCE_MS,
  RUN_REQUEST_ALLOWANCE,
} from "./run-limits.js";
export { API_SCOPE } from "./token-manager.js";
export type * from "./types.js";
