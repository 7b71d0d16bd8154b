/**
 * The bulk export from the SDK's side (CONTRACT §7, docs/api.md §8): one streamed GET per range
 * instead of a page walk. `openExport` opens one response — within the request budget, renewing
 * the token once on 401, waiting on 429 as `Retry-After` says, retrying 5xx and dropped
 * connections with backoff — and hands back its headers and body. `exportRecords` reads NDJSON
 * as `MarketingRecord`s and, when the connection breaks mid-body, resumes after the last whole
 * row with `after=` and the same data version, then checks that the rows add up to `MDQ-Row-Count`.
 */
import {
  DATA_VERSION_HEADER,
  EXPORT_PATH,
  type ExportFormat,
  type ExportRowKey,
  exportAfterText,
  type MarketingFilter,
  type MarketingRecord,
  RESUME_HEADER,
  ROW_COUNT_HEADER,
  TEXT_EXPORT_FORMATS,
} from "@mdq/contract";
import { MdqClientError } from "./errors.js";
import { errorOf, type RetryPolicy, retryAfterSeconds } from "./http-transport.js";
import { abortedError, type RequestBudget } from "./request-budget.js";
import type { TokenManager } from "./token-manager.js";
import type { Clock, Currency, MdqClientEvent } from "./types.js";

/** What an export asks for. */
export interface ExportOptions {
  /** First and last day, `YYYY-MM-DD`, inclusive; at most 366 days. */
  from: string;
  to: string;
  currency?: Currency;
  filter?: MarketingFilter;
  signal?: AbortSignal;
}

/**
 * Where a resumed response starts: after `after` (or at the start), if the data is still
 * `dataVersion`; `token` is the `MDQ-Resume` of the response resumed, which the service checks
 * the resume's parameters against (a resume asking another query is refused, never served).
 */
export interface ExportResume {
  after: ExportRowKey | null;
  dataVersion: string;
  token: string;
}

/** One open export response. */
export interface ExportResponse {
  /** `MDQ-Data-Version`: the version the whole body reads. */
  dataVersion: string;
  /** `MDQ-Row-Count`: the rows this body holds when whole. */
  rowCount: number;
  /** `MDQ-Resume`: the whole query this body answers, sent back to resume it. */
  resume: string;
  /** The body, decoded from its content coding; a cut connection makes the iteration throw. */
  body: AsyncIterable<Uint8Array>;
}

/** What the export needs of the client that runs it. */
export interface ExportAccess {
  baseUrl: string;
  brandClientId: string;
  tokens: TokenManager;
  budget: RequestBudget;
  clock: Clock;
  retry: RetryPolicy;
  fetch: typeof fetch;
  userAgent: string;
  /** Whether a text export asks for gzip (`compression`, default true); false asks for `identity`. */
  compression: boolean;
  random: () => number;
  onEvent: ((event: MdqClientEvent) => void) | undefined;
}

/** Statuses worth asking again: the failure is the service's, and may pass. */
const TRANSIENT_STATUSES = new Set([500, 502, 503, 504]);

/** The export's URL for `options` in `format`, resuming at `resume`. */
export function exportUrl(
  access: Pick<ExportAccess, "baseUrl" | "brandClientId">,
  options: ExportOptions,
  format: ExportFormat,
  resume: ExportResume | null,
): string {
  const query = new URLSearchParams({ clientId: access.brandClientId, from: options.from, to: options.to });
  if (options.currency !== undefined) query.set("currency", options.currency);
  query.set("format", format);
  for (const name of ["markets", "dataSources", "channels", "campaignIds"] as const) {
    const values = options.filter?.[name];
    if (values !== undefined) query.set(name, values.join(","));
  }
  if (resume !== null) {
    if (resume.after !== null) query.set("after", exportAfterText(resume.after));
    query.set("resume", resume.token);
  }
  return `${access.baseUrl}${EXPORT_PATH}?${query}`;
}

/**
 * Opens one export response: 200 with its headers read, or an MdqClientError (the service's code,
 * or NETWORK after every retry). The body is left to the caller to read.
 */
