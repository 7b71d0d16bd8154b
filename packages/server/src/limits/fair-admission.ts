/**
 * Heavy work admitted per brand in turn (CONTRACT §8): at most `concurrency` heavy requests run
 * at once on an instance, at most `perBrand` of them for one brand; the others wait in one queue
 * per brand, and a freed place goes to the waiting brand under its cap with the fewest requests
 * running, among those the one served least recently (round-robin over brands, one request a
 * turn). So a brand with twenty requests in flight cannot delay a brand with one: the one runs
 * next, ahead of every request the twenty's brand queued.
 *
 * The queue is bounded in length (all brands together) and in wait: a request that would make it
 * longer, or that waits longer than `maxWaitMs`, is shed with 503 `SERVICE_UNAVAILABLE` and
 * `Retry-After` (docs/errors.md), so that an overloaded instance answers at once instead of
 * holding sockets and memory for requests whose callers have given up. A request whose client
 * left while it waited (its signal aborted) leaves the queue at once and never runs: admitted, it
 * would take a place and do the work for nobody.
 */
import { MdqError } from "../errors.js";

/** How many run and how many wait. */
export interface AdmissionLimits {
  /** Requests running at once on the instance. */
  readonly concurrency: number;
  /** Requests of one brand running at once. */
  readonly perBrand: number;
  /** Requests waiting at most, all brands together; 0 sheds every request that cannot run now. */
  readonly maxQueueLength: number;
  /** Longest a request waits for its turn before it is shed. */
  readonly maxWaitMs: number;
}

/**
 * Why a request was shed: the queue was full, its wait ran out, or its client left before its turn
 * (nothing is answered then: there is nobody to answer).
 */
export type ShedReason = "queue_full" | "wait_expired" | "client_gone";

/** What the admission reports, for metrics (observability/metrics.ts). */
export interface AdmissionEvents {
  /** A request was admitted after `waitMs` in the queue (0 when it ran at once). */
  admitted?(waitMs: number): void;
  /** A request was shed: the queue was full, its wait ran out, or its client left. */
  shed?(reason: ShedReason): void;
  /** The number of running or waiting requests changed. */
  changed?(running: number, waiting: number): void;
}

/** Gives an admitted request's place back (idempotent). */
export type Release = () => void;

/** Why a request was not admitted: answered as its `error` (503, or whatever the caller chose). */
export class AdmissionRefused extends Error {
  constructor(
    readonly reason: ShedReason,
    message: string,
  ) {
    super(message);
    this.name = "AdmissionRefused";
  }
}

/** The refusal of a request whose client left before its turn. */
function clientGone(): AdmissionRefused {
  return new AdmissionRefused("client_gone", "the client left before the request's turn");
}

/** Seconds a shed request is told to wait: a few rounds of the queue, not long enough to fall far behind. */
export const SHED_RETRY_AFTER_SECONDS = 2;

/** The 503 a shed request is answered with (docs/errors.md `SERVICE_UNAVAILABLE`). */
export function shedError(refused: AdmissionRefused): MdqError {
  return new MdqError("SERVICE_UNAVAILABLE", refused.message, {
    "retry-after": String(SHED_RETRY_AFTER_SECONDS),
  });
}

interface Waiter {
  readonly brand: string;
  readonly since: number;
  readonly admit: (release: Release) => void;
  readonly refuse: (refused: AdmissionRefused) => void;
  timer: NodeJS.Timeout | undefined;
  /** Removes the waiter's listener of its client's signal. */
  forgetClient: () => void;
}

/**
 * A fair queue across brands.
 * @example const release = await admission.admit("brand-acme"); try { ... } finally { release(); }
 */
export class FairAdmission {
  private runningTotal = 0;
  private readonly runningByBrand = new Map<string, number>();
  /** Each brand's waiting requests, oldest first; a brand's entry exists only while it waits. */
  private readonly queues = new Map<string, Waiter[]>();
  /** When each brand running or waiting was last admitted (a count of admissions); 0: not yet. */
  private readonly lastServed = new Map<string, number>();
  private admissions = 0;
  private waitingTotal = 0;

