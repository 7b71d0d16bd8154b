/**
 * App client secrets: generated with 256 bits of entropy, shown once, stored only as a hash and
 * compared in constant time (CONTRACT §2). A fast hash suffices because the secrets are random:
 * there is no dictionary to attack.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** A new secret: 32 random bytes, base64url (43 characters). */
export function generateAppSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** A new app client id: `app_` and 16 random bytes in hex. */
export function generateAppClientId(): string {
  return `app_${randomBytes(16).toString("hex")}`;
}

/** The stored form of a secret. */
export function hashAppSecret(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** Whether `secret` matches `storedHash`, in time independent of where they differ. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashAppSecret(secret), "hex");
  const stored = Buffer.from(storedHash, "hex");
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