export async function openExport(
  access: ExportAccess,
  options: ExportOptions,
  format: ExportFormat,
  resume: ExportResume | null = null,
): Promise<ExportResponse> {
  const url = exportUrl(access, options, format, resume);
  const { retry, budget, clock, signal } = { ...access, signal: options.signal };
  let token = await access.tokens.token(signal);
  let renewed = false;
  let lastError: MdqClientError | undefined;
  for (let attempt = 1; attempt <= retry.maxAttempts; attempt += 1) {
    await budget.acquire(signal);
    const sentAt = clock.now();
    let delayMs = 0;
    try {
      const response = await access.fetch(url, {
        headers: {
          authorization: `Bearer ${token}`,
          "accept-encoding": access.compression && TEXT_EXPORT_FORMATS.has(format) ? "gzip" : "identity",
          "user-agent": access.userAgent,
        },
        ...(signal ? { signal } : {}),
      });
      budget.observe(response.headers, sentAt);
      if (response.status === 200 && response.body) return responseOf(response, response.body);
      const failed = { status: response.status, headers: response.headers, text: await response.text() };
      lastError = errorOf(failed, attempt);
      if (response.status === 401 && !renewed) {
        access.onEvent?.({ type: "token-rejected", url });
        token = await access.tokens.renew(token, signal);
        renewed = true;
        continue;
      }
      if (response.status === 429) {
        const wait = retryAfterSeconds(response.headers, clock.now()) ?? 1;
        if (wait > retry.maxRetryAfterSeconds) throw lastError;
        budget.pauseUntil(clock.now() + wait * 1000);
        access.onEvent?.({ type: "rate-limited", retryAfterSeconds: wait, url });
      } else if (TRANSIENT_STATUSES.has(response.status)) {
        delayMs = backoff(access, attempt);
      } else {
        throw lastError;
      }
    } catch (error) {
      if (error instanceof MdqClientError) throw error;
      if (signal?.aborted) throw abortedError(signal);
      lastError = new MdqClientError("NETWORK", `the connection to ${url} failed: ${String(error)}`, {
        attempts: attempt,
        cause: error,
      });
      delayMs = backoff(access, attempt);
    }
    if (attempt < retry.maxAttempts && delayMs > 0) {
      access.onEvent?.({ type: "retry", attempt, delayMs, reason: "network", url });
      await clock.sleep(delayMs, signal);
    }
  }
  throw lastError ?? new MdqClientError("NETWORK", `no attempt was made to reach ${url}`);
}

/** Full jitter, as the transport's. */
function backoff(access: ExportAccess, attempt: number): number {
  const { backoffBaseMs, backoffCapMs } = access.retry;
  return Math.floor(access.random() * Math.min(backoffCapMs, backoffBaseMs * 2 ** (attempt - 1)));
}

function responseOf(response: Response, body: ReadableStream<Uint8Array>): ExportResponse {
  const dataVersion = response.headers.get(DATA_VERSION_HEADER);
  const rowCount = Number(response.headers.get(ROW_COUNT_HEADER));
  const resume = response.headers.get(RESUME_HEADER);
  if (dataVersion === null || resume === null || !Number.isSafeInteger(rowCount) || rowCount < 0) {
    void body.cancel().catch(() => undefined);
    throw new MdqClientError(
      "PROTOCOL",
      `the export answered without ${DATA_VERSION_HEADER}, ${ROW_COUNT_HEADER} or ${RESUME_HEADER}`,
      {
        status: response.status,
      },
    );
  }
  return { dataVersion, rowCount, resume, body: body as unknown as AsyncIterable<Uint8Array> };
}

/** Whether `error` is the connection breaking mid-body (not the caller's abort, not the service's answer). */
export function isBrokenBody(error: unknown, signal: AbortSignal | undefined): boolean {
  return !(error instanceof MdqClientError) && !signal?.aborted;
}

/** The records of one export that the rows received so far completed, and the version they read. */
export interface ExportBatch {
  /** `MDQ-Data-Version` of the response they came in (a resumed response reads the same). */
  dataVersion: string;
  /** `MDQ-Row-Count` of the first response: the rows of the whole export. */
  rowCount: number;
  records: MarketingRecord[];
}

/** What a reader of the export adds to `exportBatches`: a count of its requests and checks of what arrives. */
export interface ExportReading {
  /** Told before each request (the first and every resume): a run counts them (run-limits.ts). */
  onRequest?(resume: ExportResume | null): void;
  /** The most body bytes a response announcing `rowCount` rows may hold; more is SERVER_ANSWER_INVALID at once. */
  maxBytes?(rowCount: number): number;
  /** Checks records before they are handed over (`previous`: the last one handed over); throws to refuse them. */
  check?(records: MarketingRecord[], previous: MarketingRecord | null): void;
}

