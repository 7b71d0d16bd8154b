/** The keys of an app as the admin API and `mdq app` show it, sorted: never its secret hashes. */
export const APP_VIEW_KEYS = [
  "appClientId",
  "brandId",
  "createdAt",
  "dataSources",
  "markets",
  "name",
  "previousSecretExpiresAt",
  "revokedAt",
] as const;