  constructor(
    readonly limits: AdmissionLimits,
    private readonly events: AdmissionEvents = {},
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Requests running now. */
  get running(): number {
    return this.runningTotal;
  }

  /** Requests waiting now. */
  get waiting(): number {
    return this.waitingTotal;
  }

  /**
   * Resolves with the release of a place for `brand` once it is the brand's turn; rejects with
   * {@link AdmissionRefused} when the queue is full, the wait runs out, or `client` (the request's
   * client is there while it is not aborted) aborts before the turn came.
   */
  admit(brand: string, client?: AbortSignal): Promise<Release> {
    if (client?.aborted) {
      this.events.shed?.("client_gone");
      return Promise.reject(clientGone());
    }
    // With room for the brand, every brand that waits is at its cap (`dispatch` leaves no other):
    // the brand runs now, ahead of none it should follow.
    if (this.hasRoom(brand)) {
      this.events.admitted?.(0);
      return Promise.resolve(this.start(brand));
    }
    if (this.waitingTotal >= this.limits.maxQueueLength) {
      this.events.shed?.("queue_full");
      return Promise.reject(
        new AdmissionRefused(
          "queue_full",
          `the instance is busy: its queue of ${this.limits.maxQueueLength} waiting requests is full; retry after the number of seconds in Retry-After`,
        ),
      );
    }
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        brand,
        since: this.now(),
        admit: resolve,
        refuse: reject,
        timer: undefined,
        forgetClient: () => undefined,
      };
      waiter.timer = setTimeout(() => this.expire(waiter), this.limits.maxWaitMs);
      if (client !== undefined) {
        const leave = () => this.leave(waiter);
        client.addEventListener("abort", leave, { once: true });
        waiter.forgetClient = () => client.removeEventListener("abort", leave);
      }
      let queue = this.queues.get(brand);
      if (queue === undefined) {
        queue = [];
        this.queues.set(brand, queue);
      }
      queue.push(waiter);
      this.waitingTotal += 1;
      this.changed();
    });
  }

  private hasRoom(brand: string): boolean {
    return (
      this.runningTotal < this.limits.concurrency &&
      (this.runningByBrand.get(brand) ?? 0) < this.limits.perBrand
    );
  }

  private start(brand: string): Release {
    this.admissions += 1;
    this.lastServed.set(brand, this.admissions);
    this.runningTotal += 1;
    this.runningByBrand.set(brand, (this.runningByBrand.get(brand) ?? 0) + 1);
    this.changed();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.runningTotal -= 1;
      const left = this.runningByBrand.get(brand)! - 1;
      if (left === 0) this.runningByBrand.delete(brand);
      else this.runningByBrand.set(brand, left);
      this.forget(brand);
      this.changed();
      this.dispatch();
    };
  }

  /** Admits waiting requests, one brand's turn at a time, while there is room. */
  private dispatch(): void {
    while (this.runningTotal < this.limits.concurrency) {
      const brand = this.nextBrand();
      if (brand === undefined) return;
      const queue = this.queues.get(brand)!;
      const waiter = queue.shift()!;
      if (queue.length === 0) this.queues.delete(brand);
      this.waitingTotal -= 1;
      clearTimeout(waiter.timer);
      waiter.forgetClient();
      this.events.admitted?.(this.now() - waiter.since);
      waiter.admit(this.start(brand));
    }
  }

  /** The waiting brand under its cap with the fewest requests running, then served least recently. */
  private nextBrand(): string | undefined {
    let next: string | undefined;
    let nextRunning = Number.POSITIVE_INFINITY;
    let nextServed = Number.POSITIVE_INFINITY;
    for (const brand of this.queues.keys()) {
      if (!this.hasRoom(brand)) continue;
      const running = this.runningByBrand.get(brand) ?? 0;
      const served = this.lastServed.get(brand) ?? 0;
      if (running < nextRunning || (running === nextRunning && served < nextServed)) {
        next = brand;
        nextRunning = running;
        nextServed = served;
      }
    }
    return next;
  }

  /** Drops what is kept of a brand that neither runs nor waits. */
  private forget(brand: string): void {
    if (!this.runningByBrand.has(brand) && !this.queues.has(brand)) this.lastServed.delete(brand);
  }

  private expire(waiter: Waiter): void {
    this.drop(
      waiter,
      new AdmissionRefused(
        "wait_expired",
        `the instance is busy: the request waited ${this.limits.maxWaitMs} ms for its turn; retry after the number of seconds in Retry-After`,
      ),
    );
  }

  /** The waiter's client left: it leaves the queue now, so that it never takes a place. */
  private leave(waiter: Waiter): void {
    this.drop(waiter, clientGone());
  }

  /** Takes a waiter still queued out of the queue and refuses it. */
  private drop(waiter: Waiter, refused: AdmissionRefused): void {
    const queue = this.queues.get(waiter.brand);
    const index = queue?.indexOf(waiter) ?? -1;
    if (queue === undefined || index < 0) return;
    queue.splice(index, 1);
    if (queue.length === 0) this.queues.delete(waiter.brand);
    clearTimeout(waiter.timer);
    waiter.forgetClient();
    this.forget(waiter.brand);
    this.waitingTotal -= 1;
    this.changed();
    this.events.shed?.(refused.reason);
    waiter.refuse(refused);
  }

  private changed(): void {
    this.events.changed?.(this.runningTotal, this.waitingTotal);
  }
}
