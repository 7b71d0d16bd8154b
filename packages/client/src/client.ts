/**
 * `MdqClient`: the spec's daily retrieval flow (§1) over HTTP. Readiness, then every record or
 * aggregate of any date range: split into ≤ 90-day windows, every page of each window walked
 * (page-walk.ts), each row yielded exactly once even when the data is reloaded during the walk
 * (a records walk by day is repaired rather than restarted: window-repair.ts).
 *
 * Buffering a window (rather than remembering yielded recordIds) is what makes the result equal to
 * the new data: rows yielded before a reload could have changed. The price is memory for one
 * window (two while the next one is prefetched); `windowDays` bounds it.
 *
 * Every answer is untrusted: it is validated (answer-validation.ts) before it is used, its body
 * is read up to `maxBodyBytes`, and each walk keeps to a request count and a deadline derived
 * from its range (run-limits.ts).
 *
 * This class holds the HTTP calls (the token, the GraphQL POST) and the public methods; the query
 * texts are in queries.ts, and each operation's plan in operations/ (records, aggregate, sync,
 * changes, readiness, my-access).
 */
import type { ExportFormat } from "@mdq/contract";
import { checkGraphQLData } from "./answer-validation.js";
import { type ClientCredentialsConfig, validateClientConfig } from "./config.js";
import {
  DEFAULT_RETRY_POLICY,
  errorOf,
  type HttpResponse,
  HttpTransport,
  isObject,
  parseJson,
} from "./http-transport.js";
import { aggregatePlan } from "./operations/aggregate.js";
import { dataChanges } from "./operations/changes.js";
import { myAccess } from "./operations/my-access.js";
import { positive } from "./operations/option-checks.js";
import { readiness, waitUntilReady } from "./operations/readiness.js";
import { recordsPlan } from "./operations/records.js";
import { type SyncSource, syncPages } from "./operations/sync.js";
import { walkPages } from "./page-walk.js";
import {
  type ExportOptions,
  type ExportResponse,
  type ExportResume,
  exportRecords,
  openExport,
} from "./record-export.js";
import { DEFAULT_RATE_LIMIT, RequestBudget, systemClock } from "./request-budget.js";
import { DEFAULT_MAX_REQUESTS_PER_DAY, DEFAULT_RUN_DEADLINE_MS_PER_DAY } from "./run-limits.js";
import { TokenManager } from "./token-manager.js";
import type {
  AggregateOptions,
  Clock,
  DataChanges,
  MarketingAggregate,
  MarketingRecord,
  MdqClientEvent,
  MyAccess,
  Page,
  RateLimitPolicy,
  Readiness,
  RecordField,
  RecordsOptions,
  SyncPagesOptions,
  WaitUntilReadyOptions,
} from "./types.js";
import type { GraphQLResult, WalkService } from "./walk-types.js";

