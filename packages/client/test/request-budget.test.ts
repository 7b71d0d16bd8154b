import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { MemoryRateLimiter } from "@mdq/server";
import { type FaultProxy, type RunningService, startFaultProxy, startService } from "@mdq/test-support";
import {
  type Clock,
  MdqClient,
  type MdqClientOptions,
  parseRateLimitPolicy,
  parseRateLimitRemaining,
  RequestBudget,
} from "../src/index.js";

/** Virtual time: sleeps resolve only when the test moves the clock past them. */
class FakeClock implements Clock {
  private timers: { at: number; resolve: () => void }[] = [];
  constructor(public time: number) {}
  now(): number {
    return this.time;
  }
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.timers.push({ at: this.time + ms, resolve }));
  }
  /** Lets every pending promise run, then jumps to the earliest timer; until nothing is left. */
  async run(done: () => boolean): Promise<void> {
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve));
      if (done()) return;
      this.timers.sort((a, b) => a.at - b.at);
      const next = this.timers.shift();
      if (!next) throw new Error("nothing to wait for, yet not done");
      this.time = Math.max(this.time, next.at);
      next.resolve();
    }
  }
}

/** Sends `count` requests through `budget`, `parallel` at a time; returns their send times. */
async function sendThrough(budget: RequestBudget, clock: FakeClock, count: number, parallel: number) {
  const times: number[] = [];
  let started = 0;
  const worker = async () => {
    while (started < count) {
      started += 1;
      await budget.acquire();
      times.push(clock.now());
    }
  };
  const workers = Array.from({ length: parallel }, worker);
  let finished = 0;
  for (const running of workers) running.then(() => (finished += 1));
  await clock.run(() => finished === parallel);
  return times;
}

/** The service's own limiter, replayed on the send times: which would it have refused? */
async function refusedByService(times: number[], max: number, windowSeconds: number): Promise<number> {
  const limiter = new MemoryRateLimiter({ max, windowSeconds });
  let refused = 0;
  for (const time of times) if (!(await limiter.consume("client", time)).allowed) refused += 1;
  return refused;
}

