/**
 * Compressed answers through the SDK (CONTRACT §8, docs/daily-sync.md "Compression"): by default
 * every request asks `Accept-Encoding: gzip, br` and the answers, compressed by the service, are
 * decoded to the same records; `compression: false` (`MDQ_CLIENT_COMPRESSION=off`) asks for
 * `identity` and gets the answers as they are.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { cliEnv, type RunningService, runCli, startFaultProxy, startService } from "@mdq/test-support";
import { MdqClient, type MdqClientOptions } from "../src/index.js";

/** One exchange as the client's fetch made it. */
interface Exchange {
  url: string;
  acceptEncoding: string | null;
  contentEncoding: string | null;
}

/** A fetch that records each exchange's codings, then answers as fetch does (decoding the body). */
function recordingFetch(exchanges: Exchange[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    exchanges.push({
      url: String(input),
      acceptEncoding: new Headers(init?.headers).get("accept-encoding"),
      contentEncoding: response.headers.get("content-encoding"),
    });
    return response;
  };
}

describe("compressed answers through the SDK", { timeout: 120_000 }, () => {
  let region: RunningService<MdqClientOptions>;

  before(async () => {
    region = await startService<MdqClientOptions>({ days: 30 });
  });
  after(() => region.close());

  /** Every record of the region's days, and the exchanges that fetched them. */
  async function walk(
    overrides: Partial<MdqClientOptions>,
  ): Promise<{ rows: unknown[]; exchanges: Exchange[] }> {
    const exchanges: Exchange[] = [];
    const client = new MdqClient(region.clientOptions({ fetch: recordingFetch(exchanges), ...overrides }));
    const rows: unknown[] = [];
    for await (const record of client.records({ from: region.firstDay, to: region.lastDay }))
      rows.push(record);
    return { rows, exchanges };
  }

  it("asks for gzip or brotli by default and decodes the compressed pages to the same records", async () => {
    const compressed = await walk({});
    const plain = await walk({ compression: false });
    assert.ok(compressed.rows.length > 500, `${compressed.rows.length} rows`);
    assert.deepEqual(compressed.rows, plain.rows);

    const graphql = (exchanges: Exchange[]) =>
      exchanges.filter((exchange) => exchange.url.endsWith("/graphql"));
    assert.ok(graphql(compressed.exchanges).length > 0);
    for (const exchange of compressed.exchanges) assert.equal(exchange.acceptEncoding, "gzip, br");
    // The pages are well over the service's 1 KiB threshold: brotli, MDQ's first choice of the two.
    for (const exchange of graphql(compressed.exchanges)) assert.equal(exchange.contentEncoding, "br");

    for (const exchange of plain.exchanges) {
      assert.equal(exchange.acceptEncoding, "identity");
      assert.equal(exchange.contentEncoding, null);
    }
  });

  it("mdq-client reads MDQ_CLIENT_COMPRESSION: off asks for identity, unset for gzip and brotli, another value exits 2", async () => {
    const proxy = await startFaultProxy(region.url);
    try {
      const env = (value: string | undefined) =>
        cliEnv(region, {
          overrides: { MDQ_AUTH_URL: proxy.url, MDQ_BASE_URL: proxy.url, MDQ_CLIENT_COMPRESSION: value },
        });
      for (const [value, asked] of [
        [undefined, "gzip, br"],
        ["on", "gzip, br"],
        ["off", "identity"],
      ] as const) {
        proxy.seen.length = 0;
        const run = await runCli(["readiness"], env(value));
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stdout, /READY/);
        assert.deepEqual(
          proxy.seen.map((seen) => [seen.path, seen.acceptEncoding]),
          [
            ["/oauth2/token", asked],
            ["/graphql", asked],
          ],
          String(value),
        );
      }
      const refused = await runCli(["readiness"], env("gzip"));
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /MDQ_CLIENT_COMPRESSION must be on or off/);
    } finally {
      await proxy.close();
    }
  });
});
