/**
 * Per-brand data versions in a store that predates them (store/writes/version-stamps.ts,
 * BRAND_VERSION_BACKFILL): each FX change stamped from the region's counter is copied to every
 * brand and each brand's counter starts at the greatest of its stamps, so that versions keep
 * growing for a client that stored one; the DuckDB store does it when it opens, PostgreSQL's
 * migration 4.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { createTestDatabase } from "@mdq/test-support";
import pg from "pg";
import { openDuckDbStore } from "../src/store/duckdb/duckdb-store.js";
import { migrateDatabase } from "../src/store/open-store.js";

/** Stamps as the region's counter issued them: acme's day at 7, the FX change at 8, globex's grant at 9. */
const OLD_STAMPS = [
  "INSERT INTO brands VALUES ('acme', 'Acme', CAST('2021-01-01' AS TIMESTAMP)), ('globex', 'Globex', CAST('2021-01-01' AS TIMESTAMP))",
  "INSERT INTO day_versions VALUES ('acme', CAST('2021-03-01' AS DATE), 7, 0)",
  "INSERT INTO fx_versions VALUES (8, CAST('2021-02-01' AS DATE), 0)",
  "INSERT INTO scope_versions VALUES ('globex', 9, NULL, 'x', 0)",
];
const COUNTERS = "SELECT brand_id, CAST(version AS INTEGER) AS version FROM brand_versions ORDER BY brand_id";
const FX = "SELECT brand_id, CAST(version AS INTEGER) AS version FROM brand_fx_versions ORDER BY brand_id";
const EXPECTED_COUNTERS = [
  { brand_id: "acme", version: 8 },
  { brand_id: "globex", version: 9 },
];
const EXPECTED_FX = [
  { brand_id: "acme", version: 8 },
  { brand_id: "globex", version: 8 },
];

describe("per-brand data versions in a store that predates them", () => {
  it("start each brand's counter at its greatest stamp when a DuckDB store opens, and only once", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "mdq-brand-versions-"));
    try {
      await (await openDuckDbStore(dataDir)).close();
      const read = async (statements: string[], query: string[]) => {
        const instance = await DuckDBInstance.create(join(dataDir, "mdq.duckdb"));
        const connection = await instance.connect();
        try {
          for (const statement of statements) await connection.run(statement);
          const answers = [];
          for (const text of query) answers.push((await connection.runAndReadAll(text)).getRowObjectsJson());
          return answers;
        } finally {
          connection.closeSync();
          instance.closeSync();
        }
      };
      await read(["DROP TABLE brand_versions", "DROP TABLE brand_fx_versions", ...OLD_STAMPS], []);
      await (await openDuckDbStore(dataDir)).close();
      assert.deepEqual(await read([], [COUNTERS, FX]), [EXPECTED_COUNTERS, EXPECTED_FX]);
      // Opening again changes nothing, though a later write raised a counter.
      await read(["UPDATE brand_versions SET version = 10 WHERE brand_id = 'acme'"], []);
      await (await openDuckDbStore(dataDir)).close();
      assert.deepEqual(await read([], [COUNTERS, FX]), [
        [{ brand_id: "acme", version: 10 }, EXPECTED_COUNTERS[1]],
        EXPECTED_FX,
      ]);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("start each brand's counter at its greatest stamp in PostgreSQL's migration 4", async () => {
    const database = await createTestDatabase();
    try {
      await migrateDatabase(database.url);
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        await client.query("DROP TABLE brand_versions");
        await client.query("DROP TABLE brand_fx_versions");
        await client.query("DELETE FROM schema_migrations WHERE version = 4");
        for (const statement of OLD_STAMPS) await client.query(statement);
        assert.deepEqual((await migrateDatabase(database.url)).applied, ["4_brand_versions"]);
        assert.deepEqual((await client.query(COUNTERS)).rows, EXPECTED_COUNTERS);
        assert.deepEqual((await client.query(FX)).rows, EXPECTED_FX);
      } finally {
        await client.end();
      }
    } finally {
      await database.drop();
    }
  });
});
