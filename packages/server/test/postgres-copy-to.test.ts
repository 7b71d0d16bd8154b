/**
 * PostgreSQL statements read through `COPY ... TO STDOUT` (store/postgres/copy-to.ts), as a
 * packed records page is: its binary format read whole, text as the UTF-8 bytes the server sent,
 * parameters written in as literals, under the client's read timeout; a failing COPY rejects and
 * leaves its connection usable.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestDatabase, type TestDatabase } from "@mdq/test-support";
import pg from "pg";
import { readBinaryCopy, withLiterals } from "../src/store/postgres/copy-to.js";

describe("PostgreSQL COPY reads", () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  before(async () => {
    database = await createTestDatabase("copyto");
    pool = new pg.Pool({ connectionString: database.url, max: 1 });
  });
  after(async () => {
    await pool.end();
    await database.drop();
  });

  it("reads a binary COPY's rows whole: a bigint's eight bytes, text as its UTF-8 bytes, NULL as null", async () => {
    const client = await pool.connect();
    try {
      const text = "Acme GB Search – Holiday Gifting \u0001 café 🚀 'quoted'";
      const rows = await readBinaryCopy(client, {
        sql: "SELECT count(*) AS n, string_agg(t, $1) AS packed, NULL::text AS nothing FROM (VALUES ($2), ($3)) v(t)",
        params: ["\u0001", text, "second"],
      });
      assert.equal(rows.length, 1);
      const [count, packed, nothing] = rows[0]!;
      assert.equal(count!.readBigInt64BE(0), 2n);
      assert.deepEqual(packed, Buffer.from(`${text}\u0001second`, "utf8"));
      assert.equal(nothing, null);
      const empty = await readBinaryCopy(client, { sql: "SELECT 1 WHERE false", params: [] });
      assert.deepEqual(empty, []);
    } finally {
      client.release();
    }
  });

  it("writes parameters in as quoted literals, a quote or backslash in a string included", async () => {
    const client = await pool.connect();
    try {
      const tricky = "it's a \\ backslash'; DROP TABLE x; --";
      assert.equal(
        withLiterals(client, { sql: "SELECT $1, $2, $10", params: [tricky, 42, ...Array(7).fill(0), "ten"] }),
        `SELECT ${client.escapeLiteral(tricky)}, 42, 'ten'`,
      );
      const rows = await readBinaryCopy(client, { sql: "SELECT $1::text", params: [tricky] });
      assert.equal(rows[0]?.[0]?.toString("utf8"), tricky);
    } finally {
      client.release();
    }
  });

  it("keeps the client's read timeout: a COPY that outlasts it is refused, as any statement is", async () => {
    const bounded = new pg.Pool({ connectionString: database.url, max: 1, query_timeout: 200 });
    const client = await bounded.connect();
    try {
      await assert.rejects(
        readBinaryCopy(client, { sql: "SELECT pg_sleep(2)", params: [] }),
        /Query read timeout/,
      );
    } finally {
      client.release(true);
      await bounded.end();
    }
  });

  it("rejects with PostgreSQL's error when the statement fails, and the connection answers after", async () => {
    const client = await pool.connect();
    try {
      await assert.rejects(
        readBinaryCopy(client, {
          sql: "SELECT 1 / (count(*) - count(*)) FROM (VALUES (1)) v(x)",
          params: [],
        }),
        /division by zero/,
      );
      const { rows } = await client.query("SELECT 7 AS seven");
      assert.deepEqual(rows, [{ seven: 7 }]);
    } finally {
      client.release();
    }
  });
});
