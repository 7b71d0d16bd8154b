// The contenders: what each one is, how it is started (a child process on its own port), and
// how it is asked each kind of question. Every contender reads its own copy of the same data.
import { freePort, startContender } from "./processes.mjs";

const MDQ = new URL("../../packages/cli/bin/mdq.cjs", import.meta.url).pathname;
const script = (name) => new URL(`../contenders/${name}`, import.meta.url).pathname;

/** Service settings MDQ and graphql-yoga share, so that a token from MDQ verifies at yoga too. */
export function mdqEnv(authUrl, extra = {}) {
  return {
    MDQ_LOG_LEVEL: "warn",
    // The rate limit is configured out of the way of the load client (one IP, many requests).
    MDQ_RATE_LIMIT_MAX: "1000000000",
    MDQ_AUTH_URL: authUrl,
    MDQ_BASE_URL: authUrl,
    // Nothing from the caller's shell: DuckDB and the in-memory limiter unless `extra` says otherwise.
    MDQ_DATABASE_URL: "",
    MDQ_REDIS_URL: "",
    ...extra,
  };
}

/**
 * Each contender: `label` (the table's), `store` it reads, `kind` of server (which requests it
 * takes), and `start(context)` resolving to a running process with `url`.
 */
export const CONTENDERS = {
  "mdq-duckdb": {
    label: "MDQ (DuckDB)",
    store: "duckdb",
    kind: "mdq",
    start: (context) => startMdq(context, "mdq-duckdb", {}),
  },
  "mdq-duckdb-nocache": {
    label: "MDQ (DuckDB), no page cache",
    store: "duckdb",
    kind: "mdq",
    start: (context) => startMdq(context, "mdq-duckdb-nocache", { MDQ_PAGE_CACHE_MB: "0" }),
  },
  "mdq-postgres": {
    label: "MDQ (PostgreSQL)",
    store: "postgres",
    kind: "mdq",
    start: (context) => startMdq(context, "mdq-postgres", { MDQ_DATABASE_URL: context.postgres.databaseUrl }),
  },
  "mdq-postgres-nocache": {
    label: "MDQ (PostgreSQL), no page cache",
    store: "postgres",
    kind: "mdq",
    start: (context) =>
      startMdq(context, "mdq-postgres-nocache", {
        MDQ_DATABASE_URL: context.postgres.databaseUrl,
        MDQ_PAGE_CACHE_MB: "0",
      }),
  },
  "bare-memory": {
    label: "bare: rows in memory",
    store: "duckdb",
    kind: "bare",
    start: (context) => startBare(context, "memory"),
  },
  "bare-sql": {
    label: "bare: same SQL, no GraphQL",
    store: "duckdb",
    kind: "bare",
    start: (context) => startBare(context, "sql"),
  },
  yoga: {
    label: "graphql-yoga, plain resolvers",
    store: "duckdb",
    kind: "graphql",
    async start(context) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const running = await startContender({
        name: "yoga",
        command: process.execPath,
        args: [script("yoga.mjs"), "--data", context.dataDirs.yoga, "--port", String(port)],
        env: mdqEnv(context.authUrl),
        readyUrl: `${url}/health`,
        logDir: context.logDir,
      });
      return { ...running, url };
    },
  },
  postgraphile: {
    label: "PostGraphile v5 (Node 24)",
    store: "postgres",
    kind: "postgraphile",
    async start(context) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const running = await startContender({
        name: "postgraphile",
        command: context.postgres.node24,
        args: [script("postgraphile.mjs"), "--port", String(port)],
        env: { BENCH_DATABASE_URL: context.postgres.databaseUrl },
        readyUrl: `${url}/graphql`,
        logDir: context.logDir,
      });
      return { ...running, url };
    },
  },
  oidc: {
    label: "node-oidc-provider",
    store: null,
    kind: "oidc",
    async start(context) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const app = context.credentials.duckdb.apps[0];
      const running = await startContender({
        name: "oidc",
        command: process.execPath,
        args: [
          script("oidc.mjs"),
          "--port",
          String(port),
          "--client-id",
          app.appClientId,
          "--audience",
          context.authUrl,
        ],
        env: { BENCH_CLIENT_SECRET: app.appClientSecret },
        readyUrl: `${url}/.well-known/openid-configuration`,
        logDir: context.logDir,
      });
      return { ...running, url };
    },
  },
};

/** `mdq serve` on the contender's data directory with `env` over the shared settings. */
async function startMdq(context, name, env) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const running = await startContender({
    name,
    command: process.execPath,
    args: [
      // --profile: a CPU profile of the server, written when it stops (SIGTERM ends it cleanly).
      ...(context.profile ? ["--cpu-prof", `--cpu-prof-dir=${context.profile}`] : []),
      MDQ,
      "serve",
      "--port",
      String(port),
      "--data",
      context.dataDirs[name],
    ],
    env: mdqEnv(context.authUrl, { MDQ_ADMIN_PORT: String(await freePort()), ...env }),
    readyUrl: `${url}/livez`,
    logDir: context.logDir,
  });
  return { ...running, url };
}

async function startBare(context, mode) {
  const name = `bare-${mode}`;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const running = await startContender({
    name,
    command: process.execPath,
    args: [script("bare.mjs"), "--data", context.dataDirs[name], "--port", String(port), "--mode", mode],
    env: {},
    readyUrl: `${url}/livez`,
    logDir: context.logDir,
  });
  return { ...running, url };
}
