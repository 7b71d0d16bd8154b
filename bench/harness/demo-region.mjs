// The demo region a bench measures: `mdq demo --seed-only` into a DuckDB data directory, the rows
// it holds, and a real token of each demo app from a running MDQ's token endpoint.
import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { DUCKDB_FILE, KeyRing } from "../../packages/server/dist/src/index.js";
import { TOKEN_LIFETIME_SECONDS } from "../../packages/server/dist/src/oauth/access-token.js";
import { mdqMain } from "./demo-service.mjs";

/** The arguments of `mdq demo --seed-only` seeding `scale` and `days` into `dataDir`. */
export function seedOnlyArgs({ dataDir, credentialsFile, scale, days }) {
  return [
    "demo",
    "--seed-only",
    "--scale",
    String(scale),
    "--days",
    String(days),
    "--data",
    dataDir,
    "--credentials",
    credentialsFile,
  ];
}

/**
 * `mdq demo --seed-only --scale <scale> --days <days>` into `dataDir` (DuckDB, whatever the
 * caller's shell says); returns the credentials it wrote to `credentialsFile`.
 */
export async function seedDuckDb({ dataDir, credentialsFile, scale, days }) {
  const result = spawnSync(
    process.execPath,
    [mdqMain, ...seedOnlyArgs({ dataDir, credentialsFile, scale, days })],
    { encoding: "utf8", env: { ...process.env, MDQ_LOG_LEVEL: "warn", MDQ_DATABASE_URL: "" } },
  );
  if (result.status !== 0) throw new Error(`mdq demo failed: ${result.stderr}`);
  // The signing keys are made now, so that every copy (MDQ's and yoga's) holds the same ones.
  await KeyRing.open(dataDir, TOKEN_LIFETIME_SECONDS);
  return JSON.parse(await readFile(credentialsFile, "utf8"));
}

/** Rows in the records table of the DuckDB store in `dataDir` (opened read-only). */
export async function countRows(dataDir) {
  const instance = await DuckDBInstance.create(join(dataDir, DUCKDB_FILE), { access_mode: "READ_ONLY" });
  const connection = await instance.connect();
  const rows = Number(
    (await connection.runAndReadAll("SELECT count(*) AS n FROM records")).getRowObjectsJS()[0].n,
  );
  connection.closeSync();
  instance.closeSync();
  return rows;
}

/** A token of `app` from the token endpoint of a running MDQ at `url`. */
export async function tokenOf(url, app) {
  const basic = Buffer.from(`${app.appClientId}:${app.appClientSecret}`).toString("base64");
  const response = await fetch(`${url}/oauth2/token`, {
    method: "POST",
    headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
    body: "grant_type=client_credentials&scope=api_data%2Fread",
  });
  if (response.status !== 200)
    throw new Error(`token for ${app.appClientId}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()).access_token;
}

/** A token of each app from a running MDQ, keyed by app client id (credentials order). */
export async function tokensOf(url, credentials) {
  const tokens = {};
  for (const app of credentials.apps) tokens[app.appClientId] = await tokenOf(url, app);
  return tokens;
}
