/**
 * The limits of one walk (`records()`, `recordPages()`, `aggregate()`, `aggregatePages()` and
 * the `sync`/`mirror` runs built on them), derived from its date range, so that a server that
 * lies (a `totalCount` of 1e308, pages that never add up, answers that never end) ends the run
 * with an error instead of keeping it, and its lock, forever:
 *
 * - at most `maxRequestsPerDay × days + RUN_REQUEST_ALLOWANCE` requests (the default 40 a day is
 *   eight pages of 5000 rows a day, each window read six times: every restart a walk allows);
 * - done within `runDeadlineMsPerDay × days + RUN_DEADLINE_ALLOWANCE_MS` (default 60 s a day
 *   plus 10 min), after which the walk's requests are aborted with TIMEOUT.
 */
import { MdqClientError } from "./errors.js";

/** Requests every walk may make besides its per-day share (readiness, changes, a repair's checks). */
export const RUN_REQUEST_ALLOWANCE = 20;
/** Default requests a walk may make per day of its range. */
export const DEFAULT_MAX_REQUESTS_PER_DAY = 40;
/** Time every walk has besides its per-day share. */
export const RUN_DEADLINE_ALLOWANCE_MS = 600_000;
/** Default time a walk has per day of its range. */
export const DEFAULT_RUN_DEADLINE_MS_PER_DAY = 60_000;

/** How much one walk may do per day of its range. */
export interface RunLimitSettings {
  maxRequestsPerDay: number;
  runDeadlineMsPerDay: number;
}

/**
 * One walk's spent requests and deadline. `signal` fires at the deadline (with the TIMEOUT
 * error) or when `parent` fires; `close()` stops the timer.
 * @example const limits = new RunLimits(settings, 90, signal); limits.spend("page 2"); ...; limits.close();
 */
export class RunLimits {
  readonly maxRequests: number;
  readonly deadlineMs: number;
  readonly signal: AbortSignal;
  private spent = 0;
  private readonly timer: ReturnType<typeof setTimeout>;

  constructor(settings: RunLimitSettings, days: number, parent: AbortSignal | undefined) {
    this.maxRequests = Math.ceil(settings.maxRequestsPerDay * days) + RUN_REQUEST_ALLOWANCE;
    this.deadlineMs = Math.ceil(settings.runDeadlineMsPerDay * days) + RUN_DEADLINE_ALLOWANCE_MS;
    const deadline = new AbortController();
    this.timer = setTimeout(
      () =>
        deadline.abort(
          new MdqClientError(
            "TIMEOUT",
            `the run did not finish within its deadline of ${Math.round(this.deadlineMs / 1000)} s (${days} days)`,
          ),
        ),
      this.deadlineMs,
    );
    this.timer.unref?.();
    this.signal = parent ? AbortSignal.any([parent, deadline.signal]) : deadline.signal;
  }

  /** Counts one request; throws SERVER_ANSWER_INVALID when the walk has used every one. */
  spend(what: string): void {
    this.spent += 1;
    if (this.spent > this.maxRequests) {
      throw new MdqClientError(
        "SERVER_ANSWER_INVALID",
        `the answers needed more than ${this.maxRequests} requests for this range (at ${what}): the service's counts do not hold`,
      );
    }
  }

  /** Requests spent so far. */
  get requests(): number {
    return this.spent;
  }

  close(): void {
    clearTimeout(this.timer);
  }
}
