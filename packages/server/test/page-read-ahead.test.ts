/**
 * The page cache reads ahead only for a walk (store/decorators/page-cache.ts): the page after one it holds is
 * read with the pages after it in one store read; page 1, and a page asked out of order, are read
 * alone; a walk at its batch's last page, with no other page read in flight, has the next batch
 * read before it asks it. Through the real DuckDB store, counting the pages each store read asks for.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { addDays } from "../src/calendar.js";
import { seedDemoRegion } from "../src/demo/demo-seed.js";
import { PageCache, pageBytes, READ_AHEAD_ROWS } from "../src/store/decorators/page-cache.js";
import { StoreDecorator } from "../src/store/decorators/store-decorator.js";
import { openDuckDbStore } from "../src/store/duckdb/duckdb-store.js";
import type { RecordsQuery, RowScope } from "../src/store/model/query-request.js";
import type { RecordsPage } from "../src/store/model/store.js";

const TODAY = "2025-06-01";
const PAGE_SIZE = 1000;

/**
 * A store that notes how many pages each records read asks for; while `held` is set, a read
 * sorted by IMPRESSIONS waits for it (another walk's read in flight).
 */
class CountingStore extends StoreDecorator {
  readonly asked: number[] = [];
  held: Promise<void> | null = null;
  override async queryRecords(query: RecordsQuery, pages?: number): Promise<RecordsPage[]> {
    this.asked.push(pages ?? 1);
    if (query.sort[0]?.field === "IMPRESSIONS") await this.held;
    return super.queryRecords(query, pages);
  }
}

/** The real DuckDB store seeded with the demo, behind a counting store and a page cache. */
async function readAheadFixture() {
  const store = await openDuckDbStore(":memory:");
  const demo = { region: "uk", authUrl: "http://auth.test", baseUrl: "http://api.test" };
  const { apps } = await seedDemoRegion(store, { ...demo, today: TODAY, days: 60, scale: 10 });
  const { brandClientId, markets, dataSources } = apps.find((app) => app.brandClientId === "brand-acme")!;
  const range = { from: addDays(TODAY, -60), to: addDays(TODAY, -1), channels: null, campaignIds: null };
  const scope: RowScope = { brandId: brandClientId, ...range, markets, dataSources };
  const counting = new CountingStore(store);
  return {
    store,
    counting,
    cache: (maxBytes = 64 * 1024 * 1024) => new PageCache(counting, maxBytes),
    scope,
  };
}

describe("page cache read-ahead", () => {
  const fixture = readAheadFixture();
  after(async () => (await fixture).store.close());

  it("reads page 1 alone, ahead for the walk after it, and a page asked out of order alone", async () => {
    const { counting, scope } = await fixture;
    const cache = (await fixture).cache();
    counting.asked.length = 0;
    const page = pageOf(scope, "CLICKS");
    const ahead = READ_AHEAD_ROWS / PAGE_SIZE;
    const first = await cache.queryRecords(page(1));
    assert.equal(first[0]!.rowCount, PAGE_SIZE, "the range holds more than a batch of pages");
    assert.deepEqual(counting.asked, [1], "page 1 is read alone");
    await cache.queryRecords(page(2));
    assert.deepEqual(counting.asked, [1, ahead], "page 2, after a held page 1, reads its batch");
    for (let number = 3; number <= ahead; number += 1) await cache.queryRecords(page(number));
    assert.deepEqual(counting.asked, [1, ahead], "the walk's next pages were read ahead");
    await cache.queryRecords(page(ahead + 1));
    assert.deepEqual(counting.asked, [1, ahead, ahead], "its batch's last page answered, the next is read");
    const next = await cache.queryRecords(page(ahead + 2));
    assert.deepEqual(
      counting.asked,
      [1, ahead, ahead],
      "the page after the batch was read before it was asked",
    );
    assert.deepEqual(next, await counting.queryRecords(page(ahead + 2)), "the same page as its own read");
    counting.asked.length = 3; // the read just above went to the store, not through the cache
    await cache.queryRecords(page(3 * ahead + 5));
    assert.deepEqual(counting.asked, [1, ahead, ahead, 1], "a page out of order is read alone");
    await cache.queryRecords(page(3 * ahead + 6));
    assert.deepEqual(counting.asked, [1, ahead, ahead, 1, ahead], "a walk from there reads ahead again");
  });

  it("keeps the pages read ahead for their walk while other answers fill the cache", async () => {
    const { counting, scope } = await fixture;
    const walk = pageOf(scope, "CLICKS");
    const other = pageOf(scope, "IMPRESSIONS");
    const ahead = READ_AHEAD_ROWS / PAGE_SIZE;
    const first = await counting.queryRecords(walk(1));
    // Room for the walk's pages read ahead, and for fewer answered pages than are asked below.
    const cache = (await fixture).cache((ahead + 2) * pageBytes(first[0]!));
    counting.asked.length = 0;
    await cache.queryRecords(walk(1));
    await cache.queryRecords(walk(2));
    assert.deepEqual(counting.asked, [1, ahead], "page 2 read its batch");
    // Another walk's every other page, each read alone and answered: more than the cache keeps
    // answered, so the walk's own answered pages are pushed out.
    const others = ahead + 4;
    for (let number = 0; number < others; number += 1) await cache.queryRecords(other(2 * number + 1));
    assert.deepEqual(counting.asked.slice(2), new Array(others).fill(1));
    counting.asked.length = 0;
    for (let number = 3; number <= ahead; number += 1) await cache.queryRecords(walk(number));
    assert.deepEqual(counting.asked, [], "the walk's pages read ahead waited for it");
  });

  it("reads a walk's next batch before it is asked only when no other page read is in flight", async () => {
    const { counting, scope } = await fixture;
    const cache = (await fixture).cache();
    const walk = pageOf(scope, "CLICKS");
    const ahead = READ_AHEAD_ROWS / PAGE_SIZE;
    let release = () => {};
    counting.held = new Promise<void>((resolve) => {
      release = resolve;
    });
    counting.asked.length = 0;
    const other = cache.queryRecords(pageOf(scope, "IMPRESSIONS")(1));
    for (let number = 1; number <= ahead + 1; number += 1) await cache.queryRecords(walk(number));
    assert.deepEqual(counting.asked, [1, 1, ahead], "beside another read, the next batch is not read early");
    release();
    counting.held = null;
    await other;
    await cache.queryRecords(walk(ahead + 2));
    assert.deepEqual(counting.asked, [1, 1, ahead, ahead], "asked, the page after the batch reads it");
  });
});

/** The pages of a walk of `scope` sorted by `field`, descending. */
function pageOf(scope: RowScope, field: "CLICKS" | "IMPRESSIONS") {
  return (number: number): RecordsQuery => ({
    scope,
    currency: "EUR",
    fields: ["recordId", "spend"],
    sort: [{ field, direction: "DESC" }],
    page: { page: number, pageSize: PAGE_SIZE },
  });
}
