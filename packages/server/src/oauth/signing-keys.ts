/**
 * The region's token signing keys, kept in `<dataDir>/signing-keys.json` (mode 0600).
 * Imported key objects are cached: re-importing a key per signature costs ~10× on Node 20.
 */
import { randomUUID } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type CryptoKey, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";

/** The JWS algorithm of every MDQ access token (pinned at verification). */
export const SIGNING_ALGORITHM = "EdDSA";

interface StoredKey {
  kid: string;
  alg: typeof SIGNING_ALGORITHM;
  createdAt: string;
  /** When the key stopped signing; it still verifies until its last token expires. */
  retiredAt: string | null;
  publicJwk: JWK;
  privateJwk: JWK;
}

interface LoadedKey {
  stored: StoredKey;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}

/** Public description of a key, for `mdq keys list`. */
export interface KeyInfo {
  kid: string;
  alg: string;
  createdAt: string;
  retiredAt: string | null;
  active: boolean;
}

/** The set of signing keys of a region: one active signer, older ones kept for verification. */
export class KeyRing {
  private constructor(
    private readonly file: string,
    private keys: LoadedKey[],
    private readonly tokenLifetimeSeconds: number,
  ) {}

  /** Opens the key ring in `dataDir`, creating a first key when there is none. */
  static async open(dataDir: string, tokenLifetimeSeconds: number): Promise<KeyRing> {
    const file = join(dataDir, "signing-keys.json");
    const ring = new KeyRing(file, [], tokenLifetimeSeconds);
    const stored = await readKeys(file);
    if (stored.length === 0) {
      await mkdir(dataDir, { recursive: true });
      await ring.rotate();
    } else {
      ring.keys = await Promise.all(stored.map(importStoredKey));
    }
    return ring;
  }

  /** The key that signs new tokens. */
  activeKey(): { kid: string; privateKey: CryptoKey } {
    const active = this.keys.find((key) => key.stored.retiredAt === null);
    if (!active) throw new Error("no active signing key");
    return { kid: active.stored.kid, privateKey: active.privateKey };
  }

  /** The public key for `kid`, if it may still verify tokens. */
  verificationKey(kid: string, now = Date.now()): CryptoKey | undefined {
    const key = this.keys.find((candidate) => candidate.stored.kid === kid);
    return key && this.stillVerifies(key.stored, now) ? key.publicKey : undefined;
  }

  /** The JWK Set published at `/.well-known/jwks.json`: every key still needed to verify. */
  jwks(now = Date.now()): { keys: JWK[] } {
    return {
      keys: this.keys
        .filter((key) => this.stillVerifies(key.stored, now))
        .map(({ stored }) => ({ ...stored.publicJwk, kid: stored.kid, alg: stored.alg, use: "sig" })),
    };
  }

  /** Every key on file, newest first. */
  list(): KeyInfo[] {
    return this.keys.map(({ stored }) => ({
      kid: stored.kid,
      alg: stored.alg,
      createdAt: stored.createdAt,
      retiredAt: stored.retiredAt,
      active: stored.retiredAt === null,
    }));
  }

  /** Adds a new active key and retires the previous one; keys no longer needed are dropped. */
  async rotate(now = new Date()): Promise<KeyInfo> {
    const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
    const stored: StoredKey = {
      kid: randomUUID(),
      alg: SIGNING_ALGORITHM,
      createdAt: now.toISOString(),
      retiredAt: null,
      publicJwk: await exportJWK(publicKey),
      privateJwk: await exportJWK(privateKey),
    };
    const kept = this.keys
      .map((key) =>
        key.stored.retiredAt === null
          ? { ...key, stored: { ...key.stored, retiredAt: now.toISOString() } }
          : key,
      )
      .filter((key) => this.stillVerifies(key.stored, now.getTime()));
    const next = [{ stored, privateKey, publicKey }, ...kept];
    await writeKeys(
      this.file,
      next.map((key) => key.stored),
    );
    this.keys = next;
    return this.list()[0]!;
  }

  /** Re-reads the key file (another process may have rotated). */
  async reload(): Promise<void> {
    const stored = await readKeys(this.file);
    if (stored.length > 0) this.keys = await Promise.all(stored.map(importStoredKey));
  }

  private stillVerifies(stored: StoredKey, now: number): boolean {
    return stored.retiredAt === null || Date.parse(stored.retiredAt) + this.tokenLifetimeSeconds * 1000 > now;
  }
}

async function importStoredKey(stored: StoredKey): Promise<LoadedKey> {
  return {
    stored,
    privateKey: (await importJWK(stored.privateJwk, stored.alg)) as CryptoKey,
    publicKey: (await importJWK(stored.publicJwk, stored.alg)) as CryptoKey,
  };
}

async function readKeys(file: string): Promise<StoredKey[]> {
  try {
    const parsed = JSON.parse(await readFile(file, "utf8")) as { keys: StoredKey[] };
    return parsed.keys;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

async function writeKeys(file: string, keys: StoredKey[]): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify({ keys }, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, file);
}
