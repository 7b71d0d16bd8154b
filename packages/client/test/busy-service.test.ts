/**
 * A busy service (CONTRACT §8, issue 55): a records page shed with 503 `SERVICE_UNAVAILABLE` and
 * `Retry-After` is retried after that many seconds, as a 429 is, and the walk ends with every row.
 * The service's heavy lane is held by the test (one place, no queue), so the first page is shed
 * for certain and the place is given back when the SDK reports the retry it waits for.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type RunningService, startService } from "@mdq/test-support";
import { MdqClient, type MdqClientEvent, type MdqClientOptions } from "../src/index.js";

describe("a busy service", { timeout: 60_000 }, () => {
  let region: RunningService<MdqClientOptions>;

  before(async () => {
    region = await startService<MdqClientOptions>({ days: 10, heavyConcurrency: 1, queueMaxLength: 0 });
  });
  after(() => region.close());

  it("waits Retry-After on a shed records page, retries it, and gets every row", async () => {
    const range = { from: region.firstDay, to: region.lastDay };
    const expected: string[] = [];
    for await (const row of new MdqClient(region.clientOptions()).records({ ...range, fields: [] }))
      expected.push(row.recordId);
    assert.ok(expected.length > 0);

    const release = await region.service.lanes.heavy.admit("brand-holding-the-lane");
    const events: MdqClientEvent[] = [];
    const client = new MdqClient(
      region.clientOptions({
        onEvent(event) {
          events.push(event);
          if (event.type === "retry") release();
        },
      }),
    );
    const rows: string[] = [];
    for await (const row of client.records({ ...range, fields: [] })) rows.push(row.recordId);

    assert.deepEqual(rows, expected);
    const retries = events.filter((event) => event.type === "retry");
    assert.deepEqual(retries, [
      {
        type: "retry",
        attempt: 1,
        delayMs: 2000,
        reason: "status",
        status: 503,
        url: `${region.url}/graphql`,
      },
    ]);
    assert.equal(
      await region.service.metrics.value("mdq_shed_requests_total", { class: "heavy", reason: "queue_full" }),
      1,
    );
  });
});
