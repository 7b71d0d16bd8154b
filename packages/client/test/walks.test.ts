import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type RunningService, startService } from "@mdq/test-support";
import {
  addDays,
  type MarketingAggregate,
  type MarketingRecord,
  MdqClient,
  type MdqClientOptions,
  type Page,
} from "../src/index.js";

async function all<Row>(rows: AsyncIterable<Row>): Promise<Row[]> {
  const collected: Row[] = [];
  for await (const row of rows) collected.push(row);
  return collected;
}

describe("walking records and aggregates over many windows", { timeout: 60_000 }, () => {
  let region: RunningService<MdqClientOptions>;
  let client: MdqClient;
  let records: MarketingRecord[];

  before(async () => {
    region = await startService<MdqClientOptions>({ days: 200, scale: 2 });
    client = new MdqClient(region.clientOptions());
    records = await all(client.records({ from: region.firstDay, to: region.lastDay, pageSize: 1000 }));
  });
  after(() => region.close());

  it("pages through ≤ 90-day windows, oldest first, marking each window's last page", async () => {
    const pages: Page<MarketingRecord>[] = await all(
      client.recordPages({ from: region.firstDay, to: region.lastDay, pageSize: 1000 }),
    );
    const windows = [...new Map(pages.map((page) => [page.windowIndex, page.window])).values()];
    assert.deepEqual(windows, [
      { from: region.firstDay, to: addDays(region.firstDay, 89) },
      { from: addDays(region.firstDay, 90), to: addDays(region.firstDay, 179) },
      { from: addDays(region.firstDay, 180), to: region.lastDay },
    ]);
    for (const page of pages) {
      assert.equal(page.windowCount, 3);
      const lastOfWindow = pages.filter((other) => other.windowIndex === page.windowIndex).at(-1);
      assert.equal(page.lastInWindow, page === lastOfWindow);
      assert.equal(page.pageInfo.hasNextPage, !page.lastInWindow);
      for (const row of page.rows) assert.ok(row.date >= page.window.from && row.date <= page.window.to);
    }
    assert.deepEqual(
      pages.flatMap((page) => page.rows),
      records,
    );
  });

  it("returns every record of the range once, ordered by day then recordId", () => {
    assert.equal(new Set(records.map((record) => record.recordId)).size, records.length);
    const clicks = records.reduce((sum, record) => sum + record.clicks, 0);
    assert.ok(clicks > 0);
    for (let index = 1; index < records.length; index += 1) {
      const previous = records[index - 1]!;
      const current = records[index]!;
      assert.ok(
        previous.date < current.date ||
          (previous.date === current.date && previous.recordId < current.recordId),
        `${previous.recordId} before ${current.recordId}`,
      );
    }
  });

  it("walks newest window first when sorted by DATE_DAY descending, with any concurrency", async () => {
    for (const concurrency of [1, 4]) {
      const newest = await all(
        client.records({
          from: region.firstDay,
          to: region.lastDay,
          pageSize: 1000,
          concurrency,
          sort: [{ field: "DATE_DAY", direction: "DESC" }],
        }),
      );
      assert.equal(newest.length, records.length);
      assert.equal(newest[0]!.date, region.lastDay);
      for (let index = 1; index < newest.length; index += 1)
        assert.ok(newest[index - 1]!.date >= newest[index]!.date);
      assert.deepEqual(
        newest.map((record) => record.recordId).sort(),
        records.map((record) => record.recordId).sort(),
      );
    }
  });

  it("fetches only the fields asked for, recordId always, in the currency asked for", async () => {
    const from = addDays(region.lastDay, -3);
    const rows = await all(
      client.records({ from, to: region.lastDay, fields: ["spend", "currency"], currency: "GBP" }),
    );
    assert.ok(rows.length > 0);
    for (const row of rows) assert.deepEqual(Object.keys(row).sort(), ["currency", "recordId", "spend"]);
    for (const row of rows) assert.equal(row.currency, "GBP");
  });

  it("applies a filter to every window", async () => {
    const rows = await all(
      client.records({
        from: region.firstDay,
        to: region.lastDay,
        filter: { markets: ["GB"], channels: ["search"] },
      }),
    );
    assert.deepEqual(
      rows.map((record) => record.recordId),
      records
        .filter((record) => record.market === "GB" && record.channel === "search")
        .map((record) => record.recordId),
    );
  });

  it("aligns aggregate windows so that no ISO week or month is split", async () => {
    const clicks = records.reduce((sum, record) => sum + record.clicks, 0);
    for (const dimension of ["DATE_WEEK", "DATE_MONTH"] as const) {
      const rows: MarketingAggregate[] = await all(
        client.aggregate({
          from: region.firstDay,
          to: region.lastDay,
          metrics: ["CLICKS"],
          groupBy: [dimension],
        }),
      );
      const keys = rows.map((row) => row[dimension]);
      assert.equal(new Set(keys).size, keys.length, `${dimension} repeated`);
      assert.deepEqual(keys, [...keys].sort().reverse());
      assert.equal(
        rows.reduce((sum, row) => sum + (row.TOTAL_CLICKS ?? 0), 0),
        clicks,
      );
    }
  });

  it("gives one set of groups per window when no date is grouped, and null for unrequested totals", async () => {
    const rows = await all(
      client.aggregatePages({
        from: region.firstDay,
        to: region.lastDay,
        metrics: ["IMPRESSIONS"],
        groupBy: ["MARKET"],
      }),
    );
    assert.deepEqual(
      rows.map((page) => page.windowIndex),
      [0, 1, 2],
    );
    const markets = [...new Set(records.map((record) => record.market))].sort();
    for (const page of rows) {
      assert.deepEqual(
        page.rows.map((row) => row.MARKET),
        markets,
      );
      for (const row of page.rows) {
        assert.equal(row.TOTAL_CLICKS, null);
        assert.equal(row.DATE_DAY, null);
        assert.equal(row.currency, "EUR");
      }
    }
    assert.equal(
      rows.flatMap((page) => page.rows).reduce((sum, row) => sum + (row.TOTAL_IMPRESSIONS ?? 0), 0),
      records.reduce((sum, record) => sum + record.impressions, 0),
    );
  });

  it("stops fetching when the caller stops iterating", async () => {
    let pages = 0;
    const counting = new MdqClient(
      region.clientOptions({
        onEvent: (event) => {
          if (event.type === "page") pages += 1;
        },
      }),
    );
    for await (const _ of counting.records({ from: region.firstDay, to: region.lastDay, pageSize: 1000 }))
      break;
    const seen = pages;
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(pages, seen);
    assert.ok(seen < 20, `fetched ${seen} pages for one record`);
  });

  it("refuses an unknown field, metric or dimension before sending anything", async () => {
    const fresh = new MdqClient(region.clientOptions());
    await assert.rejects(
      all(fresh.records({ from: region.firstDay, to: region.lastDay, fields: ["spend", "nope" as "spend"] })),
      { code: "INVALID_CONFIG" },
    );
    await assert.rejects(
      all(
        fresh.aggregate({
          from: region.firstDay,
          to: region.lastDay,
          metrics: ["CLICKS", "} evil {" as "CLICKS"],
        }),
      ),
      { code: "INVALID_CONFIG" },
    );
    await assert.rejects(all(fresh.records({ from: region.lastDay, to: region.firstDay })), {
      code: "INVALID_DATE_RANGE",
    });
    assert.equal(fresh.tokenRequestCount, 0);
  });
});