/**
 * The records of one export as they arrive, a batch per body chunk, in (date, recordId) order —
 * resumed after the last whole row when the connection breaks (at most `retry.maxAttempts` breaks
 * in a row without a new row). Throws DATA_VERSION_GONE when the data changed before a resume
 * could read the same version (records already handed over stay valid for the old version: start
 * again for the new one), and SERVER_ANSWER_INVALID when the rows do not add up to `MDQ-Row-Count`.
 */
export async function* exportBatches(
  access: ExportAccess,
  options: ExportOptions,
  reading: ExportReading = {},
): AsyncGenerator<ExportBatch> {
  let resume: ExportResume | null = null;
  let expected: number | null = null;
  let delivered = 0;
  let breaks = 0;
  let previous: MarketingRecord | null = null;
  for (;;) {
    reading.onRequest?.(resume);
    const response = await openExport(access, options, "ndjson", resume);
    if (expected === null) expected = response.rowCount;
    else if (delivered + response.rowCount !== expected) {
      throw new MdqClientError(
        "SERVER_ANSWER_INVALID",
        `a resumed export holds ${response.rowCount} rows after ${delivered}, not the ${expected - delivered} left`,
      );
    }
    const maxBytes = reading.maxBytes?.(response.rowCount) ?? Number.POSITIVE_INFINITY;
    const decoder = new TextDecoder();
    let bytes = 0;
    let pending = "";
    try {
      for await (const chunk of response.body) {
        bytes += chunk.byteLength;
        if (bytes > maxBytes) {
          throw new MdqClientError(
            "SERVER_ANSWER_INVALID",
            `the export's body is larger than the ${maxBytes} bytes its ${response.rowCount} rows may take`,
          );
        }
        pending += decoder.decode(chunk, { stream: true });
        const end = pending.lastIndexOf("\n");
        if (end === -1) continue;
        const records = pending.slice(0, end).split("\n").map(recordOf);
        pending = pending.slice(end + 1);
        if (delivered + records.length > expected) {
          throw new MdqClientError(
            "SERVER_ANSWER_INVALID",
            `the export's ${ROW_COUNT_HEADER} says ${expected} rows, its body holds more`,
          );
        }
        reading.check?.(records, previous);
        previous = records.at(-1)!;
        delivered += records.length;
        breaks = 0;
        resume = {
          after: { date: previous.date, recordId: previous.recordId },
          dataVersion: response.dataVersion,
          token: response.resume,
        };
        yield { dataVersion: response.dataVersion, rowCount: expected, records };
      }
    } catch (error) {
      if (!isBrokenBody(error, options.signal)) throw error;
      breaks += 1;
      if (breaks >= access.retry.maxAttempts) {
        throw new MdqClientError(
          "NETWORK",
          `the export broke ${breaks} times without a new row: ${String(error)}`,
          {
            cause: error,
          },
        );
      }
      resume ??= { after: null, dataVersion: response.dataVersion, token: response.resume };
      access.onEvent?.({
        type: "retry",
        attempt: breaks,
        delayMs: 0,
        reason: "network",
        url: access.baseUrl,
      });
      continue;
    }
    if (pending !== "" || delivered !== expected) {
      throw new MdqClientError(
        "SERVER_ANSWER_INVALID",
        `the export's ${ROW_COUNT_HEADER} says ${expected} rows, its body held ${delivered}${pending === "" ? "" : " and part of another"}`,
      );
    }
    return;
  }
}

/**
 * Every record of the range, in (date, recordId) order, from one export, resumed and counted as
 * `exportBatches` does.
 */
export async function* exportRecords(
  access: ExportAccess,
  options: ExportOptions,
): AsyncGenerator<MarketingRecord> {
  for await (const batch of exportBatches(access, options)) yield* batch.records;
}

/** One NDJSON line as a record; PROTOCOL when it is not one. */
function recordOf(line: string): MarketingRecord {
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    throw new MdqClientError("PROTOCOL", `the export sent a line that is not JSON: ${line.slice(0, 80)}`);
  }
  const candidate = record as Partial<MarketingRecord> | null;
  if (typeof candidate?.recordId !== "string" || typeof candidate.date !== "string")
    throw new MdqClientError("PROTOCOL", `the export sent a line that is not a record: ${line.slice(0, 80)}`);
  return candidate as MarketingRecord;
}
