/**
 * Parquet windows joined into one file (parquet/parquet-join.ts, the stores' Parquet exports):
 * files written by DuckDB's own `COPY`, joined, then read back by DuckDB, which follows every
 * moved offset (pages, dictionaries, bloom filters) and checks each page it reads, and by a second,
 * independent reader (hyparquet, JavaScript), which reads the joined footer's schema, row groups
 * and pages with code of its own.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { parquetMetadata, parquetReadObjects, parquetSchema } from "hyparquet";
import { joinedParquet } from "../src/parquet/parquet-join.js";

/** Rows `first` to `first + count - 1`: a day, a text with a dictionary, an amount, non-ASCII text. */
const windowSql = (first: number, count: number) => `
  SELECT i AS id, DATE '2026-01-01' + CAST(i // 5000 AS INTEGER) AS day, 'campaign ' || (i % 37) AS campaign,
    CAST(i AS DECIMAL(18, 2)) / 100 AS spend, 'Café – ' || i AS name
  FROM range(${first}, ${first + count}) t(i) ORDER BY i`;

/** The windows of the tests: a small first one, one of several row groups, one of a single row. */
const WINDOWS = [
  { first: 0, count: 3_000 },
  { first: 3_000, count: 40_000 },
  { first: 43_000, count: 1 },
];

async function* pathsOf(paths: readonly string[]): AsyncIterable<string> {
  yield* paths;
}

