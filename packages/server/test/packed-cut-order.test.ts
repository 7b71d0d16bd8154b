/**
 * A page sorted by the day alone, read over the days it spans, joins its rows in the order the
 * cut hands them (store/reads/records/records-plan.ts `PlannedPackedPage.inCutOrder`), which the engine does not
 * promise: the reader checks that order (packed-page.ts `inDayOrder`) and reads the page again
 * sorted when it does not hold. Checked against a reference order, and through the real DuckDB
 * engine answering the cut's rows out of order.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import fc from "fast-check";
import { addDays } from "../src/calendar.js";
import { seedDemoRegion } from "../src/demo/demo-seed.js";
import { snapshotReader } from "../src/store/duckdb/duckdb-snapshot.js";
import { DUCKDB_FILE, openDuckDbStore } from "../src/store/duckdb/duckdb-store.js";
import type { SnapshotReader } from "../src/store/model/engine.js";
import type { RecordsQuery } from "../src/store/model/query-request.js";
import { RECORD_FIELDS } from "../src/store/model/query-request.js";
import { inDayOrder, PackedKind, packedPages } from "../src/store/reads/records/packed-page.js";
import { readRecordsPages } from "../src/store/reads/records/records-reader.js";
import { WalkMemory } from "../src/store/reads/walk-memory.js";
import { PACKED_VALUE_SEPARATOR } from "../src/store/sql/packed-format.js";

/** Whether rows of (day, record id) run in a day sort's order: ids by their UTF-8 bytes. */
function inReferenceOrder(rows: readonly (readonly [string, string])[], direction: "ASC" | "DESC"): boolean {
  return rows.every((row, index) => {
    if (index === 0) return true;
    const [day, id] = row;
    const [lastDay, lastId] = rows[index - 1]!;
    if (day !== lastDay) return direction === "DESC" ? day < lastDay : day > lastDay;
    return Buffer.compare(Buffer.from(lastId), Buffer.from(id)) < 0;
  });
}

describe("rows joined in the cut's order", () => {
  it("are found in a day sort's order exactly when they are, ids compared by their UTF-8 bytes", () => {
    const day = fc.constantFrom("2025-01-01", "2025-01-02", "2025-01-03");
    // Ids whose UTF-8 and UTF-16 orders differ (U+FF5E against U+1F600), and shared prefixes.
    const id = fc.string({ unit: fc.constantFrom("a", "b", "～", "😀", "é", '"'), maxLength: 4 });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(day, id), { minLength: 1, maxLength: 25 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 6 }),
        fc.constantFrom<"ASC" | "DESC">("ASC", "DESC"),
        (unsorted, sort, pageSize, direction) => {
          const rows = sort
            ? [...unsorted].sort(([dayA, idA], [dayB, idB]) =>
                dayA === dayB
                  ? Buffer.compare(Buffer.from(idA), Buffer.from(idB))
                  : (dayA < dayB ? -1 : 1) * (direction === "DESC" ? -1 : 1),
              )
            : unsorted;
          const bytes = Buffer.from(rows.flat().join(PACKED_VALUE_SEPARATOR));
          const expected = inReferenceOrder(rows, direction);
          // Ids kept as the page's bytes, and read as strings (a page read escaped).
          for (const idKind of [PackedKind.Utf8, PackedKind.Text]) {
            const pages = packedPages(bytes, rows.length, {
              kinds: [PackedKind.Text, idKind],
              pageSize,
              escaped: false,
            });
            assert.ok(pages);
            assert.equal(inDayOrder(pages, { date: 0, recordId: 1 }, direction), expected);
          }
        },
      ),
    );
  });

  const TODAY = "2025-06-01";
  const fixture = (async () => {
    const dir = await mkdtemp(join(tmpdir(), "mdq-cut-order-"));
    const store = await openDuckDbStore(dir);
    const demo = { region: "uk", authUrl: "http://auth.test", baseUrl: "http://api.test" };
    const { apps } = await seedDemoRegion(store, { ...demo, today: TODAY, days: 30, scale: 5 });
    await store.close();
    const app = apps.find((candidate) => candidate.brandClientId === "brand-acme")!;
    const instance = await DuckDBInstance.create(join(dir, DUCKDB_FILE), { threads: "1" });
    const connection = await instance.connect();
    const query: RecordsQuery = {
      scope: {
        brandId: app.brandClientId,
        from: addDays(TODAY, -30),
        to: addDays(TODAY, -1),
        markets: app.markets,
        dataSources: app.dataSources,
        channels: null,
        campaignIds: null,
      },
      currency: "EUR",
      fields: RECORD_FIELDS,
      sort: [{ field: "DATE_DAY", direction: "DESC" }],
      page: { page: 1, pageSize: 500 },
    };
    return { dir, instance, connection, query };
  })();
  after(async () => {
    const { dir, instance, connection } = await fixture;
    connection.closeSync();
    instance.closeSync();
    await rm(dir, { recursive: true, force: true });
  });

  /** The snapshot reader of the fixture's DuckDB, noting each packed statement it runs. */
  async function readerOf(answer: (sql: string) => string = (sql) => sql) {
    const { connection } = await fixture;
    const reader = snapshotReader(connection, async () => null);
    const packed: string[] = [];
    const noting: SnapshotReader = {
      ...reader,
      runPacked: (statement) => {
        packed.push(statement.sql);
        return reader.runPacked({ ...statement, sql: answer(statement.sql) });
      },
    };
    return { reader: noting, packed };
  }

  it("reads the page again sorted when the engine hands the cut's rows out of order", async () => {
    const { query } = await fixture;
    const plain = await readerOf();
    const expected = await readRecordsPages(plain.reader, query, new WalkMemory(), 6);
    assert.equal(expected.length, 6, "the range holds six pages");
    assert.equal(plain.packed.length, 1);
    assert.match(plain.packed[0]!, /string_agg\(p\.line, chr\(1\)\)/, "joined in the cut's order");

    // The same engine, asked for the cut's rows with each day's ids descending, unsorted.
    const shuffled = await readerOf((sql) =>
      /string_agg\(p\.line, chr\(1\)\)/.test(sql)
        ? sql.replace("r.record_id ASC LIMIT", "r.record_id DESC LIMIT")
        : sql,
    );
    const pages = await readRecordsPages(shuffled.reader, query, new WalkMemory(), 6);
    assert.equal(shuffled.packed.length, 2, "read again");
    assert.match(shuffled.packed[1]!, /ORDER BY p\.k0 DESC, p\.record_id ASC/, "sorted as it is joined");
    assert.deepEqual(pages, expected);
  });
});
