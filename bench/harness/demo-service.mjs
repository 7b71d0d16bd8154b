// A seeded demo service for the client benchmarks: `mdq demo --seed-only` into a fresh folder,
// then `mdq serve` on free ports, waited for until /livez answers.
import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./processes.mjs";

const MDQ = new URL("../../packages/cli/bin/mdq.cjs", import.meta.url).pathname;

/** The path of the operator CLI's entry point (`mdq`). */
export const mdqMain = MDQ;

/** The ISO day `n` days after `day` (negative `n`: before). */
export const addDays = (day, n) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/**
 * Seeds the demo brand (`scale`, optional `days`) into a new temporary folder named `prefix` and
 * serves it; `env` adds variables to the server's environment. Returns the folder, the served
 * port and base URL, the seeded credentials, the seeding time and the server process.
 */
export async function startDemoService({ prefix, scale, days, env = {} }) {
  const work = await mkdtemp(join(tmpdir(), prefix));
  const dataDir = join(work, "data");
  const credentialsFile = join(work, "credentials.json");
  const seedArgs = ["--scale", scale, ...(days === undefined ? [] : ["--days", days])];
  const seedStarted = performance.now();
  const seed = spawnSync(
    process.execPath,
    [MDQ, "demo", "--seed-only", ...seedArgs, "--data", dataDir, "--credentials", credentialsFile],
    { encoding: "utf8", env: { ...process.env, MDQ_LOG_LEVEL: "warn" } },
  );
  if (seed.status !== 0) throw new Error(seed.stderr);
  const seedingSeconds = (performance.now() - seedStarted) / 1000;
  const port = await freePort();
  const adminPort = await freePort();
  const serve = spawn(process.execPath, [MDQ, "serve", "--port", String(port), "--data", dataDir], {
    env: { ...process.env, MDQ_LOG_LEVEL: "warn", MDQ_ADMIN_PORT: String(adminPort), ...env },
    stdio: "ignore",
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUntilLive(base);
  const credentials = JSON.parse(await readFile(credentialsFile, "utf8"));
  return { work, dataDir, port, base, credentials, seedingSeconds, serve };
}

/** Waits until the service at `base` answers `/livez` (20 s at most). */
export async function waitUntilLive(base) {
  for (let tries = 0; ; tries += 1) {
    try {
      if ((await fetch(`${base}/livez`)).ok) return;
    } catch {}
    if (tries > 400) throw new Error("mdq serve did not start");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
