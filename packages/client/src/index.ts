/**
 * mdq-client: the SDK brands use for the daily sync (CONTRACT §5). It talks HTTP only and never
 * imports server code. The full SDK (token manager, paging iterators, retries) lands with the
 * client issue; this module already names the environment it reads.
 */

/** Environment variables the client reads its configuration and credentials from (never argv). */
export const CLIENT_ENV = {
  appClientId: "MDQ_APP_CLIENT_ID",
  appClientSecret: "MDQ_APP_CLIENT_SECRET",
  authUrl: "MDQ_AUTH_URL",
  baseUrl: "MDQ_BASE_URL",
  brandClientId: "MDQ_BRAND_CLIENT_ID",
} as const;