/** Settings of an {@link MdqClient}: the five of `clientConfigFromEnv`, and tuning. */
export interface MdqClientOptions extends ClientCredentialsConfig {
  /** Milliseconds before one HTTP request is abandoned (then retried); default 30 000. */
  timeoutMs?: number;
  /** Attempts per request, 429 waits and transient failures included; default 6. */
  maxAttempts?: number;
  /** Backoff base and cap in ms (full jitter); default 200 and 10 000. */
  backoffBaseMs?: number;
  backoffCapMs?: number;
  /** Longest `Retry-After` (seconds) worth waiting for; a longer one fails with RATE_LIMITED. Default 300. */
  maxRetryAfterSeconds?: number;
  /** The rate limit to keep under until the service states its own; default 1000 per 300 s. */
  rateLimit?: RateLimitPolicy;
  /** Fraction of the rate limit the client allows itself; default 0.95. */
  rateLimitMargin?: number;
  /** Share one budget between clients of one process (they share the service's per-IP limit). */
  budget?: RequestBudget;
  /**
   * Largest answer body read, in bytes; a longer one fails with SERVER_ANSWER_INVALID at once.
   * Default 64 MiB (a page of 5000 records is about 2.5 MB of JSON).
   */
  maxBodyBytes?: number;
  /** Requests a walk may make per day of its range (run-limits.ts); default 40. */
  maxRequestsPerDay?: number;
  /** Milliseconds a walk may take per day of its range, plus 10 minutes (run-limits.ts); default 60 000. */
  runDeadlineMsPerDay?: number;
  /** Renew the token this many seconds before it expires; default 60. */
  renewBeforeSeconds?: number;
  /** Ask for compressed answers (`Accept-Encoding: gzip, br`); default true, false asks for none. */
  compression?: boolean;
  /** Sent as `User-Agent`; default `mdq-client/0.1`. */
  userAgent?: string;
  /** Told about tokens, retries, waits, restarts and pages: for progress and logs. */
  onEvent?: (event: MdqClientEvent) => void;
  /**
   * For tests: the fetch that sends every request. Without one, GraphQL and token requests go
   * through undici, their answers decoded once read whole (http-exchange.ts), and the export's
   * streamed download through `globalThis.fetch`.
   */
  fetch?: typeof fetch;
  /** For tests: the clock and randomness to use. */
  clock?: Clock;
  random?: () => number;
}

export { DIMENSIONS, METRICS, RECORD_FIELDS } from "@mdq/contract";

/** Default `maxBodyBytes`: 64 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;

/**
 * A client of one region's MDQ service for one brand.
 * @example
 * const client = new MdqClient(clientConfigFromEnv(process.env));
 * await client.waitUntilReady({ interval: 60_000, timeout: 3_600_000 });
 * for await (const record of client.records({ from: "2026-01-01", to: "2026-11-21" })) write(record);
 */
export class MdqClient implements WalkService {
  readonly config: ClientCredentialsConfig;
  /** The request budget this client spends (shared if `options.budget` was given). */
  readonly budget: RequestBudget;
  private readonly tokens: TokenManager;
  private readonly transport: HttpTransport;
  private readonly clock: Clock;
  private readonly userAgent: string;
  /** The `onEvent` of the options: told about tokens, retries, pages and repairs. */
  readonly onEvent: ((event: MdqClientEvent) => void) | undefined;
  /**
   * What the operations' plans need of this client (operations/): its brand and walk limits, what
   * the bulk export needs (record-export.ts), and whether the service has the export (false once
   * it answered 404: an MDQ from before it, CONTRACT §7).
   */
  private readonly source: SyncSource;

