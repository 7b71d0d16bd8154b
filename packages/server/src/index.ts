/** The MDQ service package: build a region's service, its store, and its configuration. */

export { type ErrorCode, GRAPHQL_ERROR_CODES, OAUTH_ERROR_CODES } from "@mdq/contract";
export { ADMIN_ADDRESS_FILE, ADMIN_TOKEN_FILE, ensureAdminToken } from "./admin/admin-token.js";
export type { AppView, BrandStatus } from "./admin/region-admin.js";
export { describeUnreadableDays } from "./admin/unreadable-days.js";
export { addDays, isCalendarDate, todayIn } from "./calendar.js";
export { CONFIG_ENV, ConfigError, type ConfigInput, loadConfig, type ServiceConfig } from "./config.js";
export { CURRENCIES, CURRENCY_CODES, type CurrencyCode, isCurrencyCode } from "./currencies.js";
export {
  type DemoCredentials,
  type DemoSeedOptions,
  holdsOnlyTheDemo,
  seedDemoRegion,
} from "./demo/demo-seed.js";
export { MdqError, OAuthError } from "./errors.js";
export { typeDefs } from "./graphql/schema.js";
export { MemoryRateLimiter, type RateLimiter } from "./limits/rate-limit.js";
export { generateAppClientId, generateAppSecret, hashAppSecret } from "./oauth/app-secrets.js";
export { type KeyInfo, KeyRing } from "./oauth/signing-keys.js";
export { buildService, type Service, type ServiceParts, startService } from "./server.js";
export { DUCKDB_FILE, DuckDbStore, openDuckDbStore } from "./store/duckdb/duckdb-store.js";
export {
  type App,
  type Brand,
  type BrandDirectory,
  type DataGeneration,
  type FxRate,
  type Grants,
  type KeyRingStore,
  keepsKeyRing,
  type LoadSummary,
  loadsParquet,
  type ParquetLoads,
  type RecordLoads,
  type RecordReads,
  type Store,
  type StoreConnection,
  type StoredRecord,
} from "./store/model/store.js";
export {
  MissingFxRateError,
  RecordIdConflictError,
  StoreUnavailableError,
} from "./store/model/store-errors.js";
export { migrateDatabase, type OpenStoreOptions, openStore } from "./store/open-store.js";
export {
  LATEST_SCHEMA_VERSION,
  MIGRATIONS,
  type Migration,
  migrationId,
} from "./store/postgres/migrations.js";
export { POSTGRES_SESSION_OPTIONS, type PostgresConnectionOptions } from "./store/postgres/postgres-pool.js";
export { openPostgresStore, PostgresStore, SchemaVersionError } from "./store/postgres/postgres-store.js";
