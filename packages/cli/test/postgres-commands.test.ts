/**
 * `mdq migrate`, and `mdq demo` / `mdq serve` on PostgreSQL (MDQ_DATABASE_URL), as processes:
 * exit codes, messages that never repeat the connection string's password, a demo that seeds
 * and serves a fresh database, re-seeds its own, and refuses a database holding other brands.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { openPostgresStore } from "@mdq/server";
import {
  connectTo,
  createTestDatabase,
  daysAgo,
  freePort,
  graphqlCall,
  runMdq,
  startServe,
  type TestDatabase,
  tokenCall,
  useDatabaseAndDir,
} from "@mdq/test-support";

const SECRET_PASSWORD = "pa55-w0rd-never-printed";

describe("mdq migrate", () => {
  let database: TestDatabase;

  before(async () => {
    database = await createTestDatabase("migrate");
  });

  after(async () => {
    await database.drop();
  });

  it("applies the migrations once, then reports the schema current", async () => {
    const env = { MDQ_DATABASE_URL: database.url };
    const first = await runMdq(["migrate", "--json"], env);
    assert.equal(first.code, 0, first.stderr);
    const applied = JSON.parse(first.stdout) as { applied: string[]; current: number };
    assert.ok(applied.applied.length >= 1);
    assert.equal(applied.current, applied.applied.length);

    const second = await runMdq(["migrate"], env);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, `schema is current (version ${applied.current})\n`);

    const client = await connectTo(database.name);
    try {
      const tables = await client.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1",
      );
      const names = tables.rows.map((row) => row.table_name);
      for (const table of ["apps", "brands", "fx_rates", "grants", "loads", "publishes", "records"]) {
        assert.ok(names.includes(table), `${table} exists: ${names.join(", ")}`);
      }
    } finally {
      await client.end();
    }
  });

  it("exits 2 without MDQ_DATABASE_URL, or with a URL that is not PostgreSQL's", async () => {
    const unset = await runMdq(["migrate"]);
    assert.equal(unset.code, 2);
    assert.equal(unset.stderr, "mdq: set MDQ_DATABASE_URL to the PostgreSQL database to migrate\n");
    const wrong = await runMdq(["migrate"], {
      MDQ_DATABASE_URL: `mysql://root:${SECRET_PASSWORD}@127.0.0.1/x`,
    });
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /^mdq: invalid configuration MDQ_DATABASE_URL: use postgres: or postgresql:/);
    assert.ok(!wrong.stderr.includes(SECRET_PASSWORD));
  });

  it("exits 4 when the database cannot be reached, without printing the password", async () => {
    const port = await freePort();
    const result = await runMdq(["migrate"], {
      MDQ_DATABASE_URL: `postgres://root:${SECRET_PASSWORD}@127.0.0.1:${port}/nowhere`,
    });
    assert.equal(result.code, 4, result.stderr);
    assert.match(result.stderr, /^mdq: /);
    assert.ok(!result.stderr.includes(SECRET_PASSWORD), result.stderr);
    assert.equal(result.stdout, "");
  });

  it("mdq serve refuses a database whose schema is not migrated, and says to run mdq migrate", async () => {
    const empty = await createTestDatabase("unmigrated");
    const work = await mkdtemp(join(tmpdir(), "mdq-unmigrated-"));
    try {
      await assert.rejects(
        startServe(work, { MDQ_DATABASE_URL: empty.url }, { timeoutMs: 10_000 }),
        /mdq migrate/,
      );
    } finally {
      await empty.drop();
      await rm(work, { recursive: true, force: true });
    }
  });
});

describe("stored days no read can convert (rows an older release loaded without an FX rate)", () => {
  let database: TestDatabase;
  let work: string;

  before(async () => {
    database = await createTestDatabase("unreadable");
    work = await mkdtemp(join(tmpdir(), "mdq-unreadable-"));
    const migrated = await runMdq(["migrate"], { MDQ_DATABASE_URL: database.url });
    assert.equal(migrated.code, 0, migrated.stderr);
    // As an older release's load let them in: straight into the store, past no check.
    const store = await openPostgresStore({ url: database.url, poolSize: 1 });
    try {
      await store.upsertFxRates([{ currency: "GBP", date: "2026-03-02", rateE6: 850_000n }]);
      await store.replaceRecords(
        "brand-old",
        [
          ["o-1", "2026-03-01", "CHF"],
          ["o-2", "2026-03-03", "CHF"],
          ["o-3", "2026-03-01", "GBP"],
          ["o-4", "2026-03-02", "GBP"],
        ].map(([recordId, date, currency]) => ({
          recordId: recordId!,
          date: date!,
          market: "GB",
          dataSource: "google_ads",
          channel: "search",
          campaignId: "c-1",
          campaignName: "Spring",
          impressions: 10,
          clicks: 1,
          spendE4: 10_000n,
          conversionsE4: 0n,
          revenueE4: 0n,
          currency: currency as "CHF" | "GBP",
        })),
      );
    } finally {
      await store.close();
    }
  });

  after(async () => {
    await database.drop();
    await rm(work, { recursive: true, force: true });
  });

  const listed =
    "  brand-old: CHF records on 2 days 2026-03-01..2026-03-03 (the region holds no CHF rates)\n" +
    "  brand-old: GBP records on 1 day 2026-03-01 (GBP rates start on 2026-03-02)\n";

  it("mdq migrate says so on stderr, naming brand, currency and days, and exits 0", async () => {
    const result = await runMdq(["migrate"], { MDQ_DATABASE_URL: database.url });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^schema is current \(version \d+\)\n$/);
    assert.equal(
      result.stderr,
      "mdq migrate: warning: stored records have no FX rate on or before their day, so every read over those days fails for their brand (UNSUPPORTED_CURRENCY):\n" +
        listed +
        "Load the missing rates with `mdq fx load`; `mdq status` lists these days.\n",
    );
  });

  it("mdq serve warns at start-up, and mdq status lists the days until the rates are loaded", async () => {
    const env = { MDQ_DATABASE_URL: database.url };
    const serve = await startServe(work, env);
    try {
      assert.match(
        serve.log(),
        /"msg":"stored records have no FX rate on or before their day, so every read over those days fails for their brand \(UNSUPPORTED_CURRENCY\): brand-old: CHF records on 2 days 2026-03-01\.\.2026-03-03/,
      );
      const created = await runMdq(
        ["brand", "create", "--name", "Old", "--id", "brand-old", "--data", work],
        env,
      );
      assert.equal(created.code, 0, created.stderr);
      const human = await runMdq(["status", "--data", work], env);
      assert.equal(human.code, 0, human.stderr);
      const tail = human.stdout.slice(human.stdout.indexOf("Days the brand cannot read"));
      assert.match(
        tail,
        /^Days the brand cannot read \(no FX rate on or before them: every read over them fails with UNSUPPORTED_CURRENCY until the rates are loaded with `mdq fx load`\):\n/,
      );
      const rows = tail.trimEnd().split("\n").slice(1);
      assert.match(rows[0]!, /^BRAND\s+CURRENCY\s+DAYS\s+COUNT\s+FIRST RATE$/);
      assert.match(rows[1]!, /^brand-old\s+CHF\s+2026-03-01\.\.2026-03-03\s+2\s+-$/);
      assert.match(rows[2]!, /^brand-old\s+GBP\s+2026-03-01\s+1\s+2026-03-02$/);
      assert.equal(rows.length, 3);

      const fx = join(work, "fx.csv");
      await writeFile(fx, "date,currency,rate\n2026-02-27,CHF,0.95\n2026-02-27,GBP,0.84\n");
      const loaded = await runMdq(["fx", "load", fx, "--data", work], env);
      assert.equal(loaded.code, 0, loaded.stderr);
      const after = await runMdq(["status", "--json", "--data", work], env);
      const { brands } = JSON.parse(after.stdout) as {
        brands: { brandId: string; unreadableDays: unknown[] }[];
      };
      assert.deepEqual(brands.find((brand) => brand.brandId === "brand-old")!.unreadableDays, []);
      assert.ok(
        !(await runMdq(["status", "--data", work], env)).stdout.includes("Days the brand cannot read"),
      );
    } finally {
      await serve.stop();
    }
  });
});

describe("mdq demo on PostgreSQL", () => {
  const workspace = useDatabaseAndDir("pg_demo");

  it("seeds an empty database, which mdq serve then serves through the real token and GraphQL path", async () => {
    const { database, dir: work } = workspace;
    const env = { MDQ_DATABASE_URL: database.url };
    const credentialsFile = join(work, "creds.json");
    const seeded = await runMdq(
      ["demo", "--seed-only", "--days", "20", "--data", join(work, "demo"), "--credentials", credentialsFile],
      env,
    );
    assert.equal(seeded.code, 0, seeded.stderr);
    const credentials = JSON.parse(await readFile(credentialsFile, "utf8")) as {
      apps: { appClientId: string; appClientSecret: string; brandClientId: string }[];
    };
    const app = credentials.apps[0]!;
    const serve = await startServe(join(work, "serve"), env);
    try {
      const issued = await tokenCall(serve.url, app.appClientId, app.appClientSecret);
      assert.equal(issued.status, 200, issued.body);
      const token = (JSON.parse(issued.body) as { access_token: string }).access_token;
      const readiness = await graphqlCall(
        serve.url,
        token,
        "query($c: ID!) { marketingDataReadiness(clientId: $c) { status } }",
        { c: app.brandClientId },
      );
      assert.equal(readiness.status, 200, readiness.body);
      assert.equal(JSON.parse(readiness.body).data.marketingDataReadiness.status, "READY");
      const yesterday = daysAgo(1);
      const records = await graphqlCall(
        serve.url,
        token,
        "query($c: ID!, $d: Date!) { marketingRecords(clientId: $c, dateRange: {from: $d, to: $d}, currency: EUR) { recordId date spend currency } }",
        { c: app.brandClientId, d: yesterday },
      );
      assert.equal(records.status, 200, records.body);
      const rows = JSON.parse(records.body).data.marketingRecords as { date: string; currency: string }[];
      assert.ok(rows.length > 0);
      assert.ok(rows.every((row) => row.date === yesterday && row.currency === "EUR"));
    } finally {
      await serve.stop();
    }
  });

  it("re-seeds its own database on a second run: the new secrets work, the old ones stop", async () => {
    const { database, dir: work } = workspace;
    const env = { MDQ_DATABASE_URL: database.url };
    const first = JSON.parse(await readFile(join(work, "creds.json"), "utf8")) as DemoApps;
    const again = await runMdq(
      [
        "demo",
        "--seed-only",
        "--days",
        "20",
        "--data",
        join(work, "again"),
        "--credentials",
        join(work, "again.json"),
      ],
      env,
    );
    assert.equal(again.code, 0, again.stderr);
    const second = JSON.parse(await readFile(join(work, "again.json"), "utf8")) as DemoApps;
    assert.deepEqual(
      second.apps.map((app) => app.appClientId),
      first.apps.map((app) => app.appClientId),
    );
    const serve = await startServe(join(work, "serve"), env);
    try {
      const fresh = await tokenCall(serve.url, second.apps[0]!.appClientId, second.apps[0]!.appClientSecret);
      assert.equal(fresh.status, 200, fresh.body);
      const stale = await tokenCall(serve.url, first.apps[0]!.appClientId, first.apps[0]!.appClientSecret);
      assert.deepEqual([stale.status, JSON.parse(stale.body).error], [400, "invalid_client"]);
      const token = (JSON.parse(fresh.body) as { access_token: string }).access_token;
      const readiness = await graphqlCall(
        serve.url,
        token,
        "query($c: ID!) { marketingDataReadiness(clientId: $c) { status } }",
        { c: second.apps[0]!.brandClientId },
      );
      assert.equal(JSON.parse(readiness.body).data.marketingDataReadiness.status, "READY");
    } finally {
      await serve.stop();
    }
  });

  it("refuses a database that holds other brands (exit 2) and changes nothing", async () => {
    const { database, dir: work } = workspace;
    const env = { MDQ_DATABASE_URL: database.url };
    const serve = await startServe(join(work, "serve"), env);
    try {
      const created = await runMdq([
        "brand",
        "create",
        "--id",
        "brand-own",
        "--name",
        "Own",
        "--data",
        serve.dataDir,
      ]);
      assert.equal(created.code, 0, created.stderr);
      const again = await runMdq(
        ["demo", "--seed-only", "--data", join(work, "refused"), "--credentials", join(work, "refused.json")],
        env,
      );
      assert.equal(again.code, 2, again.stderr);
      assert.equal(
        again.stderr,
        "mdq: mdq demo seeds an empty database or re-seeds its own, and MDQ_DATABASE_URL holds other brands or apps: point it at a new database\n",
      );
      const brands = await runMdq(["brand", "list", "--json", "--data", serve.dataDir]);
      assert.match(brands.stdout, /"brand-own"/);
    } finally {
      await serve.stop();
    }
  });
});

/** The part of a demo's credentials file these tests read. */
interface DemoApps {
  apps: { appClientId: string; appClientSecret: string; brandClientId: string }[];
}
