/**
 * The buffers records pages' JSON is written into (graphql/response-buffers.ts): reused once a
 * response has been handed to the socket, never while a reader is still taking it. Over a real
 * socket, a client that stops reading in the middle of a 5000-row page gets the same bytes as one
 * that reads at once, while other pages are written meanwhile: a Unix socket, whose buffers (a few
 * hundred KB, not grown as TCP's are) hold the service's writes until the reader takes them.
 */
import assert from "node:assert/strict";
import { request } from "node:http";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { addDays, useTestRegion } from "@mdq/test-support";
import { ResponseBuffers } from "../src/graphql/response-buffers.js";

const RECORDS = `query($c: ID!, $from: Date!, $to: Date!, $cur: Currency, $p: PaginationInput) {
  marketingRecords(clientId: $c, dateRange: {from: $from, to: $to}, currency: $cur, pagination: $p) {
    recordId date market dataSource channel campaignId campaignName impressions clicks spend conversions revenue currency
  }
}`;

describe("response buffers", () => {
  it("hands out power-of-two buffers of at least 64 KiB and reuses one given back", () => {
    const buffers = new ResponseBuffers(1024 * 1024);
    const small = buffers.take(10);
    assert.equal(small.length, 64 * 1024);
    const page = buffers.take(300_000);
    assert.equal(page.length, 512 * 1024);
    buffers.give(page.subarray(0, 300_000));
    const again = buffers.take(400_000);
    assert.equal(again.buffer, page.buffer, "the buffer given back is taken again");
    assert.notEqual(buffers.take(400_000).buffer, page.buffer, "and only once");
  });

  it("keeps free buffers within its budget and ignores a view it did not hand out or got back already", () => {
    const buffers = new ResponseBuffers(128 * 1024);
    const [first, second, third] = [buffers.take(1), buffers.take(1), buffers.take(1)];
    buffers.give(first);
    buffers.give(second);
    buffers.give(third);
    const taken = [buffers.take(1), buffers.take(1), buffers.take(1)].map((buffer) => buffer.buffer);
    assert.ok(taken.includes(first.buffer) && taken.includes(second.buffer), "two fit the 128 KiB budget");
    assert.ok(!taken.includes(third.buffer), "the third was left to the garbage collector");

    const foreign = Buffer.alloc(64 * 1024);
    buffers.give(foreign);
    assert.notEqual(buffers.take(1).buffer, foreign.buffer, "a buffer not handed out is never handed out");
    const once = buffers.take(1);
    buffers.give(once);
    buffers.give(once);
    assert.equal(buffers.take(1).buffer, once.buffer);
    assert.notEqual(buffers.take(1).buffer, once.buffer, "given back twice, it is still taken once");
  });

  describe("over a real socket", () => {
    const suite = useTestRegion({ days: 95, scale: 3 });
    let socketPath: string;
    let token: string;
    let brandId: string;
    before(async () => {
      const { region } = suite;
      socketPath = join(region.dataDir, "service.sock");
      await region.service.app.listen({ path: socketPath });
      const app = region.credentials.apps[0]!;
      brandId = app.brandClientId;
      token = await region.token(app.appClientId);
    });

    /** A records page's request body: 5000 rows of the 90 days ending `daysBack` days ago. */
    function body(currency: string, daysBack: number, page = 1): string {
      const to = addDays(suite.region.today, -daysBack);
      const variables = {
        c: brandId,
        from: addDays(to, -89),
        to,
        cur: currency,
        p: { page, pageSize: 5000 },
      };
      return JSON.stringify({ query: RECORDS, variables });
    }

    /**
     * POSTs `payload`; `paused` is awaited after the first chunk arrives, before the rest is read
     * (the server's writes wait for the reader meanwhile).
     */
    function post(payload: string, paused?: () => Promise<void>): Promise<Buffer> {
      return new Promise((resolve, reject) => {
        const call = request(
          {
            socketPath,
            path: "/graphql",
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          },
          (response) => {
            const chunks: Buffer[] = [];
            let waited = paused === undefined;
            response.on("data", (chunk: Buffer) => {
              chunks.push(chunk);
              if (waited) return;
              waited = true;
              response.pause();
              paused!().then(() => response.resume(), reject);
            });
            response.on("end", () => resolve(Buffer.concat(chunks)));
            response.on("error", reject);
          },
        );
        call.on("error", reject);
        call.end(payload);
      });
    }

    it("gives a page's buffer back only once its reader has it: a slow reader's page is whole", async () => {
      const others = ["USD", "GBP", "JPY", "NOK", "CHF", "DKK"].map((currency, index) =>
        body(currency, 2 + index),
      );
      const othersAnswered: Buffer[] = [];
      const slow = await post(body("EUR", 1), async () => {
        // While the slow reader holds its page unread, the service writes six more pages.
        othersAnswered.push(...(await Promise.all(others.map((payload) => post(payload)))));
      });
      const rows = (text: Buffer) =>
        (JSON.parse(text.toString()) as { data: { marketingRecords: unknown[] } }).data.marketingRecords;
      assert.ok(slow.length > 1_000_000, `a page larger than the socket's buffers (${slow.length} bytes)`);
      assert.equal(rows(slow).length, 5000);
      // Asked again (the page cache answers it; its JSON is written anew), the same bytes.
      assert.deepEqual(slow, await post(body("EUR", 1)));
      for (const [index, payload] of others.entries())
        assert.deepEqual(othersAnswered[index], await post(payload), `page ${index + 1} of the others`);
    });
  });
});
