/**
 * MDQ's shared test support: real PostgreSQL and Redis, seeded regions (in-process, shared by
 * several instances, or listening on a port), TCP faults, nginx, `mdq` and `mdq-client` processes,
 * HTTP calls and calendar days. One copy for the server's, the CLI's and the client's tests.
 */

export { APP_VIEW_KEYS } from "./app-view.js";
export { CHROMIUM, startChromium, type TestBrowser } from "./chromium.js";
export {
  CLI_MAIN,
  type CliRun,
  cliEnv,
  killWhen,
  readJson,
  runCli,
  serviceQuery,
  startCli,
} from "./client-cli.js";
export { addDays, daysAgo, utcToday } from "./dates.js";
export {
  type Fault,
  type FaultProxy,
  graphqlError,
  type ResponseHook,
  type SeenRequest,
  startFaultProxy,
  unauthenticated,
} from "./fault-proxy.js";
export { freePort } from "./free-port.js";
export { graphqlCall, type HttpAnswer, type HttpCall, httpCall, tokenCall } from "./http-call.js";
export {
  type AppCredentials,
  basicOf,
  graphqlOn,
  type RawPost,
  rawPost,
  requestToken,
  TOKEN_REQUEST_BODY,
  tokenFrom,
} from "./inject-calls.js";
export { environment, MDQ, type MdqResult, runMdq, type ServeProcess, startServe } from "./mdq-process.js";
export { assertSameMirrorFiles, mirrorFiles } from "./mirror-files.js";
export { NGINX, type Nginx, nginxConfig, startNginx } from "./nginx.js";
export {
  PGBOUNCER,
  PGBOUNCER_CONNECT_QUERY,
  type PgBouncer,
  type PooledServer,
  startPgBouncer,
} from "./pgbouncer.js";
export {
  connectTo,
  createMigratedDatabase,
  createTestDatabase,
  type DatabaseAndDir,
  POSTGRES_HOST,
  POSTGRES_PORT,
  POSTGRES_USER,
  type TestDatabase,
  useDatabaseAndDir,
} from "./postgres.js";
export {
  type PairServer,
  POSTGRES_BIN,
  type Standby,
  type StandbyPair,
  startStandbyPair,
} from "./postgres-standby.js";
export {
  deleteKeys,
  REDIS_HOST,
  REDIS_PORT,
  REDIS_URL,
  testRedisClient,
  UNREACHABLE_REDIS_URL,
  uniqueRegion,
} from "./redis.js";
export { type ClientConnection, type RunningService, startService } from "./running-service.js";
export { mulberry32 } from "./seeded-random.js";
export { type SeededRegion, type SeedOptions, seedRegion } from "./seeded-region.js";
export {
  adminCall,
  type SharedRegion,
  type SharedRegionOptions,
  startSharedRegion,
} from "./shared-region.js";
export { type GateState, startTcpGate, type TcpGate } from "./tcp-gate.js";
export {
  appOf,
  type GraphQLResponse,
  type SuiteRegion,
  startTestRegion,
  type TestRegion,
  type TestRegionOptions,
  useTestRegion,
} from "./test-region.js";
export { within } from "./wait.js";
