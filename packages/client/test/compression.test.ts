/**
 * Compressed answers through the SDK (CONTRACT §8, docs/daily-sync.md "Compression"): by default
 * every request asks `Accept-Encoding: gzip, br` and the answers, compressed by the service, are
 * read whole and decoded in one shot (http-exchange.ts) to the same records; `compression: false`
 * (`MDQ_CLIENT_COMPRESSION=off`) asks for `identity` and gets the answers as they are. A `fetch`
 * given in the options still sends every request, decoding as it reads. An answer the client
 * cannot decode, or that decodes to more than `maxBodyBytes`, fails with SERVER_ANSWER_INVALID and
 * is not asked again.
 */
import assert from "node:assert/strict";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, describe, it } from "node:test";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import {
  cliEnv,
  type FaultProxy,
  freePort,
  type RunningService,
  runCli,
  type SeenRequest,
  startFaultProxy,
  startService,
} from "@mdq/test-support";
import { HttpTransport } from "../src/http-transport.js";
import {
  DEFAULT_RETRY_POLICY,
  MdqClient,
  MdqClientError,
  type MdqClientEvent,
  type MdqClientOptions,
  RequestBudget,
} from "../src/index.js";

/** One exchange as the client's fetch made it. */
interface FetchExchange {
  url: string;
  acceptEncoding: string | null;
  contentEncoding: string | null;
}

/** A fetch that records each exchange's codings, then answers as fetch does (decoding the body). */
function recordingFetch(exchanges: FetchExchange[]): typeof fetch {
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
  let proxy: FaultProxy;

  before(async () => {
    region = await startService<MdqClientOptions>({ days: 30 });
  });
  beforeEach(async () => {
    await proxy?.close();
    proxy = await startFaultProxy(region.url);
  });
  after(async () => {
    await proxy.close();
    await region.close();
  });

  /** Every record of the region's days, fetched by a client with `overrides`. */
  async function walk(overrides: Parameters<typeof region.clientOptions>[0]): Promise<unknown[]> {
    const client = new MdqClient(region.clientOptions(overrides));
    const rows: unknown[] = [];
    for await (const record of client.records({ from: region.firstDay, to: region.lastDay }))
      rows.push(record);
    return rows;
  }

  /** The requests the proxy saw since the last call, and forgets them. */
  function seenSinceLast(): SeenRequest[] {
    return proxy.seen.splice(0);
  }

  it("asks for gzip or brotli by default and decodes the brotli pages to the same records", async () => {
    const compressed = await walk({ via: proxy.url });
    const compressedSeen = seenSinceLast();
    const plain = await walk({ via: proxy.url, compression: false });
    const plainSeen = seenSinceLast();
    assert.ok(compressed.length > 500, `${compressed.length} rows`);
    assert.deepEqual(compressed, plain);

    const graphql = compressedSeen.filter((seen) => seen.path === "/graphql");
    assert.ok(graphql.length > 0);
    assert.ok(compressedSeen.some((seen) => seen.path === "/oauth2/token"));
    for (const seen of compressedSeen) assert.equal(seen.acceptEncoding, "gzip, br");
    // Every request says who asks, the token request too.
    for (const seen of [...compressedSeen, ...plainSeen]) assert.equal(seen.userAgent, "mdq-client/0.1");
    // The pages are well over the service's 1 KiB threshold: brotli, MDQ's first choice of the two.
    for (const seen of graphql) assert.equal(seen.contentEncoding, "br");

    assert.ok(plainSeen.length > 0);
    for (const seen of plainSeen) {
      assert.equal(seen.acceptEncoding, "identity");
      assert.equal(seen.contentEncoding, undefined);
    }
  });

  it("asks gzip of a text export by default and identity with compression off, the same records either way", async () => {
    const exported = async (compression: boolean) => {
      const client = new MdqClient(region.clientOptions({ via: proxy.url, compression }));
      const rows: unknown[] = [];
      for await (const record of client.exportRecords({ from: region.firstDay, to: region.lastDay }))
        rows.push(record);
      const seen = seenSinceLast().filter((entry) => entry.path === "/export/marketing-records");
      return { rows, seen };
    };
    const compressed = await exported(true);
    const plain = await exported(false);
    assert.ok(plain.rows.length > 500, `${plain.rows.length} rows`);
    assert.deepEqual(compressed.rows, plain.rows);
    assert.deepEqual(
      compressed.seen.map((entry) => [entry.acceptEncoding, entry.contentEncoding]),
      [["gzip", "gzip"]],
    );
    assert.deepEqual(
      plain.seen.map((entry) => [entry.acceptEncoding, entry.contentEncoding]),
      [["identity", undefined]],
    );
  });

  it("sends every request through a fetch given in the options, which decodes the same records", async () => {
    const exchanges: FetchExchange[] = [];
    const fetched = await walk({ fetch: recordingFetch(exchanges) });
    const plain = await walk({ compression: false });
    assert.deepEqual(fetched, plain);
    assert.ok(exchanges.some((exchange) => exchange.url.endsWith("/oauth2/token")));
    const graphql = exchanges.filter((exchange) => exchange.url.endsWith("/graphql"));
    assert.ok(graphql.length > 0);
    for (const exchange of exchanges) assert.equal(exchange.acceptEncoding, "gzip, br");
    for (const exchange of graphql) assert.equal(exchange.contentEncoding, "br");
  });

  it("mdq-client reads MDQ_CLIENT_COMPRESSION: off asks for identity, unset for gzip and brotli, another value exits 2", async () => {
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
  });
});

