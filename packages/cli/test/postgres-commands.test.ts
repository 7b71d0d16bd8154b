/**
 * `mdq migrate`, and `mdq demo` / `mdq serve` on PostgreSQL (MDQ_DATABASE_URL), as processes:
 * exit codes, messages that never repeat the connection string's password, a demo that seeds
 * and serves a fresh database, re-seeds its own, and refuses a database holding other brands.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { freePort } from "./support/free-port.js";
import { graphqlCall, tokenCall } from "./support/http-call.js";
import { connectTo, createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { runMdq, startServe } from "./support/service-process.js";

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
    const env = { MDQ_DATABASE_URL: database.url() };
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
        startServe(work, { MDQ_DATABASE_URL: empty.url() }, { timeoutMs: 10_000 }),
        /mdq migrate/,
      );
    } finally {
      await empty.drop();
      await rm(work, { recursive: true, force: true });
    }
  });
});

describe("mdq demo on PostgreSQL", () => {
  let database: TestDatabase;
  let work: string;

  before(async () => {
    database = await createTestDatabase("demo");
    work = await mkdtemp(join(tmpdir(), "mdq-pg-demo-"));
  });

  after(async () => {
    await database.drop();
    await rm(work, { recursive: true, force: true });
  });

  it("seeds an empty database, which mdq serve then serves through the real token and GraphQL path", async () => {
    const env = { MDQ_DATABASE_URL: database.url() };
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
      const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
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
    const env = { MDQ_DATABASE_URL: database.url() };
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
    const env = { MDQ_DATABASE_URL: database.url() };
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