async function joined(paths: readonly string[]): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of joinedParquet(pathsOf(paths))) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe("Parquet windows joined into one file", () => {
  let work: string;
  let instance: DuckDBInstance;
  let duckdb: DuckDBConnection;
  const rowsOf = async (sql: string) => (await duckdb.runAndReadAll(sql)).getRowObjectsJS();

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "mdq-parquet-join-test-"));
    instance = await DuckDBInstance.create(":memory:");
    duckdb = await instance.connect();
  });
  after(async () => {
    duckdb.closeSync();
    instance.closeSync();
    await rm(work, { recursive: true, force: true });
  });

  const written = async (name: string, sql: string): Promise<string> => {
    const path = join(work, name);
    await duckdb.run(`COPY (${sql}) TO '${path}' (FORMAT parquet, ROW_GROUP_SIZE 16384)`);
    return path;
  };

  it("holds every window's rows in order, in the windows' own row groups", async () => {
    const paths = await Promise.all(
      WINDOWS.map(({ first, count }, index) => written(`window-${index}.parquet`, windowSql(first, count))),
    );
    const path = join(work, "joined.parquet");
    await writeFile(path, await joined(paths));
    const all = WINDOWS.reduce((sum, window) => sum + window.count, 0);
    assert.deepEqual(
      await rowsOf(`SELECT count(*)::INTEGER AS n, count(*) FILTER (WHERE id <> n0)::INTEGER AS out_of_order
        FROM (SELECT id, row_number() OVER () - 1 AS n0 FROM read_parquet('${path}'))`),
      [{ n: all, out_of_order: 0 }],
    );
    // Every value as written: the joined file against the same rows read from the windows.
    const windowsRead = paths.map((window) => `SELECT * FROM read_parquet('${window}')`).join(" UNION ALL ");
    assert.deepEqual(
      await rowsOf(`SELECT count(*)::INTEGER AS differing FROM (
        (SELECT * FROM read_parquet('${path}')) EXCEPT ALL (${windowsRead}))`),
      [{ differing: 0 }],
    );
    const groups = await rowsOf(`SELECT row_group_id, any_value(row_group_num_rows)::INTEGER AS rows,
        min(stats_min) FILTER (WHERE path_in_schema = 'id') AS first_id
      FROM parquet_metadata('${path}') GROUP BY row_group_id ORDER BY row_group_id`);
    const perWindow = await Promise.all(
      paths.map((window) =>
        rowsOf(`SELECT DISTINCT row_group_id, row_group_num_rows::INTEGER AS rows
          FROM parquet_metadata('${window}') ORDER BY row_group_id`),
      ),
    );
    assert.deepEqual(
      groups.map((group) => group["rows"]),
      perWindow.flat().map((group) => group["rows"]),
    );
    assert.equal(groups[0]!["first_id"], "0");
    assert.equal(groups[1]!["first_id"], "3000");
    // Filters read the moved statistics and bloom filters: each finds its rows.
    assert.deepEqual(
      await rowsOf(`SELECT count(*)::INTEGER AS n FROM read_parquet('${path}') WHERE name = 'Café – 43000'`),
      [{ n: 1 }],
    );
    assert.deepEqual(
      await rowsOf(
        `SELECT count(*)::INTEGER AS n FROM read_parquet('${path}') WHERE campaign = 'campaign 5'`,
      ),
      [{ n: Math.ceil((all - 5) / 37) }],
    );
  });

  it("reads, with a second and independent reader, every window's rows under one schema", async () => {
    const paths = await Promise.all(
      WINDOWS.map(({ first, count }, index) => written(`second-${index}.parquet`, windowSql(first, count))),
    );
    const bytes = await joined(paths);
    const file = new Uint8Array(bytes).buffer;
    const all = WINDOWS.reduce((sum, window) => sum + window.count, 0);
    const metadata = parquetMetadata(file);
    assert.equal(Number(metadata.num_rows), all);
    assert.deepEqual(
      metadata.row_groups.map((group) => Number(group.num_rows)),
      [3_000, 16_384, 16_384, 7_232, 1],
    );
    const schema = parquetSchema(metadata);
    assert.deepEqual(
      schema.children.map((column) => [column.element.name, column.element.type]),
      [
        ["id", "INT64"],
        ["day", "INT32"],
        ["campaign", "BYTE_ARRAY"],
        ["spend", "DOUBLE"],
        ["name", "BYTE_ARRAY"],
      ],
    );
    const rows = await parquetReadObjects({ file });
    assert.equal(rows.length, all);
    const expected = (id: number) => ({
      id: BigInt(id),
      day: new Date(Date.UTC(2026, 0, 1 + Math.floor(id / 5000))).toISOString().slice(0, 10),
      campaign: `campaign ${id % 37}`,
      spend: id / 100,
      name: `Café – ${id}`,
    });
    const differing = rows.filter((row, index) => {
      const want = expected(index);
      return (
        row["id"] !== want.id ||
        (row["day"] as Date).toISOString().slice(0, 10) !== want.day ||
        row["campaign"] !== want.campaign ||
        row["spend"] !== want.spend ||
        row["name"] !== want.name
      );
    });
    assert.deepEqual(differing, []);
  });

  it("is one window's file as it was when there is one window", async () => {
    const path = await written("alone.parquet", windowSql(0, 20_000));
    const joinedPath = join(work, "alone-joined.parquet");
    await writeFile(joinedPath, await joined([path]));
    assert.deepEqual(
      await rowsOf(`SELECT count(*)::INTEGER AS differing FROM (
        (SELECT * FROM read_parquet('${joinedPath}')) EXCEPT ALL (SELECT * FROM read_parquet('${path}')))`),
      [{ differing: 0 }],
    );
    assert.deepEqual(await rowsOf(`SELECT count(*)::INTEGER AS n FROM read_parquet('${joinedPath}')`), [
      { n: 20_000 },
    ]);
  });

  it("refuses windows whose columns differ, and a file that is not Parquet", async () => {
    const first = await written("a.parquet", windowSql(0, 10));
    const other = await written("b.parquet", "SELECT 1 AS id");
    await assert.rejects(joined([first, other]), /differ in their schema/);
    const text = join(work, "not.parquet");
    await writeFile(text, "recordId,date\nrec-1,2026-01-01\n");
    await assert.rejects(joined([text]), /is not a Parquet file/);
    const short = join(work, "short.parquet");
    await writeFile(short, "PAR1");
    await assert.rejects(joined([short]), /is not a Parquet file/);
  });
});
