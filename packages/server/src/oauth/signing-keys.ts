/**
 * The region's token signing keys. The ring is one JSON document, kept in
 * `<dataDir>/signing-keys.json` (mode 0600) for the embedded store, or in the store itself when
 * several instances share it (PostgreSQL), so that every instance signs and verifies with the
 * same keys. Every write is a compare-and-set on the document read before it, so two instances
 * starting on an empty database, or rotating at once, never end up with two rings.
 *
 * Instances learn of another's rotation three ways: the change feed (at once), a reload when a
 * token names an unknown `kid` (throttled), and a periodic reload (every 30 s by default), which
 * bounds the delay when a message is lost.
 * Imported key objects are cached: re-importing a key per signature costs ~10× on Node 20.
 */
import { randomUUID } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { type CryptoKey, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import { type KeyRingStore, keepsKeyRing } from "../store/model/store.js";
import { writeAtomically } from "../write-atomically.js";

/** The JWS algorithm of every MDQ access token (pinned at verification). */
export const SIGNING_ALGORITHM = "EdDSA";
/** The key ring file of the embedded store, in the data directory. */
export const KEY_RING_FILE = "signing-keys.json";
/** How often an instance re-reads the ring by default. */
export const KEY_RING_REFRESH_SECONDS = 30;
/** Shortest time between two reloads caused by tokens naming an unknown `kid`. */
const UNKNOWN_KID_RELOAD_MS = 5_000;
/** Attempts of a compare-and-set write before giving up (only under concurrent rotations). */
const WRITE_ATTEMPTS = 5;

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

/** Where the ring's document lives. */
export interface KeyRingStorage {
  /** The document, or undefined when no ring was written yet. */
  read(): Promise<string | undefined>;
  /**
   * Writes `next` only if the stored document is still `expected` (undefined: no document yet);
   * returns whether it wrote.
   */
  replace(expected: string | undefined, next: string): Promise<boolean>;
}

/** Why the ring was reloaded (the `reason` of `mdq_signing_key_reloads_total`). */
export type KeyReloadReason = "periodic" | "unknown_kid" | "change";

export interface KeyRingOptions {
  /** Reload period in seconds; 0 turns the periodic reload off. Default 30. */
  refreshSeconds?: number;
  /** Called after every reload that read the storage. */
  onReload?: (reason: KeyReloadReason) => void;
  /** Called when a periodic reload fails (the ring keeps its keys). */
  onRefreshError?: (error: unknown) => void;
}

/** Serialises writes to one file within this process (the embedded store has one process). */
const fileLocks = new Map<string, Promise<unknown>>();

/** The ring in `<dataDir>/signing-keys.json`. */
export function fileKeyRingStorage(dataDir: string): KeyRingStorage {
  const file = join(dataDir, KEY_RING_FILE);
  const read = async (): Promise<string | undefined> => {
    try {
      return await readFile(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  };
  return {
    read,
    async replace(expected, next) {
      const previous = fileLocks.get(file) ?? Promise.resolve();
      const write = previous.then(async () => {
        if ((await read()) !== expected) return false;
        await mkdir(dataDir, { recursive: true });
        await writeAtomically(file, next);
        return true;
      });
      const settled = write.catch(() => undefined);
      fileLocks.set(file, settled);
      void settled.then(() => {
        if (fileLocks.get(file) === settled) fileLocks.delete(file);
      });
      return write;
    },
  };
}

/** The ring kept in a shared store; every write is its atomic compare-and-set. */
export function storeKeyRingStorage(store: KeyRingStore): KeyRingStorage {
  return {
    read: () => store.readKeyRing(),
    replace: (expected, next) => store.swapKeyRing(expected, next),
  };
}

/** The store's ring when the store keeps one (PostgreSQL), else the file in `dataDir`. */
export function keyRingStorageFor(store: object, dataDir: string): KeyRingStorage {
  return keepsKeyRing(store) ? storeKeyRingStorage(store) : fileKeyRingStorage(dataDir);
}

/** The set of signing keys of a region: one active signer, older ones kept for verification. */
export class KeyRing {
  private keys: LoadedKey[] = [];
  /** The document the keys were read from (a reload that reads the same one does nothing). */
  private document: string | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private unknownKidReloadAt = Number.NEGATIVE_INFINITY;
  private pendingReload: Promise<void> | undefined;

  private constructor(
    private readonly storage: KeyRingStorage,
    private readonly tokenLifetimeSeconds: number,
    private readonly options: KeyRingOptions,
  ) {}

  /**
   * Opens the key ring (a data directory, for its `signing-keys.json`, or any storage), creating
   * a first key when there is none, and starts the periodic reload.
   * @example const keys = await KeyRing.open(keyRingStorageFor(store, dataDir), 3600);
   */
  static async open(
    source: string | KeyRingStorage,
    tokenLifetimeSeconds: number,
    options: KeyRingOptions = {},
  ): Promise<KeyRing> {
    const storage = typeof source === "string" ? fileKeyRingStorage(source) : source;
    const ring = new KeyRing(storage, tokenLifetimeSeconds, options);
    for (let attempt = 1; ; attempt += 1) {
      const document = await storage.read();
      if (document !== undefined) {
        await ring.adopt(document);
        break;
      }
      const first = await newKey(new Date());
      const created = serialise([first.stored]);
      if (await storage.replace(undefined, created)) {
        ring.keys = [first];
        ring.document = created;
        break;
      }
      // Another instance created the ring first: the next pass adopts it.
      if (attempt >= WRITE_ATTEMPTS) throw new Error("could not create the signing key ring");
    }
    const refreshSeconds = options.refreshSeconds ?? KEY_RING_REFRESH_SECONDS;
    if (refreshSeconds > 0) {
      ring.refreshTimer = setInterval(() => {
        ring.reload("periodic").catch((error: unknown) => options.onRefreshError?.(error));
      }, refreshSeconds * 1000);
      ring.refreshTimer.unref();
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

  /**
   * Adds a new active key and retires the previous one; keys no longer needed are dropped.
   * Starts from the stored ring (another instance may have rotated since this one read it).
   */
  async rotate(now = new Date()): Promise<KeyInfo> {
    for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt += 1) {
      const current = await this.storage.read();
      const stored = current === undefined ? [] : parse(current);
      const fresh = await newKey(now);
      const kept = stored
        .map((key) => (key.retiredAt === null ? { ...key, retiredAt: now.toISOString() } : key))
        .filter((key) => this.stillVerifies(key, now.getTime()));
      const next = serialise([fresh.stored, ...kept]);
      if (await this.storage.replace(current, next)) {
        await this.adopt(next, [fresh]);
        return this.list()[0]!;
      }
    }
    throw new Error("the signing key ring kept changing during rotation; try again");
  }

  /** Re-reads the ring (another instance or process may have rotated). */
  async reload(reason: KeyReloadReason = "change"): Promise<void> {
    const document = await this.storage.read();
    this.options.onReload?.(reason);
    if (document !== undefined && document !== this.document) await this.adopt(document);
  }

  /**
   * Before a token is verified: when it names a key this ring does not know, re-reads the ring
   * first (throttled, see `reloadForUnknownKid`), since another instance may have just rotated
   * (docs/observability.md). Anything malformed is left for verification to refuse.
   */
  async learnKeyOf(token: string): Promise<void> {
    let kid: unknown;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      return;
    }
    if (typeof kid === "string" && kid !== "" && !this.verificationKey(kid)) {
      await this.reloadForUnknownKid(kid).catch(() => false);
    }
  }

  /**
   * Reloads the ring when `kid` is not in it, at most once per 5 s (a flood of tokens with made-up
   * `kid`s must not become a flood of reads); returns whether the ring knows `kid` afterwards.
   */
  async reloadForUnknownKid(kid: string, now = Date.now()): Promise<boolean> {
    if (this.knows(kid)) return true;
    if (!this.pendingReload && now - this.unknownKidReloadAt >= UNKNOWN_KID_RELOAD_MS) {
      this.unknownKidReloadAt = now;
      this.pendingReload = this.reload("unknown_kid").finally(() => {
        this.pendingReload = undefined;
      });
    }
    if (this.pendingReload) await this.pendingReload.catch(() => undefined);
    return this.knows(kid);
  }

  /** Stops the periodic reload. */
  close(): void {
    clearInterval(this.refreshTimer);
  }

  private knows(kid: string): boolean {
    return this.keys.some((key) => key.stored.kid === kid);
  }

  /** Takes the keys of `document`, reusing already imported key objects (a kid never changes keys). */
  private async adopt(document: string, imported: LoadedKey[] = []): Promise<void> {
    const known = new Map([...this.keys, ...imported].map((key) => [key.stored.kid, key]));
    this.keys = await Promise.all(
      parse(document).map(async (stored) => {
        const loaded = known.get(stored.kid);
        return loaded ? { ...loaded, stored } : importStoredKey(stored);
      }),
    );
    this.document = document;
  }

  private stillVerifies(stored: StoredKey, now: number): boolean {
    return stored.retiredAt === null || Date.parse(stored.retiredAt) + this.tokenLifetimeSeconds * 1000 > now;
  }
}

async function newKey(now: Date): Promise<LoadedKey> {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
  const stored: StoredKey = {
    kid: randomUUID(),
    alg: SIGNING_ALGORITHM,
    createdAt: now.toISOString(),
    retiredAt: null,
    publicJwk: await exportJWK(publicKey),
    privateJwk: await exportJWK(privateKey),
  };
  return { stored, privateKey, publicKey };
}

async function importStoredKey(stored: StoredKey): Promise<LoadedKey> {
  return {
    stored,
    privateKey: (await importJWK(stored.privateJwk, stored.alg)) as CryptoKey,
    publicKey: (await importJWK(stored.publicJwk, stored.alg)) as CryptoKey,
  };
}

function parse(document: string): StoredKey[] {
  return (JSON.parse(document) as { keys: StoredKey[] }).keys;
}

function serialise(keys: StoredKey[]): string {
  return `${JSON.stringify({ keys }, null, 2)}\n`;
}
