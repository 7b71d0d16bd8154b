/**
 * The rate limit (CONTRACT §3 rule 9, spec §8): one budget per client IP over the token and
 * GraphQL endpoints, 429 with `Retry-After` and the RateLimit headers, `X-Forwarded-For` believed
 * only from a trusted proxy; and the sliding-window counter behind it.
 *
 * One conformance suite, run against both limiters: the in-process `MemoryRateLimiter` and the
 * shared `RedisRateLimiter` on the machine's Redis (each run under keys of its own, deleted after).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { deleteKeys, REDIS_URL, startTestRegion, type TestRegion, uniqueRegion } from "@mdq/test-support";
import fc from "fast-check";
import type { LightMyRequestResponse } from "fastify";
import { RedisConnection } from "../src/cluster/redis-connection.js";
import type { ConfigInput } from "../src/config.js";
import { MemoryRateLimiter, type RateLimiter, type RateLimitPolicy } from "../src/limits/rate-limit.js";
import { RedisRateLimiter } from "../src/limits/redis-rate-limit.js";
import { issueAccessToken } from "../src/oauth/access-token.js";
import { ServiceMetrics } from "../src/observability/metrics.js";

const MAX = 5;
const WINDOW_SECONDS = 300;
const PROXY = "127.0.0.1";
const READINESS = "query($c: ID!) { marketingDataReadiness(clientId: $c) { status } }";

/** A limiter implementation under test. */
interface Implementation {
  name: string;
  /** A limiter with `policy` that has counted nothing yet. */
  create(policy: RateLimitPolicy): RateLimiter;
  /** Configuration making a service use this implementation. */
  serviceConfig(): ConfigInput;
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
}

const memory: Implementation = {
  name: "MemoryRateLimiter",
  create: (policy) => new MemoryRateLimiter(policy),
  serviceConfig: () => ({}),
  async setUp() {},
  async tearDown() {},
};

/** Every key of this run starts with `mdq:<random region>:`; each limiter gets a prefix of its own. */
function redisImplementation(): Implementation {
  const region = uniqueRegion();
  const metrics = new ServiceMetrics({ region, engine: "duckdb" });
  let connection: RedisConnection | undefined;
  let created = 0;
  return {
    name: "RedisRateLimiter",
    create(policy) {
      created += 1;
      return new RedisRateLimiter(connection!, policy, {
        keyPrefix: `mdq:${region}:test-${created}:`,
        metrics,
      });
    },
    serviceConfig: () => ({ redisUrl: REDIS_URL, region }),
    async setUp() {
      connection = new RedisConnection({ url: REDIS_URL, metrics });
      await connection.connected();
    },
    async tearDown() {
      await connection?.close();
      await deleteKeys(`mdq:${region}:`);
      // Every decision came from Redis: a fallback would have hidden a broken script.
      assert.equal(await metrics.value("mdq_rate_limit_local_fallbacks_total"), 0);
    },
  };
}