/** A server answering every request with `answer`, and counting the requests. */
async function startAnswering(
  answer: (response: ServerResponse) => void,
): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const server = createServer((request, response) => {
    requests += 1;
    request.resume();
    request.on("end", () => answer(response));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An answer of `body`, sent as it is with `content-encoding: coding`. */
function encodedAnswer(coding: string, body: Buffer): (response: ServerResponse) => void {
  return (response) => {
    response.writeHead(200, { "content-type": "application/json", "content-encoding": coding });
    response.end(body);
  };
}

describe("answers the SDK cannot read", { timeout: 60_000 }, () => {
  const MAX_BODY_BYTES = 1024 * 1024;
  /** 50 MB of zeros: 50 KB in gzip, 10 KB in brotli. */
  const zeros = Buffer.alloc(50 * 1024 * 1024);
  const BOMBS: [coding: string, body: Buffer][] = [
    ["gzip", gzipSync(zeros)],
    ["br", brotliCompressSync(zeros, { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } })],
  ];

  /** A transport as the client builds it (no fetch given), with `maxBodyBytes` at 1 MiB. */
  function transport(events: MdqClientEvent[] = []): HttpTransport {
    return new HttpTransport({
      retry: { ...DEFAULT_RETRY_POLICY, maxBodyBytes: MAX_BODY_BYTES, backoffBaseMs: 1, backoffCapMs: 2 },
      budget: new RequestBudget(),
      clock: { now: () => Date.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) },
      onEvent: (event) => events.push(event),
    });
  }

  /** The error `post` fails with. */
  async function failure(post: Promise<unknown>): Promise<MdqClientError> {
    try {
      await post;
    } catch (error) {
      assert.ok(error instanceof MdqClientError, `not an MdqClientError: ${String(error)}`);
      return error;
    }
    assert.fail("expected a rejection");
  }

  const request = (url: string) => ({ url, headers: { "content-type": "application/json" }, body: "{}" });

  for (const [coding, bomb] of BOMBS) {
    it(`refuses a small ${coding} answer that decodes to 50 MB (SERVER_ANSWER_INVALID), without asking again`, async () => {
      assert.ok(bomb.length < MAX_BODY_BYTES);
      const server = await startAnswering(encodedAnswer(coding, bomb));
      try {
        const error = await failure(transport().post(request(server.url)));
        assert.equal(error.code, "SERVER_ANSWER_INVALID");
        assert.equal(
          error.message,
          `the answer from ${server.url} is larger than maxBodyBytes (${MAX_BODY_BYTES} bytes)`,
        );
        assert.equal(error.status, 200);
        assert.equal(server.requests(), 1);
      } finally {
        await server.close();
      }
    });
  }

  it("refuses a body that is not the brotli its content-encoding says (SERVER_ANSWER_INVALID), without asking again", async () => {
    const server = await startAnswering(encodedAnswer("br", Buffer.from('{"data":{"not":"brotli"}}')));
    try {
      const error = await failure(transport().post(request(server.url)));
      assert.equal(error.code, "SERVER_ANSWER_INVALID");
      assert.match(error.message, new RegExp(`^the answer from ${server.url} is not valid br: `));
      assert.equal(server.requests(), 1);
    } finally {
      await server.close();
    }
  });

  it("refuses a content coding it does not know, naming it (SERVER_ANSWER_INVALID)", async () => {
    const server = await startAnswering(encodedAnswer("compress", Buffer.from("{}")));
    try {
      const error = await failure(transport().post(request(server.url)));
      assert.equal(error.code, "SERVER_ANSWER_INVALID");
      assert.equal(
        error.message,
        `the answer from ${server.url} is in the content coding "compress", which the client cannot decode`,
      );
      assert.equal(server.requests(), 1);
    } finally {
      await server.close();
    }
  });

  it("retries a refused connection as NETWORK, naming the URL and the cause", async () => {
    const url = `http://127.0.0.1:${await freePort()}/graphql`;
    const events: MdqClientEvent[] = [];
    const error = await failure(transport(events).post(request(url)));
    assert.equal(error.code, "NETWORK");
    assert.equal(error.attempts, DEFAULT_RETRY_POLICY.maxAttempts);
    assert.match(error.message, new RegExp(`^the connection to ${url} failed: .*ECONNREFUSED`));
    assert.deepEqual(
      events.map((event) => event.type === "retry" && event.reason),
      Array.from({ length: DEFAULT_RETRY_POLICY.maxAttempts - 1 }, () => "network"),
    );
  });
});
