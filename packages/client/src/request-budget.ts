/**
 * The client's own request budget, so that it never earns a 429 (CONTRACT §3 rule 9: by default
 * 1000 requests per 300 s per client IP, over both endpoints, refused requests not counted).
 *
 * It models the service's limiter exactly: fixed windows aligned on multiples of the window
 * length, and a sliding estimate `previous × (1 − elapsed) + current`. A plain sliding log is not
 * enough: a burst at the start of one window and another right after it ages out would pass a log
 * yet be refused by the weighted estimate. The budget aims at `margin` (95 %) of the limit to
 * absorb clock skew between client and service, and adapts to what the service says in its
 * `RateLimit-Policy` and `RateLimit` headers (another process on the same IP spends the same
 * budget; the policy may differ from the default).
 */
import { MdqClientError } from "./errors.js";
import type { Clock, RateLimitPolicy } from "./types.js";

/** The service's default policy (spec §8): 1000 requests per 5 minutes. */
export const DEFAULT_RATE_LIMIT: RateLimitPolicy = Object.freeze({ max: 1000, windowSeconds: 300 });

/** Real time: `Date.now()` and `setTimeout`. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortedError(signal));
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortedError(signal!));
      };
      const timer = setTimeout(
        () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      signal?.addEventListener("abort", onAbort, { once: true });
    }),
};

/** The ABORTED error for a fired signal. */
export function abortedError(signal: AbortSignal): MdqClientError {
  // A run stopped by its own limits (run-limits.ts) aborts with the error that says why.
  if (signal.reason instanceof MdqClientError) return signal.reason;
  return new MdqClientError("ABORTED", "the operation was aborted", { cause: signal.reason });
}

export interface RequestBudgetOptions {
  /** The policy to assume before the service states one; `DEFAULT_RATE_LIMIT` by default. */
  policy?: RateLimitPolicy;
  /** Fraction of the limit to use, in (0, 1]; 0.95 by default. */
  margin?: number;
  /** Follow the service's `RateLimit-Policy`/`RateLimit` headers; true by default. */
  adaptToHeaders?: boolean;
  clock?: Clock;
}

/** Reads headers by name (a fetch `Headers`, or anything with the same `get`). */
export interface HeaderSource {
  get(name: string): string | null;
}

/** Longest delay between sending a request and the service counting it that the budget absorbs. */
const ARRIVAL_SLACK_MS = 1000;

/** Slack for floating-point error, as the service's limiter has. */
const EPSILON = 1e-9;

/**
 * A client-side limiter: `acquire()` resolves when one more request stays within the budget.
 * @example
 * const budget = new RequestBudget({ policy: { max: 1000, windowSeconds: 300 } });
 * await budget.acquire(); const response = await fetch(...); budget.observe(response.headers, sentAt);
 */
export class RequestBudget {
  private currentPolicy: RateLimitPolicy;
  private readonly margin: number;
  private readonly adapt: boolean;
  private readonly clock: Clock;
  /** Send times (ms) of the last two windows, ascending; phantom entries stand for others' requests. */
  private readonly sent: number[] = [];
  private pausedUntil = 0;

  constructor(options: RequestBudgetOptions = {}) {
    this.currentPolicy = checkPolicy(options.policy ?? DEFAULT_RATE_LIMIT);
    this.margin = options.margin ?? 0.95;
    if (!(this.margin > 0 && this.margin <= 1)) {
      throw new MdqClientError("INVALID_CONFIG", "the rate-limit margin must be in (0, 1]");
    }
    this.adapt = options.adaptToHeaders ?? true;
    this.clock = options.clock ?? systemClock;
  }

  /** The policy in force: the configured one, or the one the service last stated. */
  get policy(): RateLimitPolicy {
    return this.currentPolicy;
  }

  /** The number of requests the budget lets through per window: `max × margin`, at least 1. */
  get limit(): number {
    return Math.max(1, Math.floor(this.currentPolicy.max * this.margin + EPSILON));
  }

