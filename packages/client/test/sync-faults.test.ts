import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  type FaultProxy,
  graphqlError,
  type RunningService,
  startFaultProxy,
  startService,
  unauthenticated,
} from "@mdq/test-support";
import { type MarketingRecord, MdqClient, type MdqClientEvent, type MdqClientOptions } from "../src/index.js";

/** Sums TOTAL_IMPRESSIONS of the service's own grand totals, one per window. */
async function impressionsTotal(client: MdqClient, from: string, to: string): Promise<number> {
  let total = 0;
  for await (const row of client.aggregate({ from, to, metrics: ["IMPRESSIONS"], groupBy: [] })) {
    total += row.TOTAL_IMPRESSIONS ?? 0;
  }
  return total;
}

async function collect(
  client: MdqClient,
  from: string,
  to: string,
  pageSize = 1000,
): Promise<MarketingRecord[]> {
  const rows: MarketingRecord[] = [];
  for await (const record of client.records({ from, to, pageSize })) rows.push(record);
  return rows;
}

describe("a sync through a faulty network", { timeout: 60_000 }, () => {
  let region: RunningService<MdqClientOptions>;
  let proxy: FaultProxy;
  let expected: MarketingRecord[];
  let expectedImpressions: number;

  before(async () => {
    region = await startService<MdqClientOptions>({ days: 120, scale: 4 });
    proxy = await startFaultProxy(region.url);
    const direct = new MdqClient(region.clientOptions());
    expected = await collect(direct, region.firstDay, region.lastDay);
    expectedImpressions = await impressionsTotal(direct, region.firstDay, region.lastDay);
  });
  after(async () => {
    await proxy.close();
    await region.close();
  });

  it("walks every page of every ≤ 90-day window and yields each record once", () => {
    assert.ok(expected.length > 5000, `only ${expected.length} rows`);
    assert.equal(new Set(expected.map((record) => record.recordId)).size, expected.length);
    assert.equal(
      expected.reduce((sum, record) => sum + record.impressions, 0),
      expectedImpressions,
    );
    const days = expected.map((record) => record.date);
    assert.equal(days[0], region.firstDay);
    assert.equal(days.at(-1), region.lastDay);
    assert.deepEqual([...days].sort(), days);
  });

  it("finishes with exactly the service's rows despite 429, 401, 503, drops, 500 and a slow answer", async () => {
    const events: MdqClientEvent[] = [];
    proxy.script("/oauth2/token", [graphqlError(503, "SERVICE_UNAVAILABLE"), "pass"]);
    proxy.script("/graphql", [
      "pass",
      graphqlError(429, "RATE_LIMITED", { "retry-after": "1" }),
      "pass",
      graphqlError(503, "SERVICE_UNAVAILABLE"),
      graphqlError(503, "SERVICE_UNAVAILABLE"),
      "pass",
      "drop",
      "pass",
      unauthenticated(),
      "pass",
      { delayMs: 3500 },
      "pass",
      graphqlError(500, "INTERNAL_SERVER_ERROR"),
    ]);
    const client = new MdqClient(
      region.clientOptions({
        via: proxy.url,
        timeoutMs: 2500,
        backoffBaseMs: 10,
        backoffCapMs: 50,
        onEvent: (event) => events.push(event),
      }),
    );
    const started = Date.now();
    const rows = await collect(client, region.firstDay, region.lastDay);
    const elapsed = Date.now() - started;

    assert.equal(proxy.pending("/graphql"), 0);
    assert.equal(proxy.pending("/oauth2/token"), 0);
    assert.deepEqual(rows, expected);
    assert.equal(new Set(rows.map((record) => record.recordId)).size, expected.length);
    assert.equal(
      rows.reduce((sum, record) => sum + record.impressions, 0),
      expectedImpressions,
    );
    // One token at the start (its first attempt got a 503), one renewal after the 401.
    assert.equal(client.tokenRequestCount, 2);
    assert.equal(proxy.count("/oauth2/token"), 3);
    const rateLimited = events.filter((event) => event.type === "rate-limited");
    assert.deepEqual(
      rateLimited.map((event) => event.type === "rate-limited" && event.retryAfterSeconds),
      [1],
    );
    const reasons = events.flatMap((event) => (event.type === "retry" ? [event.reason] : []));
    assert.deepEqual(reasons.sort(), [
      "network",
      "status",
      "status",
      "status",
      "status",
      "status",
      "timeout",
    ]);
    assert.equal(events.filter((event) => event.type === "token-rejected").length, 1);
    assert.ok(elapsed >= 1000, `the 429's Retry-After of 1 s was not waited (${elapsed} ms)`);
  });
});
