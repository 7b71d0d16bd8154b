/**
 * The shared rate limit on the machine's Redis (docs/observability.md): N instances spend ONE
 * budget per client IP, and while Redis is unreachable or stalled each instance falls back to its
 * own budget at once (no error, no added latency beyond the command timeout), counts and logs it
 * without the URL, and goes back to the shared budget by itself when Redis answers again.
 * Redis is taken away for real: a URL where nothing listens, or a TCP gate in front of Redis.
 */
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import {
  deleteKeys,
  graphqlOn,
  REDIS_HOST,
  REDIS_PORT,
  REDIS_URL,
  type SharedRegion,
  startSharedRegion,
  startTcpGate,
  type TcpGate,
  testRedisClient,
  tokenFrom,
  uniqueRegion,
  within,
} from "@mdq/test-support";
import { REDIS_COMMAND_TIMEOUT_MS, RedisConnection } from "../src/cluster/redis-connection.js";
import type { RateLimitDecision } from "../src/limits/rate-limit.js";
import { RedisRateLimiter } from "../src/limits/redis-rate-limit.js";
import { ServiceMetrics } from "../src/observability/metrics.js";
import type { Service } from "../src/server.js";

const POLICY = { max: 5, windowSeconds: 300 };
const READINESS = "query($c: ID!) { marketingDataReadiness(clientId: $c) { status } }";

/** One "instance": its own connection, metrics and limiter, on keys shared with the others. */
interface Instance {
  connection: RedisConnection;
  metrics: ServiceMetrics;
  limiter: RedisRateLimiter;
}

describe("RedisRateLimiter across instances", () => {
  const region = uniqueRegion();
  const keyPrefix = `mdq:${region}:rl:`;
  const instances: Instance[] = [];
  let gate: TcpGate;

  function instance(url: string, commandTimeoutMs?: number): Instance {
    const metrics = new ServiceMetrics({ region, engine: "duckdb" });
    const connection = new RedisConnection({
      url,
      metrics,
      ...(commandTimeoutMs === undefined ? {} : { commandTimeoutMs }),
    });
    const created = {
      connection,
      metrics,
      limiter: new RedisRateLimiter(connection, POLICY, { keyPrefix, metrics }),
    };
    instances.push(created);
    return created;
  }

  before(async () => {
    gate = await startTcpGate(REDIS_HOST, REDIS_PORT);
  });
  after(async () => {
    for (const { connection, limiter } of instances) {
      await limiter.close();
      await connection.close();
    }
    await gate.close();
    await deleteKeys(`mdq:${region}:`);
  });

  it("two instances spend one budget per client IP: 5 requests in all, not 5 each", async () => {
    const a = instance(REDIS_URL);
    const b = instance(REDIS_URL);
    await Promise.all([a.connection.connected(), b.connection.connected()]);
    const decisions: RateLimitDecision[] = [];
    for (let sent = 0; sent < 8; sent += 1) {
      decisions.push(await (sent % 2 === 0 ? a : b).limiter.consume("198.51.100.1"));
    }
    assert.deepEqual(
      decisions.map((decision) => decision.allowed),
      [true, true, true, true, true, false, false, false],
    );
    assert.deepEqual(
      decisions.slice(0, 5).map((decision) => decision.remaining),
      [4, 3, 2, 1, 0],
    );
    assert.ok(decisions[5]!.retryAfterSeconds >= 1);
    // Another client IP has its whole budget on either instance.
    assert.equal((await b.limiter.consume("198.51.100.2")).remaining, 4);
    assert.equal(await a.metrics.value("mdq_rate_limit_local_fallbacks_total"), 0);
    assert.equal(await b.metrics.value("mdq_rate_limit_local_fallbacks_total"), 0);
  });

  it("keeps one small hash per client IP, expiring once its counts no longer weigh", async () => {
    const a = instance(REDIS_URL);
    await a.connection.connected();
    await a.limiter.consume("198.51.100.3");
    const client = testRedisClient();
    try {
      const stored = await client.hgetall(`${keyPrefix}198.51.100.3`);
      assert.deepEqual(Object.keys(stored).sort(), ["c", "p", "w"]);
      assert.equal(stored["c"], "1");
      const ttl = await client.pttl(`${keyPrefix}198.51.100.3`);
      assert.ok(
        ttl > (2 * POLICY.windowSeconds - 5) * 1000 && ttl <= 2 * POLICY.windowSeconds * 1000,
        `${ttl}`,
      );
    } finally {
      client.disconnect();
    }
  });

  it("while Redis is unreachable, answers from the instance's own budget at once and counts the failures", async () => {
    const down = instance("redis://127.0.0.1:1");
    const started = Date.now();
    const decisions: RateLimitDecision[] = [];
    for (let sent = 0; sent < 6; sent += 1) decisions.push(await down.limiter.consume("198.51.100.4"));
    assert.ok(Date.now() - started < 500, `6 decisions took ${Date.now() - started} ms`);
    assert.deepEqual(
      decisions.map((decision) => decision.allowed),
      [true, true, true, true, true, false],
    );
    assert.ok(decisions[5]!.retryAfterSeconds >= 1);
    assert.equal(await down.metrics.value("mdq_rate_limit_local_fallbacks_total"), 6);
    assert.ok((await down.metrics.value("mdq_redis_errors_total")) >= 6);
    assert.equal(await down.metrics.value("mdq_redis_up"), 0);
  });

  it("a Redis that stops answering delays a decision by at most the command timeout, then falls back", async () => {
    const frozen = instance(`redis://${gate.address}`, 100);
    await frozen.connection.connected();
    gate.freeze();
    try {
      const started = Date.now();
      const decision = await frozen.limiter.consume("198.51.100.5");
      const took = Date.now() - started;
      assert.equal(decision.allowed, true);
      assert.ok(took >= 90 && took < 100 + REDIS_COMMAND_TIMEOUT_MS, `the decision took ${took} ms`);
      assert.equal(await frozen.metrics.value("mdq_rate_limit_local_fallbacks_total"), 1);
      assert.equal(await frozen.metrics.value("mdq_redis_up"), 0);
    } finally {
      gate.open();
    }
  });

  it("goes back to the shared budget by itself once Redis answers again", async () => {
    const gated = instance(`redis://${gate.address}`);
    const direct = instance(REDIS_URL);
    await Promise.all([gated.connection.connected(), direct.connection.connected()]);
    gate.block();
    try {
      // Cut off: the gated instance counts on its own; Redis never hears of these 3.
      for (let sent = 0; sent < 3; sent += 1) {
        assert.equal((await gated.limiter.consume("198.51.100.6")).allowed, true);
      }
      assert.equal(await gated.metrics.value("mdq_redis_up"), 0);
    } finally {
      gate.open();
    }
    await within(5000, "the gated instance reconnected", async () => gated.connection.ready);
    const fallbacks = await gated.metrics.value("mdq_rate_limit_local_fallbacks_total");
    // Back on the shared budget: 2 spent through the other instance show on this one.
    await direct.limiter.consume("198.51.100.6");
    await direct.limiter.consume("198.51.100.6");
    const shared = await gated.limiter.consume("198.51.100.6");
    assert.equal(shared.remaining, 2);
    assert.equal(await gated.metrics.value("mdq_rate_limit_local_fallbacks_total"), fallbacks);
    assert.equal(await gated.metrics.value("mdq_redis_up"), 1);
  });
});

