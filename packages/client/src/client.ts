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
 */
import {
  DIMENSIONS,
  type ExportFormat,
  inclusiveDayCount,
  isDateDimension,
  MAX_CHANGES_RANGE_DAYS,
  MAX_PAGE_SIZE,
  METRICS,
  MIN_PAGE_SIZE,
  RECORD_FIELDS,
} from "@mdq/contract";
import {
  checkAggregates,
  checkDataChanges,
  checkGraphQLData,
  checkMyAccess,
  checkReadiness,
  checkRecords,
} from "./answer-validation.js";
import { type ClientCredentialsConfig, validateClientConfig } from "./config.js";
import {
  type DateWindow,
  fromEpochDay,
  MAX_WINDOW_DAYS,
  splitDateRange,
  toEpochDay,
  type WindowAlignment,
} from "./date-windows.js";
import { MdqClientError } from "./errors.js";
import { exportPages, isExportMissing } from "./export-pages.js";
import {
  DEFAULT_RETRY_POLICY,
  errorOf,
  type HttpResponse,
  HttpTransport,
  isObject,
  parseJson,
} from "./http-transport.js";
import { type GraphQLResult, type WalkPlan, type WalkService, walkPages } from "./page-walk.js";
import {
  type ExportAccess,
  type ExportOptions,
  type ExportResponse,
  type ExportResume,
  exportRecords,
  openExport,
} from "./record-export.js";
import { DEFAULT_RATE_LIMIT, RequestBudget, systemClock } from "./request-budget.js";
import {
  DEFAULT_MAX_REQUESTS_PER_DAY,
  DEFAULT_RUN_DEADLINE_MS_PER_DAY,
  type RunLimitSettings,
  RunLimits,
} from "./run-limits.js";
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
  RecordSort,
  RecordsOptions,
  SyncPagesOptions,
  WaitUntilReadyOptions,
} from "./types.js";

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
  /** For tests: the fetch, clock and randomness to use. */
  fetch?: typeof fetch;
  clock?: Clock;
  random?: () => number;
}

export { DIMENSIONS, METRICS, RECORD_FIELDS } from "@mdq/contract";

