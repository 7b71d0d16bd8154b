/**
 * The Redis connection an instance shares its rate limit and its changes through
 * (`MDQ_REDIS_URL`). Redis is never on the critical path: commands fail fast instead of queueing
 * while it is unreachable (no offline queue, a short command timeout, no per-command retries), so
 * callers fall back at once, and ioredis keeps reconnecting in the background until it answers.
 * Warnings are throttled and never show the URL (it may carry a password).
 */
import { Redis } from "ioredis";
import type { ServiceMetrics } from "../observability/metrics.js";
import { safeReason, ThrottledWarning, type WarningLogger } from "../observability/throttled-warning.js";

/** Longest a Redis command may take before the caller falls back (a stalled Redis adds at most this). */
export const REDIS_COMMAND_TIMEOUT_MS = 250;

export interface RedisConnectionOptions {
  url: string;
  metrics: ServiceMetrics;
  log?: WarningLogger | undefined;
  /** Overrides `REDIS_COMMAND_TIMEOUT_MS`. */
  commandTimeoutMs?: number;
}

/** Reconnects quickly at first, then every 2 s at most, forever. */
function reconnectDelay(attempt: number): number {
  return Math.min(50 * attempt, 2000);
}

/** One instance's connections to Redis: commands, and (on demand) a subscriber. */
export class RedisConnection {
  readonly client: Redis;
  private readonly warning: ThrottledWarning;
  private readonly subscribers: Redis[] = [];
  /** False from a failure until the next answer: `mdq_redis_up`. */
  private answering = false;

  constructor(private readonly options: RedisConnectionOptions) {
    this.warning = new ThrottledWarning(
      options.log,
      "Redis does not answer; each instance counts the rate limit on its own until it does",
    );
    options.metrics.redisUp(false);
    this.client = new Redis(options.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? REDIS_COMMAND_TIMEOUT_MS,
      connectTimeout: 2000,
      retryStrategy: reconnectDelay,
      connectionName: "mdq",
    });
    this.client.on("ready", () => this.answered());
    this.client.on("error", (error) => this.failed("connection", error));
    this.client.on("close", () => {
      this.answering = false;
      options.metrics.redisUp(false);
    });
  }

  /** Whether the command connection is established now. */
  get ready(): boolean {
    return this.client.status === "ready";
  }

  /** Resolves once the command connection is established; rejects after `timeoutMs`. */
  async connected(timeoutMs = 5000): Promise<void> {
    if (this.ready) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.client.off("ready", onReady);
        reject(new Error(`Redis did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      this.client.once("ready", onReady);
    });
  }

  /** Answers when Redis answers PING; throws otherwise (within the command timeout). */
  async ping(): Promise<void> {
    try {
      await this.client.ping();
      this.answered();
    } catch (error) {
      this.failed("ping", error);
      throw error;
    }
  }

  /** Counts and (throttled) logs a failure of `operation`; Redis counts as down until it answers. */
  failed(operation: string, error: unknown): void {
    this.options.metrics.redisErrors.inc();
    this.answering = false;
    this.options.metrics.redisUp(false);
    this.warning.warn({ operation, reason: safeReason(error) });
  }

  /** Notes that Redis answered a command (after a stall, the connection never dropped). */
  answered(): void {
    if (this.answering) return;
    this.answering = true;
    this.options.metrics.redisUp(true);
    this.warning.recovered("Redis answers again; the rate limit is shared again");
  }

  /**
   * A dedicated connection for SUBSCRIBE (a subscribed connection can run nothing else). Its
   * subscriptions wait for Redis rather than fail, and are renewed after every reconnect.
   */
  subscriber(): Redis {
    const subscriber = new Redis(this.options.url, {
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
      autoResubscribe: true,
      connectTimeout: 2000,
      retryStrategy: reconnectDelay,
      connectionName: "mdq-changes",
    });
    subscriber.on("error", (error) => this.failed("subscribe", error));
    this.subscribers.push(subscriber);
    return subscriber;
  }

  /** Closes every connection at once (pending commands fail; callers fall back). */
  async close(): Promise<void> {
    for (const connection of [this.client, ...this.subscribers]) connection.disconnect();
  }
}
