/**
 * What only the PostgreSQL store has (behaviour shared with DuckDB is in
 * store-conformance.test.ts): versioned migrations under a lock and the start-up check that
 * refuses an unmigrated database; StoreUnavailableError for a database that is down, a statement
 * past its timeout and a terminated connection, with no secret in the message and no crash from an
 * idle connection's error; the brand's partition vacuumed after a load; the key ring shared by
 * instances; and `div_half_even`, the rounding of all money, agreeing with DuckDB's macro and with
 * exact arithmetic.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { useDatabaseAndDir } from "@mdq/test-support";
import pg from "pg";
import { loadConfig } from "../src/config.js";
import { StoreUnavailableError } from "../src/store/model/store-errors.js";
import { migrateDatabase, openStore } from "../src/store/open-store.js";
import { LATEST_SCHEMA_VERSION, MIGRATIONS, migrationId } from "../src/store/postgres/migrations.js";
import { openPostgresStore, SchemaVersionError } from "../src/store/postgres/postgres-store.js";
import { DIV_HALF_EVEN_MACRO } from "../src/store/sql/sql-dialect.js";
import { record } from "./stored-records.js";

/** A client of its own on `url`, for what a test does behind the store's back. */
async function sideClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/** Exact n ÷ d rounded half to even, for d > 0 (BigInt division truncates toward zero). */
function divHalfEven(n: bigint, d: bigint): bigint {
  const magnitude = n < 0n ? -n : n;
  let quotient = magnitude / d;
  const twice = 2n * (magnitude % d);
  if (twice > d || (twice === d && quotient % 2n === 1n)) quotient += 1n;
  return n < 0n ? -quotient : quotient;
}