  /** Waits until one more request fits the budget, then counts it. */
  async acquire(signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (signal?.aborted) throw abortedError(signal);
      const now = this.clock.now();
      const wait = this.waitBeforeNext(now);
      if (wait <= 0) {
        this.record(now + this.arrivalSlack(), 1);
        return;
      }
      await this.clock.sleep(wait, signal);
    }
  }

  /** Milliseconds until one more request fits (0 when it fits now). */
  waitBeforeNext(now = this.clock.now()): number {
    if (now < this.pausedUntil) return this.pausedUntil - now;
    this.prune(now);
    const windowMs = this.currentPolicy.windowSeconds * 1000;
    const windowStart = now - (now % windowMs);
    const { current, previous } = this.counts(windowStart, windowMs, now);
    const elapsed = (now - windowStart) / windowMs;
    const limit = this.limit;
    if (previous * (1 - elapsed) + current + 1 <= limit + EPSILON) return 0;
    const untilWindowEnd = windowStart + windowMs - now;
    if (current + 1 > limit || previous === 0) return Math.max(1, Math.ceil(untilWindowEnd));
    // The previous window's weight falls linearly; find when it has fallen far enough.
    const neededElapsed = 1 - (limit - current - 1) / previous;
    const wait = Math.ceil((neededElapsed - elapsed) * windowMs) + 1;
    return Math.max(1, Math.min(wait, Math.ceil(untilWindowEnd)));
  }

  /** Holds every request back until `until` (ms), e.g. after a 429's `Retry-After`. */
  pauseUntil(until: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, until);
  }

  /**
   * Learns from a counted response: adopts its `RateLimit-Policy`, and when its `RateLimit`
   * shows more requests spent than this budget counted by `sentAt` (other clients on the same
   * IP), counts the difference as spent too. It never un-counts: the budget stays conservative.
   */
  observe(headers: HeaderSource, sentAt: number): void {
    if (!this.adapt) return;
    const policy = parseRateLimitPolicy(headers.get("ratelimit-policy"));
    if (
      policy &&
      (policy.max !== this.currentPolicy.max || policy.windowSeconds !== this.currentPolicy.windowSeconds)
    ) {
      this.currentPolicy = policy;
    }
    const remaining = parseRateLimitRemaining(headers.get("ratelimit"));
    if (remaining === undefined) return;
    const spentByService = this.currentPolicy.max - remaining;
    const spentHere = this.estimateAt(sentAt);
    const missing = Math.floor(spentByService - spentHere + EPSILON);
    if (missing >= 1) this.record(this.clock.now(), missing);
  }

  /** The service's estimate of spent requests at `time`, from this budget's log. */
  estimateAt(time: number): number {
    const windowMs = this.currentPolicy.windowSeconds * 1000;
    const windowStart = time - (time % windowMs);
    const { current, previous } = this.counts(windowStart, windowMs, time);
    return previous * (1 - (time - windowStart) / windowMs) + current;
  }

  /**
   * How much later than its send time a request may be counted by the service. A request the
   * client counts just before a window boundary but the service counts just after weighs fully in
   * the service's next window and only partly in the client's: so each request is counted as if
   * it arrived this much later, and requests "still arriving" count as current.
   */
  private arrivalSlack(): number {
    return Math.min(ARRIVAL_SLACK_MS, (this.currentPolicy.windowSeconds * 1000) / 4);
  }

  private counts(windowStart: number, windowMs: number, until: number) {
    let current = 0;
    let previous = 0;
    for (const time of this.sent) {
      // Entries past `until` are requests counted ahead (arrival slack): they already weigh.
      if (time >= windowStart || time > until) current += 1;
      else if (time >= windowStart - windowMs) previous += 1;
    }
    return { current, previous };
  }

  private record(time: number, count: number): void {
    let index = this.sent.length;
    while (index > 0 && this.sent[index - 1]! > time) index -= 1;
    this.sent.splice(index, 0, ...new Array<number>(count).fill(time));
  }

  private prune(now: number): void {
    const windowMs = this.currentPolicy.windowSeconds * 1000;
    const keepFrom = now - (now % windowMs) - windowMs;
    let drop = 0;
    while (drop < this.sent.length && this.sent[drop]! < keepFrom) drop += 1;
    if (drop > 0) this.sent.splice(0, drop);
  }
}

function checkPolicy(policy: RateLimitPolicy): RateLimitPolicy {
  if (!Number.isInteger(policy.max) || policy.max < 1) {
    throw new MdqClientError("INVALID_CONFIG", "rateLimit.max must be a positive integer");
  }
  if (!(policy.windowSeconds > 0)) {
    throw new MdqClientError("INVALID_CONFIG", "rateLimit.windowSeconds must be positive");
  }
  return Object.freeze({ max: policy.max, windowSeconds: policy.windowSeconds });
}

/** Integer parameters of one structured-field list item: `"per-ip";q=1000;w=300`. */
function itemParameters(item: string): Map<string, number> {
  const parameters = new Map<string, number>();
  for (const part of item.split(";").slice(1)) {
    const [key, value] = part.split("=").map((text) => text.trim());
    if (key && value && /^\d+$/.test(value)) parameters.set(key.toLowerCase(), Number(value));
  }
  return parameters;
}

/**
 * The most restrictive policy of a `RateLimit-Policy` header (`"per-ip";q=1000;w=300`), or
 * undefined when there is none to read.
 */
export function parseRateLimitPolicy(header: string | null): RateLimitPolicy | undefined {
  if (!header) return undefined;
  let strictest: RateLimitPolicy | undefined;
  for (const item of header.split(",")) {
    const parameters = itemParameters(item);
    const max = parameters.get("q");
    const windowSeconds = parameters.get("w");
    if (max === undefined || windowSeconds === undefined || max < 1 || windowSeconds < 1) continue;
    if (!strictest || max / windowSeconds < strictest.max / strictest.windowSeconds) {
      strictest = { max, windowSeconds };
    }
  }
  return strictest;
}

/** `r` (requests left) of a `RateLimit` header (`"per-ip";r=998;t=389`), the smallest if several. */
export function parseRateLimitRemaining(header: string | null): number | undefined {
  if (!header) return undefined;
  let smallest: number | undefined;
  for (const item of header.split(",")) {
    const remaining = itemParameters(item).get("r");
    if (remaining !== undefined && (smallest === undefined || remaining < smallest)) smallest = remaining;
  }
  return smallest;
}