const DEFAULT_RECORD_SORT: RecordSort[] = [{ field: "DATE_DAY", direction: "ASC" }];
/** The largest page the service allows: the fewest requests. */
const DEFAULT_PAGE_SIZE = MAX_PAGE_SIZE;
const DEFAULT_CONCURRENCY = 2;
/** Default `maxBodyBytes`: 64 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;

const MY_ACCESS_QUERY = `query MdqMyAccess($clientId: ID!) {
  myAccess(clientId: $clientId) { brandId appClientId markets dataSources scope region tokenExpiresAt }
}`;

const READINESS_QUERY = `query MdqReadiness($clientId: ID!, $date: Date) {
  marketingDataReadiness(clientId: $clientId, date: $date) { status lastProcessedAt date availableThrough dataVersion }
}`;

const CHANGES_QUERY = `query MdqChanges($clientId: ID!, $dateRange: DateRangeInput!, $since: String) {
  marketingDataChanges(clientId: $clientId, dateRange: $dateRange, since: $since) {
    dataVersion fullResyncRequired reason days { date dataVersion changedAt rows }
  }
}`;

/** `from..to` cut into consecutive windows of at most MAX_CHANGES_RANGE_DAYS (366) days, oldest first. */
function changesWindows(from: string, to: string): DateWindow[] {
  const last = toEpochDay(to);
  if (last < toEpochDay(from)) {
    throw new MdqClientError("INVALID_DATE_RANGE", `the range ends (${to}) before it starts (${from})`);
  }
  const windows: DateWindow[] = [];
  for (let start = toEpochDay(from); start <= last; start += MAX_CHANGES_RANGE_DAYS) {
    windows.push({
      from: fromEpochDay(start),
      to: fromEpochDay(Math.min(last, start + MAX_CHANGES_RANGE_DAYS - 1)),
    });
  }
  return windows;
}

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
  private readonly runLimits: RunLimitSettings;
  /** What the bulk export needs of this client (record-export.ts). */
  private readonly exportAccess: ExportAccess;
  /** False once the service answered 404 on the export: an MDQ from before it (CONTRACT §7). */
  private exportAvailable = true;

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
    this.runLimits = {
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
      ...(options.renewBeforeSeconds === undefined ? {} : { renewBeforeSeconds: options.renewBeforeSeconds }),
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    });
    this.exportAccess = {
      baseUrl: this.config.baseUrl,
      brandClientId: this.config.brandClientId,
      tokens: this.tokens,
      budget: this.budget,
      clock: this.clock,
      retry,
      fetch: options.fetch ?? globalThis.fetch,
      userAgent: this.userAgent,
      random: options.random ?? Math.random,
      onEvent: options.onEvent,
    };
  }

  /**
   * Every record of a range (at most 366 days) from one streamed export (CONTRACT §7), in
   * (date, recordId) order; resumes with `after=` when the connection breaks.
   * @example for await (const record of client.exportRecords({ from: "2026-01-01", to: "2026-11-21" })) write(record);
   */
  exportRecords(options: ExportOptions): AsyncGenerator<MarketingRecord> {
    return exportRecords(this.exportAccess, options);
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
    return openExport(this.exportAccess, options, format, resume);
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
    const result = await this.graphql(
      READINESS_QUERY,
      { clientId: this.config.brandClientId, ...(date === undefined ? {} : { date }) },
      signal,
    );
    return checkReadiness(result.data["marketingDataReadiness"], date);
  }

  /**
   * `myAccess`: the markets and data sources these credentials may read (the brand's grants with
   * the app's narrowing applied), the token's scope and region, and when the token expires.
   * @example const { markets, dataSources } = await client.myAccess();
   */
  async myAccess(signal?: AbortSignal): Promise<MyAccess> {
    const result = await this.graphql(MY_ACCESS_QUERY, { clientId: this.config.brandClientId }, signal);
    return checkMyAccess(result.data["myAccess"]);
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
    const answer: DataChanges = { dataVersion: "", fullResyncRequired: false, reason: null, days: [] };
    for (const window of changesWindows(options.from, options.to)) {
      const result = await this.graphql(
        CHANGES_QUERY,
        { clientId: this.config.brandClientId, dateRange: window, since: options.since },
        options.signal,
      );
      const changes = checkDataChanges(result.data["marketingDataChanges"], window);
      // Versions only grow: the first window's is the one every later change comes after.
      answer.dataVersion ||= changes.dataVersion;
      if (changes.fullResyncRequired) {
        answer.fullResyncRequired = true;
        answer.reason ??= changes.reason;
      }
      answer.days.push(...changes.days);
    }
    return answer;
  }

  /**
   * Polls readiness every `interval` ms until `READY` and returns that answer; fails with
   * NOT_READY after `timeout` ms, or ABORTED when `signal` fires.
   * @example await client.waitUntilReady({ interval: 120_000, timeout: 4 * 3_600_000 });
   */
  async waitUntilReady(options: WaitUntilReadyOptions = {}): Promise<Readiness> {
    const interval = positive(options.interval, 300_000, "interval");
    const deadline =
      options.timeout === undefined ? Number.POSITIVE_INFINITY : this.clock.now() + options.timeout;
    for (;;) {
      const readiness = await this.readiness(options.date, options.signal);
      if (readiness.status === "READY") return readiness;
      const now = this.clock.now();
      if (now >= deadline) {
        throw new MdqClientError("NOT_READY", `the data for ${readiness.date} is still not ready`);
      }
      await this.clock.sleep(Math.min(interval, deadline - now), options.signal);
    }
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
    const fields = recordFields(options.fields);
    const sort = options.sort && options.sort.length > 0 ? options.sort : DEFAULT_RECORD_SORT;
    const newestFirst = sort[0]?.field === "DATE_DAY" && sort[0].direction === "DESC";
    type Row = Pick<MarketingRecord, Field | "recordId">;
    yield* walkPages<Row>(this, {
      field: "marketingRecords",
      query: `query MdqRecords($clientId: ID!, $dateRange: DateRangeInput!, $currency: Currency, $pagination: PaginationInput, $sort: [RecordSortInput!], $filter: MarketingFilterInput) {
  marketingRecords(clientId: $clientId, dateRange: $dateRange, currency: $currency, pagination: $pagination, sort: $sort, filter: $filter) { ${fields.join(" ")} }
}`,
      variables: this.commonVariables(options, sort),
      ...this.walkSettings(options, windowsOf(options, "day", newestFirst)),
      rowsOf: (raw, window) => checkRecords<Row>(raw, fields, window),
      keyOf: (row) => row.recordId,
      ...(sort.length === 1 &&
      sort[0]!.field === "DATE_DAY" &&
      !options.filter &&
      fields.length === RECORD_FIELDS.length
        ? { repair: { dateOf: (row: Row) => String((row as Record<string, unknown>)["date"]), newestFirst } }
        : {}),
    });
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
    let from = options.from;
    if (options.pageWalk !== true && this.exportAvailable) {
      const windows = windowsOf(options, "day", false);
      const { pageSize, limits } = this.walkSettings(options, windows);
      if (pageSize < MIN_PAGE_SIZE || pageSize > MAX_PAGE_SIZE) {
        limits.close();
        throw new MdqClientError("INVALID_CONFIG", `pageSize must be ${MIN_PAGE_SIZE}..${MAX_PAGE_SIZE}`);
      }
      let nextWindow = 0;
      try {
        for await (const page of exportPages(this.exportAccess, {
          windows,
          pageSize,
          limits,
          ...(options.currency === undefined ? {} : { currency: options.currency }),
          ...(options.filter === undefined ? {} : { filter: options.filter }),
        })) {
          if (page.lastInWindow) nextWindow = page.windowIndex + 1;
          yield page;
        }
        return;
      } catch (error) {
        if (!isExportMissing(error)) throw error;
        this.exportAvailable = false;
        from = windows[nextWindow]!.from;
        this.onEvent?.({ type: "export-unavailable", from });
      }
    }
    yield* this.recordPages({ ...options, from, sort: DEFAULT_RECORD_SORT });
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
    const metrics = checkedList(options.metrics, METRICS, "metrics");
    if (metrics.length === 0)
      throw new MdqClientError("INVALID_CONFIG", "metrics must name at least one metric");
    const groupBy =
      options.groupBy === undefined ? undefined : checkedList(options.groupBy, DIMENSIONS, "groupBy");
    const grouped = groupBy ?? ["DATE_DAY"];
    const align: WindowAlignment = grouped.includes("DATE_MONTH")
      ? "month"
      : grouped.includes("DATE_WEEK")
        ? "week"
        : "day";
    const firstSort = options.sort?.[0];
    const newestFirst = firstSort
      ? isDateDimension(firstSort.field) && firstSort.direction === "DESC"
      : grouped.some(isDateDimension);
    const totals = metrics.map((metric) => `TOTAL_${metric}`);
    const variables = {
      ...this.commonVariables(options, options.sort),
      metrics,
      ...(groupBy === undefined ? {} : { groupBy }),
    };
    yield* walkPages<MarketingAggregate>(this, {
      field: "marketingAggregate",
      query: `query MdqAggregate($clientId: ID!, $dateRange: DateRangeInput!, $metrics: [Metric!]!, $groupBy: [Dimension!], $currency: Currency, $pagination: PaginationInput, $sort: [AggregateSortInput!], $filter: MarketingFilterInput) {
  marketingAggregate(clientId: $clientId, dateRange: $dateRange, metrics: $metrics, groupBy: $groupBy, currency: $currency, pagination: $pagination, sort: $sort, filter: $filter) { ${DIMENSIONS.join(" ")} ${totals.join(" ")} currency }
}`,
      variables,
      ...this.walkSettings(options, windowsOf(options, align, newestFirst)),
      rowsOf: (raw) => checkAggregates(raw),
    });
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

  private commonVariables(
    options: AggregateOptions | RecordsOptions<RecordField>,
    sort: unknown[] | undefined,
  ): Record<string, unknown> {
    return {
      clientId: this.config.brandClientId,
      ...(options.currency === undefined ? {} : { currency: options.currency }),
      ...(options.filter === undefined ? {} : { filter: options.filter }),
      ...(sort === undefined || sort.length === 0 ? {} : { sort }),
    };
  }

  /** The windows, page settings and limits of one walk over `windows`. */
  private walkSettings(
    options: { pageSize?: number; concurrency?: number; signal?: AbortSignal },
    windows: DateWindow[],
  ): Pick<WalkPlan<unknown>, "windows" | "pageSize" | "concurrency" | "limits"> {
    const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(pageSize))
      throw new MdqClientError("INVALID_CONFIG", "pageSize must be an integer");
    const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new MdqClientError("INVALID_CONFIG", "concurrency must be a positive integer");
    }
    const days = windows.reduce((sum, window) => sum + inclusiveDayCount(window.from, window.to), 0);
    return { windows, pageSize, concurrency, limits: new RunLimits(this.runLimits, days, options.signal) };
  }
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!(Number.isFinite(value) && value > 0)) {
    throw new MdqClientError("INVALID_CONFIG", `${name} must be a positive number`);
  }
  return value;
}

function windowsOf(
  options: { from: string; to: string; windowDays?: number },
  align: WindowAlignment,
  newestFirst: boolean,
): DateWindow[] {
  const windows = splitDateRange(options.from, options.to, {
    maxDays: options.windowDays ?? MAX_WINDOW_DAYS,
    align,
  });
  return newestFirst ? windows.reverse() : windows;
}

function recordFields(fields: readonly RecordField[] | undefined): RecordField[] {
  if (fields === undefined || fields.length === 0) return [...RECORD_FIELDS];
  const chosen = new Set(checkedList(fields, RECORD_FIELDS, "fields"));
  chosen.add("recordId");
  return RECORD_FIELDS.filter((field) => chosen.has(field));
}

function checkedList<Value extends string>(
  values: readonly Value[],
  allowed: readonly Value[],
  name: string,
): Value[] {
  for (const value of values) {
    if (!allowed.includes(value)) {
      throw new MdqClientError(
        "INVALID_CONFIG",
        `${name}: ${JSON.stringify(value)} is not one of ${allowed.join(", ")}`,
      );
    }
  }
  return [...values];
}
