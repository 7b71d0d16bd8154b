/**
 * A DuckDB `COPY` read back through a named pipe as it is written (load/copy-pipe.ts), and copied
 * by PostgreSQL while it is (store/postgres/copy-records.ts `copyCsv`), as a PostgreSQL load's
 * checked rows are: the bytes are the statement's whole output; a statement that fails mid-way
 * fails the reader, never ends it, so PostgreSQL's COPY aborts and its table gains nothing; a
 * reader that stops early (PostgreSQL refused a row) stops the statement, and nothing is left in
 * the temporary folder.
 */
import assert from "node:assert/strict";
import { readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { createTestDatabase, type TestDatabase } from "@mdq/test-support";
import pg from "pg";
import { copiedThroughPipe } from "../src/load/copy-pipe.js";
import { copyCsv } from "../src/store/postgres/copy-records.js";

/** This process's load work directories in the temporary folder (copy-pipe.ts makes its pipe in one). */
async function loadWorkDirs(): Promise<string[]> {
  return (await readdir(tmpdir())).filter((name) => name.startsWith(`mdq-load-${process.pid}-`));
}

async function bytesOf(chunks: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts);
}

/** 300,000 rows in order, a few MB: many times what a pipe holds. */
const rows = () => "SELECT i AS n, 'row ' || i AS label FROM range(300000) t(i) ORDER BY i";

/**
 * 3,000,000 rows in the order of their scan, a row past 2,500,000 failing the statement, which
 * has written what came before by then (one thread: the scan is in order).
 */
const failingRows = () =>
  `SELECT i AS n, 'row ' || i AS label FROM range(3000000) t(i)
    WHERE CASE WHEN i > 2500000 THEN error('the source broke at ' || i) ELSE true END`;

describe("a DuckDB COPY through a named pipe", () => {
  let instance: DuckDBInstance;
  let database: TestDatabase;
  let pool: pg.Pool;
  before(async () => {
    instance = await DuckDBInstance.create(":memory:", { threads: "1" });
    database = await createTestDatabase("copypipe");
    pool = new pg.Pool({ connectionString: database.url, max: 1 });
    await pool.query("CREATE TABLE copied (n bigint NOT NULL, label text NOT NULL)");
  });
  after(async () => {
    await pool.end();
    await database.drop();
    instance.closeSync();
  });

  it("reads every byte the statement writes, the same as its file", async () => {
    const connection = await instance.connect();
    const file = join(tmpdir(), `mdq-copy-pipe-test-${process.pid}.csv`);
    try {
      const piped = await bytesOf(copiedThroughPipe(connection, rows(), "FORMAT csv, HEADER false"));
      await connection.run(`COPY (${rows()}) TO '${file}' (FORMAT csv, HEADER false)`);
      assert.equal(piped.length, (await readFile(file)).length);
      assert.ok(piped.equals(await readFile(file)));
      assert.ok(piped.toString("utf8").endsWith("299999,row 299999\n"));
      assert.deepEqual(await loadWorkDirs(), []);
    } finally {
      connection.closeSync();
      await rm(file, { force: true });
    }
  });

  it("fails the reader when the statement fails mid-way: PostgreSQL's COPY aborts, its table gains nothing", async () => {
    const connection = await instance.connect();
    const client = await pool.connect();
    try {
      const read: Uint8Array[] = [];
      await assert.rejects(async () => {
        for await (const chunk of copiedThroughPipe(connection, failingRows(), "FORMAT csv, HEADER false"))
          read.push(chunk);
      }, /the source broke at/);
      assert.ok(read.length > 0, "rows came before the failure");
      await assert.rejects(
        copyCsv(client, "copied", ["n", "label"], {
          bytes: () => copiedThroughPipe(connection, failingRows(), "FORMAT csv, HEADER false"),
        }),
        /the source broke at/,
      );
      const { rows: counted } = await client.query("SELECT count(*)::int AS n FROM copied");
      assert.equal(counted[0].n, 0);
      // The connection is usable again, and a whole copy goes in.
      const copied = await copyCsv(client, "copied", ["n", "label"], {
        bytes: () => copiedThroughPipe(connection, rows(), "FORMAT csv, HEADER false"),
      });
      assert.equal(copied, 300_000);
      assert.deepEqual(await loadWorkDirs(), []);
    } finally {
      await client.query("TRUNCATE copied");
      client.release();
      connection.closeSync();
    }
  });

  it("stops the statement when the reader stops early (PostgreSQL refused a row), leaving no pipe behind", async () => {
    const connection = await instance.connect();
    const client = await pool.connect();
    try {
      // A label is no bigint: PostgreSQL refuses the first line, while DuckDB still writes.
      await assert.rejects(
        copyCsv(client, "copied", ["label", "n"], {
          bytes: () => copiedThroughPipe(connection, rows(), "FORMAT csv, HEADER false"),
        }),
        /invalid input syntax for type bigint/,
      );
      assert.deepEqual(await loadWorkDirs(), []);
      // The DuckDB connection ran to its end: it answers the next statement.
      const answer = await connection.runAndReadAll("SELECT 42 AS n");
      assert.equal(Number(answer.getRowObjectsJS()[0]?.["n"]), 42);
    } finally {
      client.release();
      connection.closeSync();
    }
  });
});
