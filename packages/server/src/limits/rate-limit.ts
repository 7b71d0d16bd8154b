/**
 * Rate limiting per client IP (CONTRACT §3 rule 9): 1000 requests per 5 minutes by default,
 * counted with a sliding-window counter (the previous window's count weighted by how much of it
 * still overlaps), so a client cannot double its budget across a window boundary.
 * The interface is what a shared (Redis) limiter implements too.
 */

/** The outcome of counting one request. */
export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the budget is fully restored (`t` of the RateLimit header). */
  resetSeconds: number;
  /** Seconds to wait before a retry can succeed; 0 when allowed. */
  retryAfterSeconds: number;
}

/** Counts requests against a budget per key. */
export interface RateLimiter {
  consume(key: string, now?: number): Promise<RateLimitDecision>;
  close(): Promise<void>;
}

export interface RateLimitPolicy {
  max: number;
  windowSeconds: number;
}

interface WindowCounts {
  windowStart: number;
  current: number;
  previous: number;
}

/** Slack for floating-point error, so that a client retrying exactly on time is let through. */
export const EPSILON = 1e-9;

/**
 * Computes a decision from the counts of the current and previous fixed windows; `current`
 * includes the request being decided.
 */
export function decide(
  policy: RateLimitPolicy,
  windowStart: number,
  current: number,
  previous: number,
  now: number,
) {
  const windowMs = policy.windowSeconds * 1000;
  const elapsed = (now - windowStart) / windowMs;
  const estimated = previous * (1 - elapsed) + current;
  const allowed = estimated <= policy.max + EPSILON;
  const remaining = Math.max(0, Math.floor(policy.max - estimated + EPSILON));
  const resetSeconds = Math.ceil(((1 - elapsed) * windowMs + (current > 0 ? windowMs : 0)) / 1000);
  const retryAfterSeconds = allowed
    ? 0
    : Math.max(
        1,
        Math.ceil(retryAfterWindows(policy.max, elapsed, current, previous) * (windowMs / 1000) - EPSILON),
      );
  return {
    allowed,
    limit: policy.max,
    remaining,
    resetSeconds: Math.max(1, resetSeconds),
    retryAfterSeconds,
  };
}

/**
 * How long, in windows, until the refused request would be allowed. While
 * this window lasts, the previous window's weight falls by `previous` per window; once it ends,
 * this window's counted requests (`current - 1`) become the previous count and decay in turn.
 */
function retryAfterWindows(max: number, elapsed: number, current: number, previous: number): number {
  const excess = previous * (1 - elapsed) + current - max;
  const remainingInWindow = 1 - elapsed;
  if (previous > 0 && excess <= previous * remainingInWindow) return excess / previous;
  const counted = current - 1;
  const intoNextWindow = counted > max - 1 ? 1 - (max - 1) / counted : 0;
  return remainingInWindow + intoNextWindow;
}

/** The in-process limiter: one budget per key in this process. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly counts = new Map<string, WindowCounts>();
  private lastSweep = 0;

  constructor(private readonly policy: RateLimitPolicy) {}

  async consume(key: string, now = Date.now()): Promise<RateLimitDecision> {
    const windowMs = this.policy.windowSeconds * 1000;
    const windowStart = now - (now % windowMs);
    this.sweep(windowStart, windowMs);
    let counts = this.counts.get(key);
    if (!counts) {
      counts = { windowStart, current: 0, previous: 0 };
      this.counts.set(key, counts);
    } else if (counts.windowStart !== windowStart) {
      counts.previous = counts.windowStart === windowStart - windowMs ? counts.current : 0;
      counts.current = 0;
      counts.windowStart = windowStart;
    }
    const decision = decide(this.policy, windowStart, counts.current + 1, counts.previous, now);
    // Refused requests are not counted, so a client that waits as told gets through.
    if (decision.allowed) counts.current += 1;
    return decision;
  }

  async close(): Promise<void> {
    this.counts.clear();
  }

  private sweep(windowStart: number, windowMs: number): void {
    if (windowStart === this.lastSweep) return;
    this.lastSweep = windowStart;
    for (const [key, counts] of this.counts) {
      if (counts.windowStart < windowStart - windowMs) this.counts.delete(key);
    }
  }
}
