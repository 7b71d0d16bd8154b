/**
 * The admin credential: a random token in `<dataDir>/admin-token` (0600), created once and kept
 * across restarts, and the admin listener's address in `<dataDir>/admin.json`, so that `mdq`
 * finds a running service from its data directory alone.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeAtomically } from "../write-atomically.js";

export const ADMIN_TOKEN_FILE = "admin-token";
export const ADMIN_ADDRESS_FILE = "admin.json";

/** Reads the data directory's admin token, creating it on first use. */
export async function ensureAdminToken(dataDir: string): Promise<string> {
  const file = join(dataDir, ADMIN_TOKEN_FILE);
  try {
    const token = (await readFile(file, "utf8")).trim();
    if (token.length >= 32) return token;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const token = randomBytes(32).toString("base64url");
  // With PostgreSQL nothing else creates the data directory: it only holds this and admin.json.
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await writeAtomically(file, `${token}\n`);
  return token;
}

/** Records where the admin listener is, for the CLI. */
export async function writeAdminAddress(dataDir: string, url: string): Promise<void> {
  await writeAtomically(join(dataDir, ADMIN_ADDRESS_FILE), `${JSON.stringify({ url, pid: process.pid })}\n`);
}

/** Whether `presented` is the admin token, compared in constant time. */
export function adminTokenMatches(presented: string, token: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
