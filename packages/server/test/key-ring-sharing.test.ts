/**
 * One signing key ring per region, whichever instance writes it (docs/observability.md): writes
 * are compare-and-set on the document read before, so instances opening an empty ring at once
 * agree on one ring, and concurrent rotations lose no key. Tested on the file of the embedded
 * store, and on PostgreSQL: the ring of the real PostgreSQL store (shared by two services), and a
 * compare-and-set `swapKeyRing` over the same table, the method the store is asked to provide.
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createMigratedDatabase, graphqlOn, type TestDatabase, tokenFrom } from "@mdq/test-support";
import { decodeProtectedHeader } from "jose";
import pg from "pg";
import { todayIn } from "../src/calendar.js";
import { loadConfig } from "../src/config.js";
import { seedDemoRegion } from "../src/demo/demo-seed.js";
import {
  fileKeyRingStorage,
  KEY_RING_FILE,
  KeyRing,
  storeKeyRingStorage,
} from "../src/oauth/signing-keys.js";
import { buildService, type Service } from "../src/server.js";
import type { KeyRingStore } from "../src/store/model/store.js";
import { openPostgresStore, type PostgresStore } from "../src/store/postgres/postgres-store.js";

const LIFETIME_SECONDS = 3600;
const READINESS = "query($c: ID!) { marketingDataReadiness(clientId: $c) { status } }";

function activeKid(ring: KeyRing): string {
  return ring.activeKey().kid;
}

describe("the key ring file of the embedded store", () => {
  let dataDir: string;
  const rings: KeyRing[] = [];

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "mdq-keys-"));
  });
  after(async () => {
    for (const ring of rings) ring.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("five instances opening an empty ring at once agree on one key", async () => {
    const opened = await Promise.all(
      Array.from({ length: 5 }, () => KeyRing.open(dataDir, LIFETIME_SECONDS, { refreshSeconds: 0 })),
    );
    rings.push(...opened);
    assert.equal(new Set(opened.map(activeKid)).size, 1);
    const stored = JSON.parse(await readFile(join(dataDir, KEY_RING_FILE), "utf8")) as {
      keys: { kid: string }[];
    };
    assert.deepEqual(
      stored.keys.map((key) => key.kid),
      [activeKid(opened[0]!)],
    );
    assert.ok(!(await readdir(dataDir)).some((name) => name.endsWith(".tmp")));
  });

  it("two rotations at once keep both new keys: the later one signs, the other still verifies", async () => {
    const [a, b] = rings as [KeyRing, KeyRing];
    const [fromA, fromB] = await Promise.all([a.rotate(), b.rotate()]);
    assert.notEqual(fromA.kid, fromB.kid);
    await Promise.all([a.reload(), b.reload()]);
    assert.equal(activeKid(a), activeKid(b));
    const listed = a.list();
    assert.ok(listed.some((key) => key.kid === fromA.kid));
    assert.ok(listed.some((key) => key.kid === fromB.kid));
    assert.equal(listed.filter((key) => key.active).length, 1);
    assert.ok(a.verificationKey(fromA.kid) && a.verificationKey(fromB.kid));
  });
});

/** `swapKeyRing` as the PostgreSQL store is asked to implement it: one statement, atomic. */
function compareAndSetStore(pool: pg.Pool): KeyRingStore {
  return {
    async readKeyRing() {
      const { rows } = await pool.query<{ document: string }>("SELECT document FROM key_ring WHERE id = 1");
      return rows[0]?.document;
    },
    async writeKeyRing(document) {
      await pool.query(
        `INSERT INTO key_ring (id, document, updated_at) VALUES (1, $1, now())
          ON CONFLICT (id) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at`,
        [document],
      );
    },
    async swapKeyRing(expected, next) {
      const result =
        expected === undefined
          ? await pool.query(
              "INSERT INTO key_ring (id, document, updated_at) VALUES (1, $1, now()) ON CONFLICT (id) DO NOTHING",
              [next],
            )
          : await pool.query(
              "UPDATE key_ring SET document = $2, updated_at = now() WHERE id = 1 AND document = $1",
              [expected, next],
            );
      return result.rowCount === 1;
    },
  };
}

