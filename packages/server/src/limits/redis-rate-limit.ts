/**
 * The shared rate limiter (`MDQ_REDIS_URL`): the same sliding-window counter as
 * `MemoryRateLimiter`, kept in Redis so that every instance of a region spends one budget per
 * client IP. One Lua script per request reads and updates the client's counts atomically.
 *
 * Clock: the script reads Redis's own `TIME`, so that all instances agree on window boundaries
 * whatever their clocks say; a `now` passed by the caller (tests) replaces it.
 *
 * Redis down: the request is counted by this instance's own in-memory limiter instead (fail open
 * to local limits, never an error), the failure is counted and logged (throttled), and the next
 * request tries Redis again (docs/observability.md).
 */
import type { RedisConnection } from "../cluster/redis-connection.js";
import type { ServiceMetrics } from "../observability/metrics.js";
import {
  decide,
  EPSILON,
  MemoryRateLimiter,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimitPolicy,
} from "./rate-limit.js";

/**
 * KEYS[1]: the client's hash {w: window start, c: this window's count, p: the previous window's}.
 * ARGV: window in ms, max, slack, now in ms ("" = Redis TIME).
 * Mirrors `MemoryRateLimiter.consume` and `decide` step by step (same floating-point operations,
 * so the same decision); only allowed requests are counted. The hash expires once its counts can
 * no longer weigh (two windows; at least a minute, which changes nothing but spares tests whose
 * `now` runs ahead of real time). Returns window start, current count including this request,
 * previous count, now.
 */
const SLIDING_WINDOW_SCRIPT = `
local windowMs = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
local slack = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if now == nil then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local windowStart = now - (now % windowMs)
local stored = redis.call('HMGET', KEYS[1], 'w', 'c', 'p')
local storedStart = tonumber(stored[1])
local current = tonumber(stored[2]) or 0
local previous = tonumber(stored[3]) or 0
if storedStart ~= windowStart then
  if storedStart == windowStart - windowMs then previous = current else previous = 0 end
  current = 0
end
local elapsed = (now - windowStart) / windowMs
if previous * (1 - elapsed) + (current + 1) <= max + slack then
  redis.call('HSET', KEYS[1], 'w', string.format('%.0f', windowStart), 'c', current + 1, 'p', previous)
  redis.call('PEXPIRE', KEYS[1], math.max(2 * windowMs, 60000))
end
return {windowStart, current + 1, previous, now}
`;

type SlidingWindowCommand = (
  key: string,
  windowMs: string,
  max: string,
  slack: string,
  now: string,
) => Promise<[number, number, number, number]>;

export interface RedisRateLimiterOptions {
  /** Prefix of every key, e.g. `mdq:uk:rl:`; the client key (IP) follows. */
  keyPrefix: string;
  metrics: ServiceMetrics;
}

/** A rate limiter whose budgets live in Redis, shared by every instance using the same keys. */
export class RedisRateLimiter implements RateLimiter {
  /** Counts requests while Redis does not answer: this instance's own budget. */
  private readonly local: MemoryRateLimiter;
  private readonly run: SlidingWindowCommand;

  constructor(
    private readonly redis: RedisConnection,
    private readonly policy: RateLimitPolicy,
    private readonly options: RedisRateLimiterOptions,
  ) {
    this.local = new MemoryRateLimiter(policy);
    // defineCommand sends EVALSHA, falling back to EVAL once after a script-cache flush.
    redis.client.defineCommand("mdqSlidingWindow", { numberOfKeys: 1, lua: SLIDING_WINDOW_SCRIPT });
    const command = (redis.client as unknown as { mdqSlidingWindow: SlidingWindowCommand }).mdqSlidingWindow;
    this.run = command.bind(redis.client);
  }

  async consume(key: string, now?: number): Promise<RateLimitDecision> {
    let counts: [number, number, number, number];
    try {
      counts = await this.run(
        this.options.keyPrefix + key,
        String(this.policy.windowSeconds * 1000),
        String(this.policy.max),
        String(EPSILON),
        now === undefined ? "" : String(now),
      );
    } catch (error) {
      this.redis.failed("rate_limit", error);
      this.options.metrics.rateLimitFallbacks.inc();
      return this.local.consume(key, now);
    }
    this.redis.answered();
    const [windowStart, current, previous, at] = counts.map(Number) as [number, number, number, number];
    return decide(this.policy, windowStart, current, previous, at);
  }

  /** Forgets the local fallback counts; the Redis connection belongs to the service. */
  async close(): Promise<void> {
    await this.local.close();
  }
}
