/**
 * `MdqClient`: the spec's daily retrieval flow (§1) over HTTP. Readiness, then every record or
 * aggregate of any date range: split into ≤ 90-day windows, every page of each window walked,
 * each row yielded exactly once even when the data is reloaded during the walk.
 *
 * Exactly-once across a reload: each window is fetched whole (page 1 first, for `totalCount` and
 * `dataVersion`; then the other pages, `concurrency` at a time) and only then yielded. If any
 * page reports another `dataVersion` or `totalCount` than page 1, or the pages do not add up to
 * `totalCount`, or a recordId repeats, the window is fetched again from page 1 and nothing of the
 * failed try is yielded. A records walk by day over every field and no filter first repairs a try
 * that met a load instead: `marketingDataChanges` names the days the load changed, those days
 * (and any day whose rows the shifted pages cut) are fetched again, the others are kept, and
 * page 1 asked again confirms nothing changed meanwhile (`repairWindow`). Buffering a window (rather than remembering yielded recordIds) is what
 * makes the result equal to the new data: rows yielded before a reload could have changed. The
 * price is memory for one window (two while the next one is prefetched); `windowDays` bounds it.
 */
import {
  DIMENSIONS,
  type ExportFormat,
  isDateDimension,
  MAX_CHANGES_RANGE_DAYS,
  MAX_PAGE_SIZE,
  METRICS,
  RECORD_FIELDS,
} from "@mdq/contract";
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
import {
  DEFAULT_RETRY_POLICY,
  errorOf,
  type HttpResponse,
  HttpTransport,
  isObject,
  parseJson,
} from "./http-transport.js";
import {
  type ExportAccess,
  type ExportOptions,
  type ExportResponse,
  type ExportResume,
  exportRecords,
  openExport,
} from "./record-export.js";
import { abortedError, DEFAULT_RATE_LIMIT, RequestBudget, systemClock } from "./request-budget.js";
import { TokenManager } from "./token-manager.js";
import type {
  AggregateOptions,
  ChangedDay,
  Clock,
  DataChanges,
  MarketingAggregate,
  MarketingRecord,
  MdqClientEvent,
  MyAccess,
  Page,
  PageInfo,
  RateLimitPolicy,
  Readiness,
  RecordField,
  RecordSort,
  RecordsOptions,
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
  /** Renew the token this many seconds before it expires; default 60. */
  renewBeforeSeconds?: number;
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
/** Fresh tries of one window after its data changed, before DATA_CHANGED. */
const MAX_WINDOW_RESTARTS = 5;

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

interface GraphQLResult {
  data: Record<string, unknown>;
  extensions: Record<string, unknown>;
}

interface WalkPlan<Row> {
  field: "marketingRecords" | "marketingAggregate";
  query: string;
  variables: Record<string, unknown>;
  windows: DateWindow[];
  pageSize: number;
  concurrency: number;
  signal: AbortSignal | undefined;
  rowOf: (raw: Record<string, unknown>) => Row;
  /** A unique key per row, when rows have one: a repeat within a window means the walk is torn. */
  keyOf?: (row: Row) => string;
  /**
   * For a records walk sorted by day alone, over every field, with no filter: the day of a row,
   * and the sort's direction. Such a walk that meets a load is repaired, not restarted.
   */
  repair?: { dateOf: (row: Row) => string; newestFirst: boolean };
}

/** A try of a window that met a load or came apart: why, and what it had fetched. */
interface TornWindow<Row> {
  reason: string;
  /** The version of its page 1, and the other version a page reported (when that tore it). */
  fromVersion: string;
  toVersion?: string;
  pages: (Page<Row> | undefined)[];
}

/** Byte order of UTF-8 text: how the service breaks ties by recordId ("C" collation). */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * A client of one region's MDQ service for one brand.
 * @example
 * const client = new MdqClient(clientConfigFromEnv(process.env));
 * await client.waitUntilReady({ interval: 60_000, timeout: 3_600_000 });
 * for await (const record of client.records({ from: "2026-01-01", to: "2026-11-21" })) write(record);
 */
export class MdqClient {
  readonly config: ClientCredentialsConfig;
  /** The request budget this client spends (shared if `options.budget` was given). */
  readonly budget: RequestBudget;
  private readonly tokens: TokenManager;
  private readonly transport: HttpTransport;
  private readonly clock: Clock;
  private readonly userAgent: string;
  private readonly onEvent: ((event: MdqClientEvent) => void) | undefined;
  /** What the bulk export needs of this client (record-export.ts). */
  private readonly exportAccess: ExportAccess;

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
    const readiness = result.data["marketingDataReadiness"];
    if (!isObject(readiness) || (readiness["status"] !== "READY" && readiness["status"] !== "NOT_READY")) {
      throw new MdqClientError("PROTOCOL", "marketingDataReadiness is missing from the answer");
    }
    return readiness as unknown as Readiness;
  }

  /**
   * `myAccess`: the markets and data sources these credentials may read (the brand's grants with
   * the app's narrowing applied), the token's scope and region, and when the token expires.
   * @example const { markets, dataSources } = await client.myAccess();
   */
  async myAccess(signal?: AbortSignal): Promise<MyAccess> {
    const result = await this.graphql(MY_ACCESS_QUERY, { clientId: this.config.brandClientId }, signal);
    const access = result.data["myAccess"];
    if (!isObject(access) || !Array.isArray(access["markets"]) || !Array.isArray(access["dataSources"])) {
      throw new MdqClientError("PROTOCOL", "myAccess is missing from the answer");
    }
    return access as unknown as MyAccess;
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
      const changes = result.data["marketingDataChanges"];
      if (
        !isObject(changes) ||
        typeof changes["dataVersion"] !== "string" ||
        !Array.isArray(changes["days"])
      ) {
        throw new MdqClientError("PROTOCOL", "marketingDataChanges is missing from the answer");
      }
      // Versions only grow: the first window's is the one every later change comes after.
      answer.dataVersion ||= changes["dataVersion"];
      if (changes["fullResyncRequired"] === true) {
        answer.fullResyncRequired = true;
        answer.reason ??= typeof changes["reason"] === "string" ? changes["reason"] : null;
      }
      answer.days.push(...(changes["days"] as ChangedDay[]));
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
    yield* this.walk<Row>({
      field: "marketingRecords",
      query: `query MdqRecords($clientId: ID!, $dateRange: DateRangeInput!, $currency: Currency, $pagination: PaginationInput, $sort: [RecordSortInput!], $filter: MarketingFilterInput) {
  marketingRecords(clientId: $clientId, dateRange: $dateRange, currency: $currency, pagination: $pagination, sort: $sort, filter: $filter) { ${fields.join(" ")} }
}`,
      variables: this.commonVariables(options, sort),
      windows: windowsOf(options, "day", newestFirst),
      ...walkSettings(options),
      rowOf: (raw) => raw as Row,
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
    yield* this.walk<MarketingAggregate>({
      field: "marketingAggregate",
      query: `query MdqAggregate($clientId: ID!, $dateRange: DateRangeInput!, $metrics: [Metric!]!, $groupBy: [Dimension!], $currency: Currency, $pagination: PaginationInput, $sort: [AggregateSortInput!], $filter: MarketingFilterInput) {
  marketingAggregate(clientId: $clientId, dateRange: $dateRange, metrics: $metrics, groupBy: $groupBy, currency: $currency, pagination: $pagination, sort: $sort, filter: $filter) { ${DIMENSIONS.join(" ")} ${totals.join(" ")} currency }
}`,
      variables,
      windows: windowsOf(options, align, newestFirst),
      ...walkSettings(options),
      rowOf: (raw) =>
        ({
          TOTAL_IMPRESSIONS: null,
          TOTAL_CLICKS: null,
          TOTAL_SPEND: null,
          TOTAL_CONVERSIONS: null,
          TOTAL_REVENUE: null,
          ...raw,
        }) as MarketingAggregate,
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
    if (!isObject(parsed) || !isObject(parsed["data"])) {
      throw new MdqClientError("PROTOCOL", "the GraphQL answer has no data", { status: response.status });
    }
    return { data: parsed["data"], extensions: isObject(parsed["extensions"]) ? parsed["extensions"] : {} };
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

  /** Windows in order; the next window is fetched while the current one is being consumed. */
  private async *walk<Row>(plan: WalkPlan<Row>): AsyncGenerator<Page<Row>> {
    const stop = new AbortController();
    const signal = plan.signal ? AbortSignal.any([plan.signal, stop.signal]) : stop.signal;
    const start = (index: number) => {
      const fetching = this.fetchWindow(plan, index, signal);
      fetching.catch(() => undefined);
      return fetching;
    };
    let next = plan.windows.length > 0 ? start(0) : undefined;
    try {
      for (let index = 0; index < plan.windows.length; index += 1) {
        const pages = await next!;
        next = index + 1 < plan.windows.length ? start(index + 1) : undefined;
        yield* pages;
      }
    } finally {
      stop.abort();
    }
  }

  /** One window, whole and consistent: restarted from page 1 whenever its data changed meanwhile. */
  private async fetchWindow<Row>(
    plan: WalkPlan<Row>,
    index: number,
    outer: AbortSignal,
  ): Promise<Page<Row>[]> {
    const window = plan.windows[index]!;
    for (let restarts = 0; ; restarts += 1) {
      const torn = await this.tryWindow(plan, index, outer);
      if (Array.isArray(torn)) return torn;
      if (restarts === 0 && torn.toVersion !== undefined) {
        const repaired = await this.repairWindow(plan, index, torn, outer);
        if (repaired) return repaired;
      }
      if (restarts >= MAX_WINDOW_RESTARTS) {
        throw new MdqClientError(
          "DATA_CHANGED",
          `the data of ${window.from}..${window.to} changed on each of ${restarts + 1} tries (${torn.reason})`,
        );
      }
      this.onEvent?.({ type: "window-restart", window, reason: torn.reason });
    }
  }

  /**
   * Completes a try of a records window that met a load, fetching again only the days the load
   * changed and the days the other try's pages did not hold whole (a load before them in the sort
   * shifts them across page boundaries; each day's count comes from `marketingDataChanges`).
   * Returns the window's pages, or undefined when it cannot (a scope change, another load meanwhile,
   * a service without data versions): the caller then fetches the window again from page 1.
   */
  private async repairWindow<Row>(
    plan: WalkPlan<Row>,
    index: number,
    torn: TornWindow<Row>,
    outer: AbortSignal,
  ): Promise<Page<Row>[] | undefined> {
    const repair = plan.repair;
    const window = plan.windows[index]!;
    if (!repair || !plan.keyOf) return undefined;
    let changed: DataChanges;
    let now: DataChanges;
    try {
      changed = await this.dataChanges({ ...window, since: torn.fromVersion, signal: outer });
      now = await this.dataChanges({ ...window, since: null, signal: outer });
    } catch (error) {
      if (error instanceof MdqClientError && error.code !== "ABORTED") return undefined;
      throw error;
    }
    if (changed.fullResyncRequired) return undefined;
    const changedDays = new Set(changed.days.map((day) => day.date));
    const kept = new Map<string, Map<string, Row>>();
    for (const page of torn.pages) {
      for (const row of page?.rows ?? []) {
        const date = repair.dateOf(row);
        if (changedDays.has(date)) continue;
        const day = kept.get(date) ?? new Map<string, Row>();
        kept.set(date, day);
        day.set(plan.keyOf(row), row);
      }
    }
    const refetched: string[] = [];
    const rowsOf = new Map<string, Row[]>();
    for (const day of now.days) {
      const held = kept.get(day.date);
      if (!changedDays.has(day.date) && held !== undefined && held.size === day.rows) {
        rowsOf.set(day.date, [...held.values()]);
        continue;
      }
      refetched.push(day.date);
      const dayPlan: WalkPlan<Row> = { ...plan, windows: [{ from: day.date, to: day.date }] };
      delete dayPlan.repair;
      const pages = await this.fetchWindow(dayPlan, 0, outer);
      rowsOf.set(
        day.date,
        pages.flatMap((page) => page.rows),
      );
    }
    const dates = [...rowsOf.keys()].sort();
    if (repair.newestFirst) dates.reverse();
    const rows = dates.flatMap((date) =>
      rowsOf.get(date)!.sort((a, b) => byteOrder(plan.keyOf!(a), plan.keyOf!(b))),
    );
    // Page 1 again: the window's version must still be the one the load made, and its first rows
    // and total those assembled here; otherwise another load came meanwhile.
    const check = await this.fetchPage(plan, index, 1, outer);
    const firstIds = check.rows.map(plan.keyOf);
    if (
      check.pageInfo.dataVersion !== torn.toVersion ||
      check.pageInfo.totalCount !== rows.length ||
      firstIds.some((id, position) => plan.keyOf!(rows[position]!) !== id)
    ) {
      return undefined;
    }
    const pages: Page<Row>[] = [];
    for (let start = 0, page = 1; start < rows.length || page === 1; start += plan.pageSize, page += 1) {
      pages.push({
        window,
        windowIndex: index,
        windowCount: plan.windows.length,
        pageInfo: {
          ...check.pageInfo,
          page,
          hasNextPage: start + plan.pageSize < rows.length,
        },
        rows: rows.slice(start, start + plan.pageSize),
        lastInWindow: false,
      });
    }
    pages[pages.length - 1]!.lastInWindow = true;
    this.onEvent?.({ type: "window-repair", window, days: refetched });
    return pages;
  }

  /** Fetches every page of a window; returns them, or why the window must be fetched again. */
  private async tryWindow<Row>(
    plan: WalkPlan<Row>,
    index: number,
    outer: AbortSignal,
  ): Promise<Page<Row>[] | TornWindow<Row>> {
    const first = await this.fetchPage(plan, index, 1, outer);
    const { totalCount, dataVersion } = first.pageInfo;
    const pageCount = Math.max(1, Math.ceil(totalCount / plan.pageSize));
    const pages: Page<Row>[] = [first];
    let torn: string | undefined;
    let toVersion: string | undefined;
    let failure: unknown;
    let nextPage = 2;
    const stop = new AbortController();
    const signal = AbortSignal.any([outer, stop.signal]);
    // A walk that can be repaired goes on after meeting a load: its pages keep the unchanged days.
    const goingOn = () => torn === undefined || (plan.repair !== undefined && toVersion !== undefined);
    const worker = async () => {
      while (goingOn() && failure === undefined && nextPage <= pageCount) {
        const number = nextPage;
        nextPage += 1;
        try {
          const page = await this.fetchPage(plan, index, number, signal);
          pages[number - 1] = page;
          if (page.pageInfo.dataVersion !== dataVersion) {
            torn ??= `dataVersion ${dataVersion} became ${page.pageInfo.dataVersion}`;
            toVersion ??= page.pageInfo.dataVersion;
          } else if (page.pageInfo.totalCount !== totalCount) {
            torn ??= `totalCount ${totalCount} became ${page.pageInfo.totalCount}`;
          }
          // The try is lost (unless it will be repaired): stop the other requests of this try.
          if (!goingOn()) stop.abort();
        } catch (error) {
          if (torn === undefined && failure === undefined) failure = error;
          stop.abort();
        }
      }
    };
    const workers = Math.min(plan.concurrency, pageCount - 1);
    await Promise.all(Array.from({ length: workers }, worker));
    if (failure !== undefined) throw failure;
    const tornBy = (reason: string): TornWindow<Row> => ({
      reason,
      fromVersion: dataVersion,
      ...(toVersion === undefined ? {} : { toVersion }),
      pages,
    });
    if (torn !== undefined) return tornBy(torn);
    let rows = 0;
    const keys = plan.keyOf ? new Set<string>() : undefined;
    for (const page of pages) {
      rows += page.rows.length;
      if (keys) {
        for (const row of page.rows) {
          const key = plan.keyOf!(row);
          if (keys.has(key)) return tornBy(`recordId ${key} came twice`);
          keys.add(key);
        }
      }
    }
    if (rows !== totalCount) return tornBy(`the pages hold ${rows} rows, not totalCount ${totalCount}`);
    pages[pages.length - 1]!.lastInWindow = true;
    return pages;
  }

  private async fetchPage<Row>(
    plan: WalkPlan<Row>,
    index: number,
    page: number,
    signal: AbortSignal,
  ): Promise<Page<Row>> {
    if (signal.aborted) throw abortedError(signal);
    const window = plan.windows[index]!;
    const result = await this.graphql(
      plan.query,
      { ...plan.variables, dateRange: window, pagination: { page, pageSize: plan.pageSize } },
      signal,
    );
    const raw = result.data[plan.field];
    const pageInfo = isObject(result.extensions["pageInfo"])
      ? result.extensions["pageInfo"][plan.field]
      : undefined;
    if (!Array.isArray(raw) || !isPageInfo(pageInfo)) {
      throw new MdqClientError("PROTOCOL", `the answer lacks ${plan.field} or its extensions.pageInfo`);
    }
    this.onEvent?.({ type: "page", window, page, rows: raw.length, totalCount: pageInfo.totalCount });
    return {
      window,
      windowIndex: index,
      windowCount: plan.windows.length,
      pageInfo,
      rows: raw.map((row) => plan.rowOf(row as Record<string, unknown>)),
      lastInWindow: false,
    };
  }
}

function isPageInfo(value: unknown): value is PageInfo {
  return (
    isObject(value) &&
    typeof value["page"] === "number" &&
    typeof value["pageSize"] === "number" &&
    typeof value["totalCount"] === "number" &&
    typeof value["hasNextPage"] === "boolean"
  );
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!(Number.isFinite(value) && value > 0)) {
    throw new MdqClientError("INVALID_CONFIG", `${name} must be a positive number`);
  }
  return value;
}

function walkSettings(options: { pageSize?: number; concurrency?: number; signal?: AbortSignal }) {
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(pageSize)) throw new MdqClientError("INVALID_CONFIG", "pageSize must be an integer");
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new MdqClientError("INVALID_CONFIG", "concurrency must be a positive integer");
  }
  return { pageSize, concurrency, signal: options.signal };
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
