import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { StoredRecord } from "@mdq/server";
import {
  type FaultProxy,
  type RunningService,
  type SeenRequest,
  startFaultProxy,
  startService,
} from "@mdq/test-support";
import {
  addDays,
  type MarketingRecord,
  MdqClient,
  MdqClientError,
  type MdqClientEvent,
  type MdqClientOptions,
} from "../src/index.js";

async function collect(client: MdqClient, from: string, to: string): Promise<MarketingRecord[]> {
  const rows: MarketingRecord[] = [];
  for await (const record of client.records({ from, to, pageSize: 1000 })) rows.push(record);
  return rows;
}

function isFirstPageOf(seen: SeenRequest, from: string): boolean {
  const variables = seen.body?.variables;
  const dateRange = variables?.["dateRange"] as { from?: string } | undefined;
  const pagination = variables?.["pagination"] as { page?: number } | undefined;
  return (
    seen.path === "/graphql" &&
    seen.body?.query?.includes("marketingRecords") === true &&
    dateRange?.from === from &&
    pagination?.page === 1
  );
}

/** What is stored for a day, rebuilt from what the API shows, with `change` applied. */
function storedOf(record: MarketingRecord, change: Partial<StoredRecord> = {}): StoredRecord {
  const { spend, conversions, revenue, currency: _shown, ...kept } = record;
  return {
    ...kept,
    spendE4: BigInt(Math.round(spend * 10_000)),
    conversionsE4: BigInt(Math.round(conversions * 10_000)),
    revenueE4: BigInt(Math.round(revenue * 10_000)),
    currency: "EUR",
    ...change,
  };
}

describe("a reload in the middle of a walk", { timeout: 60_000 }, () => {
  let region: RunningService<MdqClientOptions>;
  let proxy: FaultProxy;
  let direct: MdqClient;
  let brandId: string;

  before(async () => {
    region = await startService<MdqClientOptions>({ days: 120, scale: 4 });
    proxy = await startFaultProxy(region.url);
    direct = new MdqClient(region.clientOptions());
    brandId = region.credentials.apps[0]!.brandClientId;
  });
  after(async () => {
    await proxy.close();
    await region.close();
  });

  it("reads again only the days a load changed mid-walk and yields exactly the new data, each record once", async () => {
    const before = await collect(direct, region.firstDay, region.lastDay);
    const days = [addDays(region.firstDay, 5), addDays(region.firstDay, 6)];
    const onDays = before.filter((record) => days.includes(record.date));
    const dropped = onDays[0]!;
    const changed = onDays.slice(1);
    const reloaded = [
      ...changed.map((record) => storedOf(record, { impressions: record.impressions + 7 })),
      storedOf(dropped, { recordId: "reload-new-1" }),
    ];
    let reloads = 0;
    proxy.onResponse = async (seen) => {
      if (reloads === 0 && isFirstPageOf(seen, region.firstDay)) {
        reloads += 1;
        await region.service.store.replaceRecords(brandId, reloaded);
      }
    };
    const events: MdqClientEvent[] = [];
    const client = new MdqClient(
      region.clientOptions({ via: proxy.url, onEvent: (event) => events.push(event) }),
    );
    const rows = await collect(client, region.firstDay, region.lastDay);
    proxy.onResponse = undefined;

    assert.equal(reloads, 1);
    // The window met the load: only the two days it changed were read again (CONTRACT §6).
    assert.deepEqual(
      events.filter((event) => event.type === "window-restart"),
      [],
    );
    const repairs = events.filter((event) => event.type === "window-repair");
    assert.deepEqual(repairs, [
      { type: "window-repair", window: { from: region.firstDay, to: addDays(region.firstDay, 89) }, days },
    ]);
    assert.deepEqual(rows, await collect(direct, region.firstDay, region.lastDay));
    assert.equal(new Set(rows.map((record) => record.recordId)).size, rows.length);
    assert.equal(rows.length, before.length);
    const byId = new Map(rows.map((record) => [record.recordId, record]));
    assert.equal(byId.has(dropped.recordId), false);
    assert.equal(byId.get("reload-new-1")?.date, dropped.date);
    for (const record of changed)
      assert.equal(byId.get(record.recordId)?.impressions, record.impressions + 7);
  });

  it("gives up with DATA_CHANGED when the window changes on every try", async () => {
    const from = addDays(region.firstDay, 10);
    const to = addDays(region.firstDay, 39);
    const sample = (await collect(direct, from, from)).slice(0, 3);
    let reloads = 0;
    proxy.onResponse = async (seen) => {
      if (isFirstPageOf(seen, from)) {
        reloads += 1;
        await region.service.store.replaceRecords(
          brandId,
          sample.map((record) => storedOf(record)),
        );
      }
    };
    const client = new MdqClient(region.clientOptions({ via: proxy.url }));
    await assert.rejects(collect(client, from, to), (error: unknown) => {
      assert.ok(error instanceof MdqClientError);
      assert.equal(error.code, "DATA_CHANGED");
      return true;
    });
    proxy.onResponse = undefined;
    // 6 tries, plus the first try's repair: its fetch of the changed first day alone and its check
    // of page 1, each of which this proxy answers with yet another reload.
    assert.equal(reloads, 8);
  });
});
