/**
 * The machine's Redis (127.0.0.1:6379) for tests: a region name of their own per test file, so
 * that keys and channels never meet another run's, and a clean-up of that region's keys.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";

export const REDIS_HOST = "127.0.0.1";
export const REDIS_PORT = 6379;
export const REDIS_URL = `redis://${REDIS_HOST}:${REDIS_PORT}`;

/** A URL where nothing listens: a Redis that is down. */
export const UNREACHABLE_REDIS_URL = "redis://127.0.0.1:1";

/** A random region code (`[a-z]{8}`), which prefixes every Redis key and channel of the service. */
export function uniqueRegion(): string {
  return Array.from(randomBytes(8), (byte) => String.fromCharCode(97 + (byte % 26))).join("");
}

/** A plain client for assertions and clean-up. */
export function testRedisClient(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
}

/** Deletes every key starting with `prefix`; returns how many there were. */
export async function deleteKeys(prefix: string): Promise<number> {
  const client = testRedisClient();
  try {
    let deleted = 0;
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) deleted += await client.del(...keys);
    } while (cursor !== "0");
    return deleted;
  } finally {
    client.disconnect();
  }
}
