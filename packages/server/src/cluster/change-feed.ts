/**
 * Tells every instance of a region about an operator's change, so that a revoked app, a rotated
 * secret, a grant change or a new signing key applies on every instance at once, not only on the
 * one whose admin listener made it. Over Redis pub/sub on channel `mdq:<region>:changes`.
 *
 * Delivery is best effort (pub/sub keeps nothing for a disconnected subscriber), and nothing
 * depends on it for correctness: the app cache expires within `MDQ_AUTH_CACHE_SECONDS` (≤ 60 s)
 * and the key ring reloads itself every 30 s, so a lost message only delays a change to those
 * bounds. After a reconnect an instance assumes it missed something and refreshes everything.
 */
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type { ServiceMetrics } from "../observability/metrics.js";
import type { RedisConnection } from "./redis-connection.js";

/** What changed: an app (created, revoked, secret rotated), a brand's grants, or the signing keys. */
export type Change =
  | { kind: "app"; appClientId: string }
  | { kind: "grants"; brandId: string }
  | { kind: "keys" }
  /** Anything may have changed (a subscriber that was disconnected). */
  | { kind: "all" };

/** Announces changes to the other instances and hears theirs. */
export interface ChangeFeed {
  /** Announces `change`; never throws (a failure is counted and logged). */
  publish(change: Change): Promise<void>;
  /** Calls `listener` for every change announced by another instance. */
  subscribe(listener: (change: Change) => void): void;
  /** Resolves once changes are heard (the first subscription is active). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** The feed of a single instance: nobody else to tell. */
export const SOLO_CHANGE_FEED: ChangeFeed = {
  async publish() {},
  subscribe() {},
  async ready() {},
  async close() {},
};

/** The channel of a region's changes. */
export function changeChannel(region: string): string {
  return `mdq:${region}:changes`;
}

function parseChange(message: string): { origin: string; change: Change } | undefined {
  try {
    const parsed = JSON.parse(message) as { origin?: unknown; change?: { kind?: unknown } };
    const kind = parsed.change?.kind;
    if (typeof parsed.origin !== "string" || !["app", "grants", "keys", "all"].includes(kind as string))
      return undefined;
    return parsed as { origin: string; change: Change };
  } catch {
    return undefined;
  }
}

/** The change feed over Redis pub/sub. */
export class RedisChangeFeed implements ChangeFeed {
  /** Tells this instance's own messages apart: it applied its changes already. */
  private readonly origin = randomUUID();
  private readonly listeners: ((change: Change) => void)[] = [];
  private readonly subscriber: Redis;
  private readonly subscribed: Promise<unknown>;
  private connectedBefore = false;

  constructor(
    private readonly redis: RedisConnection,
    private readonly channel: string,
    private readonly metrics: ServiceMetrics,
  ) {
    this.subscriber = redis.subscriber();
    this.subscriber.on("message", (from: string, message: string) => {
      if (from !== this.channel) return;
      const parsed = parseChange(message);
      if (!parsed || parsed.origin === this.origin) return;
      this.deliver(parsed.change);
    });
    this.subscriber.on("ready", () => {
      if (this.connectedBefore) this.deliver({ kind: "all" });
      this.connectedBefore = true;
    });
    // Queued until Redis answers (the subscriber keeps an offline queue), then renewed on reconnect.
    this.subscribed = this.subscriber.subscribe(channel).catch((error: unknown) => {
      redis.failed("subscribe", error);
    });
  }

  async ready(): Promise<void> {
    await this.subscribed;
  }

  async publish(change: Change): Promise<void> {
    try {
      await this.redis.client.publish(this.channel, JSON.stringify({ origin: this.origin, change }));
      this.metrics.changesPublished.inc({ kind: change.kind });
    } catch (error) {
      this.redis.failed("publish", error);
    }
  }

  subscribe(listener: (change: Change) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    this.listeners.length = 0;
    this.subscriber.disconnect();
  }

  private deliver(change: Change): void {
    this.metrics.changesReceived.inc({ kind: change.kind });
    for (const listener of this.listeners) listener(change);
  }
}
