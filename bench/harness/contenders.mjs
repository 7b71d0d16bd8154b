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
    start: (context) =>
      startOnFreePort(context, {
        name: "yoga",
        args: (port) => [script("yoga.mjs"), "--data", context.dataDirs.yoga, "--port", port],
        env: mdqEnv(context.authUrl),
        readyPath: "/health",
      }),
  },
  postgraphile: {
    label: "PostGraphile v5 (Node 24)",
    store: "postgres",
    kind: "postgraphile",
    start: (context) =>
      startOnFreePort(context, {
        name: "postgraphile",
        command: context.postgres.node24,
        args: (port) => [script("postgraphile.mjs"), "--port", port],
        env: { BENCH_DATABASE_URL: context.postgres.databaseUrl },
        readyPath: "/graphql",
      }),
  },
  oidc: {
    label: "node-oidc-provider",
    store: null,
    kind: "oidc",
    start(context) {
      const app = context.credentials.duckdb.apps[0];
      return startOnFreePort(context, {
        name: "oidc",
        args: (port) => [
          script("oidc.mjs"),
          "--port",
          port,
          "--client-id",
          app.appClientId,
          "--audience",
          context.authUrl,
        ],
        env: { BENCH_CLIENT_SECRET: app.appClientSecret },
        readyPath: "/.well-known/openid-configuration",
      });
    },
  },
};

/** `mdq serve` on the contender's data directory with `env` over the shared settings. */
async function startMdq(context, name, env) {
  return startOnFreePort(context, {
    name,
    args: (port) => [
      // --profile: a CPU profile of the server, written when it stops (SIGTERM ends it cleanly).
      ...(context.profile ? ["--cpu-prof", `--cpu-prof-dir=${context.profile}`] : []),
      MDQ,
      "serve",
      "--port",
      port,
      "--data",
      context.dataDirs[name],
    ],
    env: mdqEnv(context.authUrl, { MDQ_ADMIN_PORT: String(await freePort()), ...env }),
    readyPath: "/livez",
  });
}

async function startBare(context, mode) {
  const name = `bare-${mode}`;
  return startOnFreePort(context, {
    name,
    args: (port) => [script("bare.mjs"), "--data", context.dataDirs[name], "--port", port, "--mode", mode],
    env: {},
    readyPath: "/livez",
  });
}

/**
 * Starts contender `name` on a free loopback port (`args` given the port), its log in the run's
 * log directory; it is ready when `readyPath` answers. Returns the running process and its URL.
 */
async function startOnFreePort(context, { name, command = process.execPath, args, env, readyPath }) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const running = await startContender({
    name,
    command,
    args: args(String(port)),
    env,
    readyUrl: `${url}${readyPath}`,
    logDir: context.logDir,
  });
  return { ...running, url };
}