describe("the key ring in PostgreSQL", () => {
  let database: TestDatabase;
  let dataDir: string;
  const stores: PostgresStore[] = [];
  const services: Service[] = [];

  before(async () => {
    database = await createMigratedDatabase("keyring");
    dataDir = await mkdtemp(join(tmpdir(), "mdq-keys-pg-"));
  });
  after(async () => {
    for (const service of services) await service.app.close();
    for (const store of stores) await store.close();
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("with compare-and-set, five instances opening an empty ring at once agree on one key", async () => {
    const pools = Array.from({ length: 5 }, () => new pg.Pool({ connectionString: database.url, max: 1 }));
    try {
      const opened = await Promise.all(
        pools.map((pool) =>
          KeyRing.open(storeKeyRingStorage(compareAndSetStore(pool)), LIFETIME_SECONDS, {
            refreshSeconds: 0,
          }),
        ),
      );
      assert.equal(new Set(opened.map(activeKid)).size, 1);
      const [a, b] = opened as [KeyRing, KeyRing];
      const [fromA, fromB] = await Promise.all([a.rotate(), b.rotate()]);
      await Promise.all([a.reload(), b.reload()]);
      assert.equal(activeKid(a), activeKid(b));
      assert.ok(a.verificationKey(fromA.kid) && a.verificationKey(fromB.kid));
      for (const ring of opened) ring.close();
    } finally {
      // The next test starts from an empty ring again.
      await pools[0]!.query("DELETE FROM key_ring");
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });

  it("two services on one database sign and verify with the ring kept in the database, not in a file", async () => {
    const config = loadConfig(
      {},
      { region: "uk", authUrl: "http://auth.test", baseUrl: "http://api.test", logLevel: "silent", dataDir },
    );
    for (let instance = 0; instance < 2; instance += 1) {
      stores.push(await openPostgresStore({ url: database.url, poolSize: 2 }));
    }
    const credentials = await seedDemoRegion(stores[0]!, {
      region: "uk",
      authUrl: config.authUrl,
      baseUrl: config.baseUrl,
      today: todayIn(config.timeZone),
      days: 2,
    });
    for (const store of stores) services.push(await buildService(config, { store, keyRefreshSeconds: 0 }));
    const [first, second] = services as [Service, Service];
    assert.equal(activeKid(first.keys), activeKid(second.keys));
    assert.ok(!(await readdir(dataDir)).includes(KEY_RING_FILE));
    const stored = await stores[0]!.readKeyRing();
    assert.ok(stored?.includes(activeKid(first.keys)));

    // A rotation through one instance's admin reaches the other with the first token naming the new key.
    const rotated = await first.admin.rotateKeys();
    const app = credentials.apps[0]!;
    const token = await tokenFrom(first, app);
    assert.equal(decodeProtectedHeader(token).kid, rotated.key.kid);
    const answer = await graphqlOn(second, token, READINESS, { c: app.brandClientId });
    assert.equal(answer.statusCode, 200, answer.body);
    assert.equal(activeKid(second.keys), rotated.key.kid);
  });
});

describe("a file ring storage", () => {
  it("reads nothing from an empty directory and refuses a write that does not match what is stored", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "mdq-keys-cas-"));
    try {
      const storage = fileKeyRingStorage(dataDir);
      assert.equal(await storage.read(), undefined);
      assert.equal(await storage.replace(undefined, '{"keys":[]}\n'), true);
      assert.equal(await storage.replace(undefined, '{"keys":[1]}\n'), false);
      assert.equal(await storage.replace('{"keys":[2]}\n', '{"keys":[3]}\n'), false);
      assert.equal(await storage.read(), '{"keys":[]}\n');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