  constructor(options: MdqClientOptions) {
    this.config = validateClientConfig(options);
    this.clock = options.clock ?? systemClock;
    this.onEvent = options.onEvent;
    this.userAgent = options.userAgent ?? "mdq-client/0.1";
    const retry = {
      timeoutMs: positive(options.timeoutMs, DEFAULT_RETRY_POLICY.timeoutMs, "timeoutMs"),
      maxAttempts: positive(options.maxAttempts, DEFAULT_RETRY_POLICY.maxAttempts, "maxAttempts"),
      backoffBaseMs: positive(options.backoffBaseMs, DEFAULT_RETRY_POLICY.backoffBaseMs, "backoffBaseMs"),
      backoffCapMs: positive(options.backoffCapMs, DEFAULT_RETRY_POLICY.backoffCapMs, "backoffCapMs"),
      maxRetryAfterSeconds: positive(
        options.maxRetryAfterSeconds,
        DEFAULT_RETRY_POLICY.maxRetryAfterSeconds,
        "maxRetryAfterSeconds",
      ),
      maxBodyBytes: positive(options.maxBodyBytes, DEFAULT_MAX_BODY_BYTES, "maxBodyBytes"),
    };
    const runLimits = {
      maxRequestsPerDay: positive(
        options.maxRequestsPerDay,
        DEFAULT_MAX_REQUESTS_PER_DAY,
        "maxRequestsPerDay",
      ),
      runDeadlineMsPerDay: positive(
        options.runDeadlineMsPerDay,
        DEFAULT_RUN_DEADLINE_MS_PER_DAY,
        "runDeadlineMsPerDay",
      ),
    };
    this.budget =
      options.budget ??
      new RequestBudget({
        policy: options.rateLimit ?? DEFAULT_RATE_LIMIT,
        margin: options.rateLimitMargin ?? 0.95,
        clock: this.clock,
      });
    this.transport = new HttpTransport({
      retry,
      budget: this.budget,
      clock: this.clock,
      ...(options.compression === undefined ? {} : { compression: options.compression }),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.random ? { random: options.random } : {}),
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    });
    this.tokens = new TokenManager({
      transport: this.transport,
      clock: this.clock,
      authUrl: this.config.authUrl,
      appClientId: this.config.appClientId,
      appClientSecret: this.config.appClientSecret,
      userAgent: this.userAgent,
      ...(options.renewBeforeSeconds === undefined ? {} : { renewBeforeSeconds: options.renewBeforeSeconds }),
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    });
    this.source = {
      brandClientId: this.config.brandClientId,
      runLimits,
      exportAccess: {
        baseUrl: this.config.baseUrl,
        brandClientId: this.config.brandClientId,
        tokens: this.tokens,
        budget: this.budget,
        clock: this.clock,
        retry,
        fetch: options.fetch ?? globalThis.fetch,
        userAgent: this.userAgent,
        compression: options.compression !== false,
        random: options.random ?? Math.random,
        onEvent: options.onEvent,
      },
      exportAvailable: true,
      onEvent: options.onEvent,
      recordPages: (pageOptions) => this.recordPages(pageOptions),
    };
  }

  /**
   * Every record of a range (at most 366 days) from one streamed export (CONTRACT §7), in
   * (date, recordId) order; resumes with `after=` when the connection breaks.
   * @example for await (const record of client.exportRecords({ from: "2026-01-01", to: "2026-11-21" })) write(record);
   */
  exportRecords(options: ExportOptions): AsyncGenerator<MarketingRecord> {
    return exportRecords(this.source.exportAccess, options);
  }

  /**
   * Opens one export response in `format` (its headers read, its body to be read by the caller),
   * resuming at `resume`: what `mdq-client export` writes to a file byte for byte.
   */
  openExport(
    options: ExportOptions,
    format: ExportFormat,
    resume: ExportResume | null = null,
  ): Promise<ExportResponse> {
    return openExport(this.source.exportAccess, options, format, resume);
  }

  /** How many token requests this client has sent. */
  get tokenRequestCount(): number {
    return this.tokens.requestCount;
  }

  /**
   * `marketingDataReadiness` for `date` (the region's today when omitted).
   * @example const { status } = await client.readiness("2026-11-22");
   */
  async readiness(date?: string, signal?: AbortSignal): Promise<Readiness> {
    return readiness(this, this.config.brandClientId, date, signal);
  }

  /**
   * `myAccess`: the markets and data sources these credentials may read (the brand's grants with
   * the app's narrowing applied), the token's scope and region, and when the token expires.
   * @example const { markets, dataSources } = await client.myAccess();
   */
  async myAccess(signal?: AbortSignal): Promise<MyAccess> {
    return myAccess(this, this.config.brandClientId, signal);
  }

  /**
   * `marketingDataChanges` for `from..to` (any length: asked in ≤ 366-day windows, oldest first):
   * the days whose visible data changed after `since` (null: every day that has data).
   * @example const { dataVersion, days } = await client.dataChanges({ from, to, since: stored });
   */
  async dataChanges(options: {
    from: string;
    to: string;
    since: string | null;
    signal?: AbortSignal;
  }): Promise<DataChanges> {
    return dataChanges(this, this.config.brandClientId, options);
  }

  /**
   * Polls readiness every `interval` ms until `READY` and returns that answer; fails with
   * NOT_READY after `timeout` ms, or ABORTED when `signal` fires.
   * @example await client.waitUntilReady({ interval: 120_000, timeout: 4 * 3_600_000 });
   */
  async waitUntilReady(options: WaitUntilReadyOptions = {}): Promise<Readiness> {
    return waitUntilReady((date, signal) => this.readiness(date, signal), this.clock, options);
  }

  /**
   * Every record of `from..to` (inclusive, any length), each exactly once.
   * @example for await (const record of client.records({ from, to, currency: "GBP" })) ...
   */
  async *records<Field extends RecordField = RecordField>(
    options: RecordsOptions<Field>,
  ): AsyncGenerator<Pick<MarketingRecord, Field | "recordId">> {
    for await (const page of this.recordPages(options)) yield* page.rows;
  }

  /**
   * Every page of records of `from..to`, window by window; a window's pages come once the whole
   * window is fetched consistently (see the module comment).
   * @example for await (const page of client.recordPages({ from, to })) checkpoint(page.window);
   */
  async *recordPages<Field extends RecordField = RecordField>(
    options: RecordsOptions<Field>,
  ): AsyncGenerator<Page<Pick<MarketingRecord, Field | "recordId">>> {
    yield* walkPages(this, recordsPlan(this.source, options));
  }

  /**
   * Every record of `from..to` (any length) with every field, oldest day first and by recordId
   * within a day, as `recordPages` gives them for that sort: what `sync` and `mirror` write. Each
   * window is one bulk export (export-pages.ts) rather than a page walk; a service without the
   * export (404) is walked instead, from the window that found it missing, and so is every range
   * when `pageWalk` is set.
   * @example for await (const page of client.syncPages({ from, to, windowDays: 7 })) append(page.rows);
   */
  async *syncPages(options: SyncPagesOptions): AsyncGenerator<Page<MarketingRecord>> {
    yield* syncPages(this.source, options);
  }

  /**
   * Every aggregate row of `from..to`. Windows are aligned so that a grouped week or month is
   * never split; without a date dimension in `groupBy`, a range longer than one window gives one
   * set of groups per window (see `aggregatePages` for which window a row belongs to).
   * @example for await (const row of client.aggregate({ from, to, metrics: ["SPEND"], groupBy: ["MARKET"] })) ...
   */
  async *aggregate(options: AggregateOptions): AsyncGenerator<MarketingAggregate> {
    for await (const page of this.aggregatePages(options)) yield* page.rows;
  }

  /** Every page of aggregate rows, window by window, as for `recordPages`. */
  async *aggregatePages(options: AggregateOptions): AsyncGenerator<Page<MarketingAggregate>> {
    yield* walkPages(this, aggregatePlan(this.source, options));
  }

  /**
   * POSTs one GraphQL request with the cached token; on a 401 renews the token once and retries.
   * Throws an MdqClientError for an answer with `errors` (the first error's code and message).
   */
  async graphql(
    query: string,
    variables: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<GraphQLResult> {
    const body = JSON.stringify({ query, variables });
    let token = await this.tokens.token(signal);
    let response = await this.post(body, token, signal);
    if (response.status === 401) {
      this.onEvent?.({ type: "token-rejected", url: `${this.config.baseUrl}/graphql` });
      token = await this.tokens.renew(token, signal);
      response = await this.post(body, token, signal);
    }
    const parsed = parseJson(response.text);
    if (isObject(parsed) && Array.isArray(parsed["errors"]) && parsed["errors"].length > 0) {
      throw errorOf(response, response.attempts);
    }
    if (response.status !== 200) throw errorOf(response, response.attempts);
    const data = checkGraphQLData(isObject(parsed) ? parsed["data"] : undefined);
    return {
      data,
      extensions: isObject(parsed) && isObject(parsed["extensions"]) ? parsed["extensions"] : {},
    };
  }

  private post(body: string, token: string, signal: AbortSignal | undefined): Promise<HttpResponse> {
    return this.transport.post({
      url: `${this.config.baseUrl}/graphql`,
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json",
        "user-agent": this.userAgent,
      },
      body,
      signal,
    });
  }
}
