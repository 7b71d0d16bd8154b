import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import {
  type Fault,
  type FaultProxy,
  graphqlError,
  type RunningService,
  startFaultProxy,
  startService,
  unauthenticated,
} from "@mdq/test-support";
import {
  type Clock,
  MdqClient,
  MdqClientError,
  type MdqClientEvent,
  type MdqClientOptions,
} from "../src/index.js";

/** A clock whose time the test moves; sleeps are real (and short in these tests). */
function movableClock(): Clock & { advance(ms: number): void } {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    advance(ms) {
      offset += ms;
    },
  };
}

async function rejection(promise: Promise<unknown>): Promise<MdqClientError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof MdqClientError, `not an MdqClientError: ${String(error)}`);
    return error;
  }
  assert.fail("expected a rejection");
}

describe("tokens, renewals and typed errors", { timeout: 60_000 }, () => {
  let region: RunningService<MdqClientOptions>;
  let proxy: FaultProxy;
  const options = (overrides: Partial<MdqClientOptions> & { appIndex?: number } = {}) =>
    region.clientOptions({ via: proxy.url, backoffBaseMs: 5, backoffCapMs: 20, ...overrides });
  /** A client (with `overrides`) that already holds a token, whose next GraphQL answers are `faults`. */
  async function tokenHolder(
    faults: Fault[],
    overrides: Parameters<typeof options>[0] = {},
  ): Promise<MdqClient> {
    const client = new MdqClient(options(overrides));
    await client.readiness();
    proxy.script("/graphql", faults);
    return client;
  }
  const tokenRequests = () => proxy.count("/oauth2/token");
  const graphqlRequests = () => proxy.count("/graphql");
  /** The requests the proxy has passed to each endpoint. */
  const requests = () => ({ token: tokenRequests(), graphql: graphqlRequests() });

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

  it("shares one token request between 20 parallel calls of a fresh client", async () => {
    const client = new MdqClient(options());
    const answers = await Promise.all(Array.from({ length: 20 }, () => client.readiness(region.today)));
    assert.deepEqual(requests(), { token: 1, graphql: 20 });
    assert.equal(client.tokenRequestCount, 1);
    for (const answer of answers) assert.equal(answer.status, "READY");
    assert.equal(
      new Set(proxy.seen.filter((seen) => seen.path === "/graphql").map((s) => s.authorization)).size,
      1,
    );
  });

  it("keeps the token until shortly before it expires, then renews it with one request", async () => {
    const clock = movableClock();
    const client = new MdqClient(options({ clock, renewBeforeSeconds: 60 }));
    await client.readiness();
    clock.advance((3600 - 61) * 1000);
    await client.readiness();
    assert.equal(tokenRequests(), 1);
    clock.advance(2000);
    await Promise.all([client.readiness(), client.readiness(), client.readiness()]);
    assert.equal(tokenRequests(), 2);
    const bearers = proxy.seen.filter((seen) => seen.path === "/graphql").map((seen) => seen.authorization);
    assert.equal(bearers[0], bearers[1]);
    assert.notEqual(bearers[1], bearers[2]);
  });

  it("renews the token exactly once on a 401 and retries the call with the new one", async () => {
    const client = await tokenHolder([unauthenticated()]);
    const readiness = await client.readiness();
    assert.equal(readiness.status, "READY");
    assert.deepEqual(requests(), { token: 2, graphql: 3 });
    const [first, refused, retried] = proxy.seen.filter((seen) => seen.path === "/graphql");
    assert.equal(first!.authorization, refused!.authorization);
    assert.notEqual(refused!.authorization, retried!.authorization);
  });

  it("shares one renewal between parallel calls refused with the same token", async () => {
    const client = await tokenHolder(Array.from({ length: 5 }, () => unauthenticated()));
    await Promise.all(Array.from({ length: 5 }, () => client.readiness()));
    assert.deepEqual(requests(), { token: 2, graphql: 11 });
  });

  it("gives up with UNAUTHENTICATED when the renewed token is refused too", async () => {
    const client = new MdqClient(options());
    proxy.script("/graphql", [unauthenticated(), unauthenticated("the access token's app has been revoked")]);
    const error = await rejection(client.readiness());
    assert.equal(error.code, "UNAUTHENTICATED");
    assert.equal(error.status, 401);
    assert.equal(error.message, "the access token's app has been revoked");
    assert.deepEqual(requests(), { token: 2, graphql: 2 });
  });

  it("fails with AUTH_FAILED and the RFC 6749 error when the credentials are refused, without retrying", async () => {
    const client = new MdqClient(options({ appClientSecret: "not-the-secret" }));
    const error = await rejection(client.readiness());
    assert.equal(error.code, "AUTH_FAILED");
    assert.equal(error.oauthError, "invalid_client");
    assert.equal(error.status, 400);
    assert.equal(error.message, "the token endpoint refused the request: client authentication failed");
    assert.deepEqual(requests(), { token: 1, graphql: 0 });
  });

  it("does not retry a 403: FORBIDDEN with the service's message", async () => {
    const other = region.credentials.apps.find(
      (app) => app.brandClientId !== region.credentials.apps[0]!.brandClientId,
    )!;
    const client = new MdqClient(options({ brandClientId: other.brandClientId }));
    const error = await rejection(client.readiness());
    assert.equal(error.code, "FORBIDDEN");
    assert.equal(error.status, 403);
    assert.equal(error.message, "clientId is not the brand these credentials belong to");
    assert.deepEqual(error.errors[0]?.path, ["marketingDataReadiness"]);
    assert.equal(graphqlRequests(), 1);
  });

  it("throws the first GraphQL error's code with every error attached, without retrying", async () => {
    const client = new MdqClient(options());
    const error = await rejection(
      client.graphql(
        'query($c: ID!) { marketingRecords(clientId: $c, dateRange: {from: "2026-01-01", to: "2026-04-01"}) { recordId } }',
        { c: region.credentials.apps[0]!.brandClientId },
      ),
    );
    assert.equal(error.code, "DATE_RANGE_TOO_LONG");
    assert.equal(error.status, 200);
    assert.equal(error.errors.length, 1);
    assert.equal(error.serviceCode, "DATE_RANGE_TOO_LONG");
    const pagination = await rejection(
      (async () => {
        for await (const _ of client.records({ from: region.firstDay, to: region.lastDay, pageSize: 500 })) {
          // drained
        }
      })(),
    );
    assert.equal(pagination.code, "INVALID_PAGINATION");
    assert.equal(pagination.message, "pagination.pageSize must be between 1000 and 5000; got 500");
    assert.equal(graphqlRequests(), 2);
  });

  it("retries a 500 up to maxAttempts, then throws INTERNAL_SERVER_ERROR", async () => {
    const client = await tokenHolder(
      Array.from({ length: 3 }, () => graphqlError(500, "INTERNAL_SERVER_ERROR")),
      { maxAttempts: 3 },
    );
    const error = await rejection(client.readiness());
    assert.equal(error.code, "INTERNAL_SERVER_ERROR");
    assert.equal(error.attempts, 3);
    assert.equal(graphqlRequests(), 4);
  });

  it("fails at once with RATE_LIMITED when Retry-After is beyond what it may wait", async () => {
    const client = await tokenHolder([graphqlError(429, "RATE_LIMITED", { "retry-after": "120" })], {
      maxRetryAfterSeconds: 5,
    });
    const error = await rejection(client.readiness());
    assert.equal(error.code, "RATE_LIMITED");
    assert.equal(error.retryAfterSeconds, 120);
    assert.equal(graphqlRequests(), 2);
  });

  it("fails with NETWORK after maxAttempts dropped connections", async () => {
    const client = await tokenHolder(["drop", "drop"], { maxAttempts: 2 });
    const error = await rejection(client.readiness());
    assert.equal(error.code, "NETWORK");
    assert.equal(error.attempts, 2);
  });

  it("fails with TIMEOUT after maxAttempts slow answers", async () => {
    const client = await tokenHolder([{ delayMs: 1200 }, { delayMs: 1200 }], {
      maxAttempts: 2,
      timeoutMs: 800,
    });
    const error = await rejection(client.readiness());
    assert.equal(error.code, "TIMEOUT");
    assert.equal(error.attempts, 2);
  });

  it("asks again when the connection breaks in the middle of an answer, and reads the next one whole", async () => {
    const events: MdqClientEvent[] = [];
    const client = await tokenHolder([{ cutAfterBytes: 10 }], { onEvent: (event) => events.push(event) });
    const readiness = await client.readiness();
    assert.equal(readiness.status, "READY");
    assert.deepEqual(requests(), { token: 1, graphql: 3 });
    assert.deepEqual(
      events.flatMap((event) => (event.type === "retry" ? [event.reason] : [])),
      ["network"],
    );
  });

  it("stops with ABORTED when the caller's signal fires while the answer is on its way", async () => {
    const client = await tokenHolder([{ delayMs: 3000 }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const error = await rejection(client.readiness(undefined, controller.signal));
    assert.equal(error.code, "ABORTED");
    assert.ok(Date.now() - started < 2000);
    assert.equal(graphqlRequests(), 2);
  });

  it("stops with ABORTED when the caller's signal fires during a backoff", async () => {
    const client = await tokenHolder([graphqlError(503, "SERVICE_UNAVAILABLE")], {
      backoffBaseMs: 5000,
      backoffCapMs: 5000,
      random: () => 0.99,
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const error = await rejection(client.readiness(undefined, controller.signal));
    assert.equal(error.code, "ABORTED");
    assert.ok(Date.now() - started < 2000);
  });

  it("waits until ready, polling readiness, and fails with NOT_READY at its timeout", async () => {
    const client = new MdqClient(options());
    const ready = await client.waitUntilReady({ interval: 10, timeout: 1000 });
    assert.equal(ready.status, "READY");
    assert.equal(ready.date, region.today);
    const before = graphqlRequests();
    // A timeout many intervals long: a poll can take a few hundred ms on a loaded machine.
    const error = await rejection(
      client.waitUntilReady({ date: region.lastDay, interval: 50, timeout: 2000 }),
    );
    assert.equal(error.code, "NOT_READY");
    assert.ok(graphqlRequests() - before >= 3, "polled fewer than 3 times");
  });
});