for (const implementation of [memory, redisImplementation()]) {
  describe(`the rate limit over HTTP (${implementation.name})`, () => {
    let region: TestRegion;
    let token: string;
    let brandId: string;

    before(async () => {
      const configInput = implementation.serviceConfig();
      region = await startTestRegion({ days: 3, rateLimitMax: MAX, trustedProxies: PROXY, ...configInput });
      // Until Redis answers, requests would be counted locally (see the fallback tests).
      await region.service.redis?.connected();
      const app = region.credentials.apps[0]!;
      brandId = app.brandClientId;
      const { config } = region.service;
      // Signed directly, so that obtaining it spends no request budget.
      token = await issueAccessToken(
        region.service.keys,
        { authUrl: config.authUrl, baseUrl: config.baseUrl, region: config.region },
        { appClientId: app.appClientId, brandId },
      );
    });
    after(async () => {
      const { config, metrics } = region.service;
      await region.close();
      if (config.redisUrl) await deleteKeys(`mdq:${config.region}:`);
      // Every decision came from the limiter under test, never from a fallback.
      assert.equal(await metrics.value("mdq_rate_limit_local_fallbacks_total"), 0);
    });

    function graphql(remoteAddress: string, forwardedFor?: string): Promise<LightMyRequestResponse> {
      const headers: Record<string, string> = {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
      };
      if (forwardedFor !== undefined) headers["x-forwarded-for"] = forwardedFor;
      return region.inject({
        method: "POST",
        url: "/graphql",
        remoteAddress,
        headers,
        payload: JSON.stringify({ query: READINESS, variables: { c: brandId } }),
      });
    }

    function tokenRequest(remoteAddress: string): Promise<LightMyRequestResponse> {
      return region.inject({
        method: "POST",
        url: "/oauth2/token",
        remoteAddress,
        headers: { authorization: region.basic(), "content-type": "application/x-www-form-urlencoded" },
        payload: "grant_type=client_credentials&scope=api_data%2Fread",
      });
    }

    /** Asserts the 429's headers and returns its Retry-After in seconds. */
    function assertLimitedHeaders(response: LightMyRequestResponse): number {
      assert.equal(response.statusCode, 429, response.body);
      const retryAfter = String(response.headers["retry-after"]);
      assert.match(retryAfter, /^\d+$/);
      const seconds = Number(retryAfter);
      assert.ok(seconds >= 1 && seconds <= 2 * WINDOW_SECONDS, `Retry-After ${seconds}`);
      assert.equal(response.headers["ratelimit-policy"], `"per-ip";q=${MAX};w=${WINDOW_SECONDS}`);
      assert.match(String(response.headers["ratelimit"]), /^"per-ip";r=0;t=\d+$/);
      return seconds;
    }

    it("allows 5 GraphQL requests from one IP, counting down RateLimit, and answers the 6th with 429 RATE_LIMITED", async () => {
      const address = "192.0.2.1";
      for (let sent = 1; sent <= MAX; sent += 1) {
        const response = await graphql(address);
        assert.equal(response.statusCode, 200, response.body);
        assert.equal(response.headers["ratelimit-policy"], `"per-ip";q=${MAX};w=${WINDOW_SECONDS}`);
        assert.match(String(response.headers["ratelimit"]), new RegExp(`^"per-ip";r=${MAX - sent};t=\\d+$`));
      }
      const limited = await graphql(address);
      assertLimitedHeaders(limited);
      const body = limited.json() as { errors: { message: string; extensions: { code: string } }[] };
      assert.deepEqual(Object.keys(body), ["errors"]);
      assert.equal(body.errors.length, 1);
      assert.deepEqual(body.errors[0]!.extensions, { code: "RATE_LIMITED" });
      assert.notEqual(body.errors[0]!.message, "");
    });

    it("answers the token endpoint over budget with 429 and an RFC 6749-shaped rate_limited body", async () => {
      const address = "192.0.2.2";
      for (let sent = 1; sent <= MAX; sent += 1) {
        const response = await tokenRequest(address);
        assert.equal(response.statusCode, 200, response.body);
      }
      const limited = await tokenRequest(address);
      assertLimitedHeaders(limited);
      assert.equal(limited.headers["cache-control"], "no-store");
      assert.equal(limited.headers["pragma"], "no-cache");
      const body = limited.json() as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), ["error", "error_description"]);
      assert.equal(body["error"], "rate_limited");
      assert.equal(typeof body["error_description"], "string");
      assert.notEqual(body["error_description"], "");
    });

    it("shares one budget across the token and GraphQL endpoints", async () => {
      const address = "192.0.2.3";
      for (let sent = 1; sent <= 3; sent += 1) assert.equal((await tokenRequest(address)).statusCode, 200);
      for (let sent = 1; sent <= 2; sent += 1) assert.equal((await graphql(address)).statusCode, 200);
      assertLimitedHeaders(await graphql(address));
      assertLimitedHeaders(await tokenRequest(address));
    });

    it("counts refused requests (401, 400) against the budget too", async () => {
      const address = "192.0.2.4";
      for (let sent = 1; sent <= MAX; sent += 1) {
        const response = await region.inject({ method: "POST", url: "/graphql", remoteAddress: address });
        assert.ok([401, 415].includes(response.statusCode), `${response.statusCode}`);
      }
      assertLimitedHeaders(await graphql(address));
    });

    it("gives another IP its own budget", async () => {
      const spent = "192.0.2.5";
      for (let sent = 1; sent <= MAX; sent += 1) assert.equal((await graphql(spent)).statusCode, 200);
      assertLimitedHeaders(await graphql(spent));
      assert.equal((await graphql("192.0.2.6")).statusCode, 200);
      assert.equal((await tokenRequest("2001:db8::6")).statusCode, 200);
    });

    it("ignores X-Forwarded-For from a peer that is not a trusted proxy", async () => {
      const untrusted = "198.51.100.7";
      for (let sent = 1; sent <= MAX; sent += 1) {
        assert.equal((await graphql(untrusted, `203.0.113.${sent}`)).statusCode, 200);
      }
      assertLimitedHeaders(await graphql(untrusted, "203.0.113.99"));
      assertLimitedHeaders(await graphql(untrusted));
    });

    it("takes the client IP from X-Forwarded-For when the peer is a trusted proxy", async () => {
      for (let sent = 1; sent <= MAX; sent += 1) {
        assert.equal((await graphql(PROXY, "203.0.113.10")).statusCode, 200);
      }
      assertLimitedHeaders(await graphql(PROXY, "203.0.113.10"));
      assert.equal((await graphql(PROXY, "203.0.113.11")).statusCode, 200);
      assert.equal((await graphql(PROXY)).statusCode, 200, "the proxy's own address has its own budget");
    });

    it("keeps a client behind a trusted proxy from escaping by prepending forged X-Forwarded-For entries", async () => {
      for (let sent = 1; sent <= MAX; sent += 1) {
        assert.equal((await graphql(PROXY, `10.9.9.${sent}, 203.0.113.20`)).statusCode, 200);
      }
      assertLimitedHeaders(await graphql(PROXY, "10.9.9.99, 203.0.113.20"));
    });
  });

  describe(`${implementation.name}'s sliding window`, () => {
    before(() => implementation.setUp());
    after(() => implementation.tearDown());
    const policy = { max: 5, windowSeconds: 10 };
    const windowMs = policy.windowSeconds * 1000;
    /** The start of a fixed window, far from zero. */
    const start = 1_000_000 * windowMs;

    async function spend(limiter: RateLimiter, key: string, count: number, now: number) {
      const decisions = [];
      for (let index = 0; index < count; index += 1) decisions.push(await limiter.consume(key, now));
      return decisions;
    }

    it("allows max requests in a window and refuses the next with a Retry-After of at least 1 s", async () => {
      const limiter = implementation.create(policy);
      const decisions = await spend(limiter, "a", 6, start + 1000);
      assert.deepEqual(
        decisions.map((decision) => decision.allowed),
        [true, true, true, true, true, false],
      );
      assert.deepEqual(
        decisions.map((decision) => decision.remaining),
        [4, 3, 2, 1, 0, 0],
      );
      assert.deepEqual(
        decisions.slice(0, 5).map((decision) => decision.retryAfterSeconds),
        [0, 0, 0, 0, 0],
      );
      assert.ok(decisions[5]!.retryAfterSeconds >= 1);
      assert.equal(decisions[5]!.limit, 5);
    });

    it("restores the whole budget once a full window has passed without requests", async () => {
      const limiter = implementation.create(policy);
      await spend(limiter, "a", 5, start);
      assert.equal((await limiter.consume("a", start + 1)).allowed, false);
      const later = await spend(limiter, "a", 6, start + 2 * windowMs);
      assert.deepEqual(
        later.map((decision) => decision.allowed),
        [true, true, true, true, true, false],
      );
    });

    it("still weighs the previous window right after a boundary, so no double burst", async () => {
      const limiter = implementation.create(policy);
      await spend(limiter, "a", 5, start + windowMs - 1);
      const atBoundary = await limiter.consume("a", start + windowMs);
      assert.equal(atBoundary.allowed, false);
      assert.ok(atBoundary.retryAfterSeconds >= 1);
      // A fixed-window counter would allow 5 more here; the sliding window allows none.
      const justAfter = await spend(limiter, "a", 5, start + windowMs + 100);
      assert.ok(justAfter.every((decision) => !decision.allowed));
    });

    it("lets the previous window's weight decay linearly across the current window", async () => {
      const limiter = implementation.create(policy);
      await spend(limiter, "a", 5, start + windowMs - 1);
      // Half-way into the next window the previous 5 weigh 2.5: two more fit (2.5 + 2 ≤ 5), not three.
      const halfway = await spend(limiter, "a", 3, start + windowMs + windowMs / 2);
      assert.deepEqual(
        halfway.map((decision) => decision.allowed),
        [true, true, false],
      );
    });

    it("lets a client refused in its first window through once it waits the Retry-After it was given", async () => {
      const limiter = implementation.create(policy);
      await spend(limiter, "a", 5, start + 1000);
      const refused = await limiter.consume("a", start + 1000);
      assert.equal(refused.allowed, false);
      // The 5 requests become the previous window's count at the boundary and still weigh 5 there,
      // so the wait must reach past the boundary until they weigh 4: 9 s + 2 s.
      assert.equal(refused.retryAfterSeconds, 11);
      const retry = await limiter.consume("a", start + 1000 + refused.retryAfterSeconds * 1000);
      assert.equal(retry.allowed, true);
    });

    it("lets a client refused right after a boundary through once it waits the Retry-After it was given", async () => {
      const limiter = implementation.create(policy);
      await spend(limiter, "a", 5, start + windowMs - 1);
      const refused = await limiter.consume("a", start + windowMs);
      assert.equal(refused.allowed, false);
      // The previous 5 must weigh 4 for one more to fit: a fifth of the window, 2 s.
      assert.equal(refused.retryAfterSeconds, 2);
      const retry = await limiter.consume("a", start + windowMs + refused.retryAfterSeconds * 1000);
      assert.equal(retry.allowed, true);
    });

    it("does not count refused requests, so hammering does not lengthen the wait", async () => {
      const limiter = implementation.create(policy);
      await spend(limiter, "a", 5, start);
      const hammered = await spend(limiter, "a", 50, start + 1);
      assert.ok(hammered.every((decision) => !decision.allowed));
      // Only the 5 allowed requests weigh on the next window: half-way through it they count 2.5.
      const halfway = await spend(limiter, "a", 3, start + windowMs + windowMs / 2);
      assert.deepEqual(
        halfway.map((decision) => decision.allowed),
        [true, true, false],
      );
    });

    it("always gives the shortest whole-second Retry-After that lets the next request through", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 8 }),
          fc.integer({ min: 1, max: 20 }),
          fc.array(fc.double({ min: 0, max: 1.5, noNaN: true }), { minLength: 1, maxLength: 40 }),
          async (max, windowSeconds, gaps) => {
            const limiter = implementation.create({ max, windowSeconds });
            let now = start + 123;
            for (const gap of gaps) {
              now += Math.floor(gap * windowSeconds * 1000);
              const decision = await limiter.consume("a", now);
              if (decision.allowed) continue;
              const wait = decision.retryAfterSeconds;
              assert.ok(wait >= 1);
              if (wait > 1) {
                const early = await limiter.consume("a", now + (wait - 1) * 1000);
                assert.equal(early.allowed, false, `allowed ${wait - 1} s into a Retry-After of ${wait} s`);
              }
              now += wait * 1000;
              const onTime = await limiter.consume("a", now);
              assert.equal(onTime.allowed, true, `refused after waiting Retry-After ${wait} s`);
            }
          },
        ),
        { numRuns: 300 },
      );
    });

    it("keeps one budget per key", async () => {
      const limiter = implementation.create(policy);
      await spend(limiter, "a", 5, start);
      assert.equal((await limiter.consume("a", start)).allowed, false);
      assert.equal((await limiter.consume("b", start)).allowed, true);
    });
  });
}