describe("the request budget", () => {
  it("never sends a request the service's sliding-window limiter would refuse, at full speed", async () => {
    const clock = new FakeClock(1_800_000_000_000 + 123_456);
    const budget = new RequestBudget({ clock });
    const times = await sendThrough(budget, clock, 4000, 1);
    assert.equal(await refusedByService(times, 1000, 300), 0);
    // It uses its budget: 950 (95 % of 1000) go at once, and 4000 take under 5 windows.
    assert.equal(times.filter((time) => time === times[0]).length, 950);
    assert.ok(times.at(-1)! - times[0]! < 5 * 300_000, `took ${times.at(-1)! - times[0]!} ms`);
  });

  it("keeps parallel callers within the limit in every window", async () => {
    const clock = new FakeClock(1_800_000_000_000 + 700);
    const budget = new RequestBudget({ clock, policy: { max: 10, windowSeconds: 1 } });
    const times = await sendThrough(budget, clock, 120, 8);
    assert.equal(times.length, 120);
    assert.equal(await refusedByService(times, 10, 1), 0);
    const perWindow = new Map<number, number>();
    for (const time of times)
      perWindow.set(Math.floor(time / 1000), (perWindow.get(Math.floor(time / 1000)) ?? 0) + 1);
    assert.ok(Math.max(...perWindow.values()) <= 9, `a window got ${Math.max(...perWindow.values())}`);
  });

  it("refuses what a plain sliding log would allow: a burst right after the previous burst aged out", async () => {
    const clock = new FakeClock(1_800_000_000_000);
    const budget = new RequestBudget({ clock, policy: { max: 10, windowSeconds: 10 }, margin: 1 });
    for (let index = 0; index < 10; index += 1) await budget.acquire();
    clock.time += 10_000;
    // The service still weighs the previous window's 10 at ~100 %: a new request must wait.
    assert.ok(budget.waitBeforeNext() > 0);
    clock.time += 5_000;
    assert.equal(budget.waitBeforeNext(), 0);
  });

  it("adopts the service's RateLimit-Policy and counts requests others spent on the same IP", () => {
    const clock = new FakeClock(1_800_000_000_000);
    const budget = new RequestBudget({ clock });
    const headers = (policy: string, limit: string) =>
      new Headers({ "ratelimit-policy": policy, ratelimit: limit });
    budget.observe(headers('"per-ip";q=40;w=60', '"per-ip";r=39;t=60'), clock.now());
    assert.deepEqual(budget.policy, { max: 40, windowSeconds: 60 });
    assert.equal(budget.limit, 38);
    assert.equal(budget.waitBeforeNext(), 0);
    // The service says 30 are left after our first request: 9 were someone else's.
    budget.observe(headers('"per-ip";q=40;w=60', '"per-ip";r=30;t=60'), clock.now());
    assert.equal(Math.round(budget.estimateAt(clock.now())), 10);
  });

  it("holds every request back until a 429's Retry-After has passed", () => {
    const clock = new FakeClock(1_800_000_000_000);
    const budget = new RequestBudget({ clock });
    budget.pauseUntil(clock.now() + 3000);
    assert.equal(budget.waitBeforeNext(), 3000);
    clock.time += 3000;
    assert.equal(budget.waitBeforeNext(), 0);
  });

  it("parses RateLimit-Policy and RateLimit, taking the strictest of several", () => {
    assert.deepEqual(parseRateLimitPolicy('"per-ip";q=1000;w=300'), { max: 1000, windowSeconds: 300 });
    assert.deepEqual(parseRateLimitPolicy('"burst";q=100;w=10, "day";q=5000;w=86400'), {
      max: 5000,
      windowSeconds: 86400,
    });
    assert.equal(parseRateLimitPolicy("garbage"), undefined);
    assert.equal(parseRateLimitPolicy(null), undefined);
    assert.equal(parseRateLimitRemaining('"per-ip";r=998;t=389'), 998);
    assert.equal(parseRateLimitRemaining('"a";r=5;t=1, "b";r=2;t=9'), 2);
    assert.equal(parseRateLimitRemaining('"per-ip";t=3'), undefined);
  });
});

describe("pacing against a service with a small rate limit", { timeout: 60_000 }, () => {
  let region: RunningService<MdqClientOptions>;
  let proxy: FaultProxy;
  before(async () => {
    region = await startService<MdqClientOptions>({
      days: 60,
      scale: 4,
      rateLimitMax: 20,
      rateLimitWindowSeconds: 2,
    });
    proxy = await startFaultProxy(region.url);
  });
  after(async () => {
    await proxy.close();
    await region.close();
  });

  it("finishes a sync and 30 parallel calls without ever getting a 429", async () => {
    // Margin 0.8: with a 20-request budget, 5 % is one request, less than the requests that can
    // cross a window boundary between the client's clock reading and the service's.
    const client = new MdqClient(region.clientOptions({ via: proxy.url, rateLimitMargin: 0.8 }));
    const started = Date.now();
    const [rows] = await Promise.all([
      (async () => {
        let count = 0;
        for await (const _ of client.records({ from: region.firstDay, to: region.lastDay, pageSize: 1000 }))
          count += 1;
        return count;
      })(),
      ...Array.from({ length: 30 }, () => client.readiness()),
    ]);
    assert.deepEqual(client.budget.policy, { max: 20, windowSeconds: 2 });
    const statuses = proxy.seen.map((seen) => seen.status);
    assert.equal(statuses.filter((status) => status === 429).length, 0);
    assert.ok(statuses.length >= 36, `only ${statuses.length} requests`);
    assert.equal(rows, 60 * 84);
    // 36+ requests at 16 per 2 s cannot be done in under 2 windows: it waited.
    assert.ok(Date.now() - started >= 2000, `took only ${Date.now() - started} ms`);
  });
});