describe("a service whose Redis is unreachable", () => {
  const password = "s3cret-redis-password";
  let region: SharedRegion;
  let service: Service;
  const logs: string[] = [];

  before(async () => {
    region = await startSharedRegion({
      config: {
        region: uniqueRegion(),
        redisUrl: `redis://:${password}@127.0.0.1:1/0`,
        rateLimitMax: 3,
        logLevel: "warn",
      },
    });
    const logStream = new Writable({
      write(chunk, _encoding, done) {
        logs.push(String(chunk));
        done();
      },
    });
    service = await region.instance({ logStream });
  });
  after(() => region.close());

  it("still answers every request, on this instance's own budget, with the usual RateLimit headers and 429", async () => {
    const app = region.credentials.apps[0]!;
    const token = await tokenFrom(service, app);
    const statuses: number[] = [];
    for (let sent = 0; sent < 3; sent += 1) {
      const answer = await graphqlOn(service, token, READINESS, { c: app.brandClientId });
      statuses.push(answer.statusCode);
      assert.match(String(answer.headers["ratelimit"]), /^"per-ip";r=\d+;t=\d+$/);
    }
    // The token request spent one of the 3.
    assert.deepEqual(statuses, [200, 200, 429]);
  });

  it("is not ready while Redis does not answer, but is alive", async () => {
    const ready = await service.app.inject({ method: "GET", url: "/readyz" });
    assert.equal(ready.statusCode, 503);
    assert.equal(ready.headers["retry-after"], "5");
    assert.deepEqual(ready.json(), { status: "unavailable", checks: { store: "up", redis: "down" } });
    assert.equal((await service.app.inject({ method: "GET", url: "/livez" })).statusCode, 200);
  });

  it("reports mdq_redis_up 0 and rising mdq_redis_errors_total at /metrics", async () => {
    const metrics = await service.adminApp.inject({ method: "GET", url: "/metrics" });
    assert.equal(metrics.statusCode, 200);
    assert.match(metrics.body, /^mdq_redis_up 0$/m);
    assert.match(metrics.body, /^mdq_redis_errors_total [1-9]\d*$/m);
    assert.match(metrics.body, /^mdq_rate_limit_local_fallbacks_total [1-9]\d*$/m);
  });

  it("logs a throttled warning that names neither the URL nor its password", async () => {
    const warnings = logs.filter((line) => line.includes("Redis does not answer"));
    assert.ok(warnings.length >= 1, logs.join(""));
    assert.ok(warnings.length <= 2, `throttled: ${warnings.length} warnings`);
    for (const line of logs) {
      assert.ok(!line.includes(password), line);
      assert.ok(!line.includes("redis://"), line);
    }
  });
});