describe("PostgreSQL store", () => {
  const workspace = useDatabaseAndDir("pgstore");

  it("refuses to open an unmigrated database, telling the operator to run `mdq migrate`", async () => {
    const config = loadConfig({}, { databaseUrl: workspace.database.url, dataDir: workspace.dir });
    await assert.rejects(openStore(config), (error: unknown) => {
      assert.ok(error instanceof SchemaVersionError);
      assert.equal(
        error.message,
        `the PostgreSQL schema is at version 0, this release needs ${LATEST_SCHEMA_VERSION}: run \`mdq migrate\` first`,
      );
      return true;
    });
  });

  it("applies each migration exactly once, also when several instances migrate at once", async () => {
    const results = await Promise.all([1, 2, 3].map(() => migrateDatabase(workspace.database.url)));
    const names = MIGRATIONS.map(migrationId);
    assert.deepEqual(names, [
      "1_initial_schema",
      "2_data_versions",
      "3_record_rollup",
      "4_brand_versions",
      "5_records_walk_order",
      "6_div_half_even_bigint",
      "7_brand_commit_lsns",
    ]);
    assert.deepEqual(
      results.map((result) => result.current),
      [LATEST_SCHEMA_VERSION, LATEST_SCHEMA_VERSION, LATEST_SCHEMA_VERSION],
    );
    assert.deepEqual(
      results.map((result) => result.applied).sort((a, b) => b.length - a.length),
      [names, [], []],
    );
    assert.deepEqual(await migrateDatabase(workspace.database.url), {
      applied: [],
      current: LATEST_SCHEMA_VERSION,
    });
    const client = await sideClient(workspace.database.url);
    try {
      const { rows } = await client.query("SELECT version, name FROM schema_migrations ORDER BY version");
      assert.deepEqual(
        rows,
        MIGRATIONS.map((migration) => ({ version: migration.version, name: migration.name })),
      );
    } finally {
      await client.end();
    }
  });

  it("opens PostgreSQL when a database URL is configured, and DuckDB in the data directory otherwise", async () => {
    const postgres = await openStore(
      loadConfig({}, { databaseUrl: workspace.database.url, dataDir: workspace.dir }),
    );
    const duckdb = await openStore(loadConfig({}, { dataDir: workspace.dir }));
    try {
      assert.equal(postgres.engine, "postgres");
      assert.equal(duckdb.engine, "duckdb");
      await postgres.ping();
    } finally {
      await postgres.close();
      await duckdb.close();
    }
  });

  it("fails fast with StoreUnavailableError when the database refuses connections, naming no secret", async () => {
    const url = "postgres://mdq:s3cret-Passw0rd@127.0.0.1:1/mdq";
    const started = Date.now();
    for (const attempt of [() => openPostgresStore({ url }), () => migrateDatabase(url)]) {
      await assert.rejects(attempt(), (error: unknown) => {
        assert.ok(error instanceof StoreUnavailableError, String(error));
        assert.equal(error.message, "PostgreSQL is unavailable: connection refused");
        assert.equal(error.retryAfterSeconds, 5);
        return true;
      });
    }
    assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
  });

  it("answers a statement past its timeout with StoreUnavailableError, then recovers", async () => {
    const store = await openPostgresStore({ url: workspace.database.url, statementTimeoutMs: 300 });
    const locker = await sideClient(workspace.database.url);
    try {
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE loads IN ACCESS EXCLUSIVE MODE");
      await assert.rejects(store.hasLoad("brand-x", "2021-03-01"), {
        name: "StoreUnavailableError",
        message: "PostgreSQL is unavailable: a statement ran past the statement timeout and was cancelled",
      });
      await locker.query("COMMIT");
      assert.equal(await store.hasLoad("brand-x", "2021-03-01"), false);
    } finally {
      await locker.end();
      await store.close();
    }
  });

  it("survives its connections being terminated: idle ones are replaced, a busy one fails with StoreUnavailableError", async () => {
    const store = await openPostgresStore({ url: workspace.database.url, poolSize: 3 });
    const admin = await sideClient(workspace.database.url);
    const terminate = () =>
      admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'mdq'",
        [workspace.database.name],
      );
    /** Retries `action` until it succeeds; every failure on the way must be StoreUnavailableError. */
    const recovers = async <T>(action: () => Promise<T>): Promise<T> => {
      for (let attempt = 0; ; attempt += 1) {
        try {
          return await action();
        } catch (error) {
          assert.ok(error instanceof StoreUnavailableError, String(error));
          assert.ok(attempt < 20, "the store did not recover");
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    };
    try {
      await Promise.all([store.ping(), store.ping(), store.ping()]);
      // Idle clients hear of their end as an 'error' event: unhandled, it would end the process.
      assert.ok((await terminate()).rowCount! >= 1);
      await recovers(() => store.ping());

      await admin.query("BEGIN");
      await admin.query("LOCK TABLE loads IN ACCESS EXCLUSIVE MODE");
      const blocked = store.hasLoad("brand-x", "2021-03-01");
      blocked.catch(() => undefined);
      // Terminate the store's connection while its statement waits for the lock.
      for (let waiting = 0; waiting === 0; ) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        const { rows } = await admin.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = $1 AND application_name = 'mdq' AND wait_event_type = 'Lock'`,
          [workspace.database.name],
        );
        waiting = rows[0].n;
      }
      await terminate();
      await assert.rejects(blocked, (error: unknown) => {
        assert.ok(error instanceof StoreUnavailableError, String(error));
        assert.match(error.message, /^PostgreSQL is unavailable: /);
        return true;
      });
      await admin.query("COMMIT");
      assert.equal(await recovers(() => store.hasLoad("brand-x", "2021-03-01")), false);
    } finally {
      await admin.end();
      await store.close();
    }
  });

  it("vacuums the brand's partition after a load: after a reload, every page of it is all visible", async () => {
    await migrateDatabase(workspace.database.url);
    const store = await openPostgresStore({ url: workspace.database.url });
    const side = await sideClient(workspace.database.url);
    const rows = (revenueE4: bigint) =>
      Array.from({ length: 5000 }, (_, index) =>
        record(`r-${index}`, `2026-01-${String(1 + (index % 28)).padStart(2, "0")}`, { revenueE4 }),
      );
    try {
      await store.replaceRecords("vacuumed", rows(10_000n));
      // The same days again: every row replaced, as a daily restatement does.
      await store.replaceRecords("vacuumed", rows(20_000n));
      const { rows: found } = await side.query(
        `SELECT c.relpages, c.relallvisible FROM records r JOIN pg_class c ON c.oid = r.tableoid
          WHERE r.brand_id = $1 LIMIT 1`,
        ["vacuumed"],
      );
      const partition = found[0] as { relpages: number; relallvisible: number };
      assert.ok(partition.relpages > 0);
      // Only VACUUM sets the visibility map (pg_class, written by the vacuum itself; the dead-tuple
      // counters are statistics a backend may flush a second later): a load's pages, and those
      // its reload emptied, are not all visible until a vacuum removed the replaced rows.
      assert.equal(partition.relallvisible, partition.relpages);
    } finally {
      await side.end();
      await store.close();
    }
  });

  it("shares one signing key ring between instances on the same database", async () => {
    const [first, second] = await Promise.all([
      openPostgresStore({ url: workspace.database.url }),
      openPostgresStore({ url: workspace.database.url }),
    ]);
    try {
      await first.writeKeyRing('{"keys":["first"]}');
      assert.equal(await second.readKeyRing(), '{"keys":["first"]}');
      await second.writeKeyRing('{"keys":["first","second"]}');
      assert.equal(await first.readKeyRing(), '{"keys":["first","second"]}');
    } finally {
      await first.close();
      await second.close();
    }
  });

  it("rounds with div_half_even exactly as DuckDB's macro and exact arithmetic do, refunds included", async () => {
    const pairs: [bigint, bigint][] = [];
    for (let n = -40n; n <= 40n; n += 1n) for (let d = 1n; d <= 8n; d += 1n) pairs.push([n, d]);
    for (const n of [10n ** 30n + 5n, -(10n ** 30n) - 5n, 123_456_789_012_345_678_901n, -85n * 10n ** 17n])
      for (const d of [2n, 10n, 100n, 10n ** 18n]) pairs.push([n, d]);
    // Within BIGINT, as the planner divides on it (`fitsBigint`: n under 9 × 10¹⁸, d under 4 × 10¹⁸).
    for (const n of [8_999_999_999_999_999_999n, -8_999_999_999_999_999_999n, 6_000_000_000_000_000_001n])
      for (const d of [3n, 2_000_000_000_000_000_000n, 3_999_999_999_999_999_999n]) pairs.push([n, d]);
    const bigints = pairs.filter(([n, d]) => n < 2n ** 63n && -n < 2n ** 63n && d < 4n * 10n ** 18n);
    const expected = (of: [bigint, bigint][]) => of.map(([n, d]) => divHalfEven(n, d).toString());

    const client = await sideClient(workspace.database.url);
    try {
      for (const [type, of] of [
        ["numeric", pairs],
        ["bigint", bigints],
      ] as const) {
        const { rows } = await client.query(
          `SELECT div_half_even(n, d)::text AS q, pg_typeof(div_half_even(n, d))::text AS type
            FROM unnest($1::${type}[], $2::${type}[]) WITH ORDINALITY AS t(n, d, i) ORDER BY i`,
          [of.map(([n]) => n.toString()), of.map(([, d]) => d.toString())],
        );
        assert.deepEqual(
          rows.map((row) => row.q),
          expected(of),
          type,
        );
        // The bigint operands take migration 6's function, not the numeric one.
        assert.deepEqual(new Set(rows.map((row) => row.type)), new Set([type]));
      }
    } finally {
      await client.end();
    }

    const instance = await DuckDBInstance.create(":memory:");
    const connection = await instance.connect();
    try {
      await connection.run(DIV_HALF_EVEN_MACRO);
      for (const [type, of] of [
        ["HUGEINT", pairs],
        ["BIGINT", bigints],
      ] as const) {
        const values = of.map(([n, d]) => `(CAST('${n}' AS ${type}), CAST('${d}' AS ${type}))`).join(", ");
        const reader = await connection.runAndReadAll(
          `SELECT CAST(div_half_even(n, d) AS VARCHAR) AS q FROM (VALUES ${values}) AS t(n, d)`,
        );
        assert.deepEqual(
          reader.getRowObjectsJS().map((row) => row["q"]),
          expected(of),
          type,
        );
      }
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});
