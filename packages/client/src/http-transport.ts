/**
 * One HTTP POST, done right: within the request budget, with a timeout, waiting on 429 and 503 as
 * `Retry-After` says, and retrying transient failures (5xx, dropped connections, timeouts) with
 * capped exponential backoff and full jitter. Everything else (2xx, 4xx) goes back to the caller.
 * Each attempt is one {@link exchange} (the answer read raw and decoded in one shot), or one call
 * of the `fetch` the caller gave.
 */
import { MdqClientError, type MdqClientErrorCode } from "./errors.js";
import { answerTooLarge, exchange } from "./http-exchange.js";
import { abortedError, type RequestBudget } from "./request-budget.js";
import type { Clock, MdqClientEvent } from "./types.js";

/** How the transport retries. */
export interface RetryPolicy {
  /** Milliseconds before a request without a complete answer is abandoned; default 30 000. */
  timeoutMs: number;
  /** Attempts per request, 429 waits and transient failures included; default 6. */
  maxAttempts: number;
  /** Backoff of attempt n is uniform in [0, min(backoffCapMs, backoffBaseMs × 2^(n−1))]. */
  backoffBaseMs: number;
  backoffCapMs: number;
  /** A 429 asking for a longer wait than this fails at once with RATE_LIMITED; default 300. */
  maxRetryAfterSeconds: number;
  /** Largest body read; a longer answer fails at once with SERVER_ANSWER_INVALID (not retried). */
  maxBodyBytes: number;
}

/** The defaults of {@link RetryPolicy}. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  timeoutMs: 30_000,
  maxAttempts: 6,
  backoffBaseMs: 200,
  backoffCapMs: 10_000,
  maxRetryAfterSeconds: 300,
  maxBodyBytes: 64 * 1024 * 1024,
});

export interface HttpTransportOptions {
  retry: RetryPolicy;
  /**
   * Ask for compressed answers (`Accept-Encoding: gzip, br`), decoded once read whole (or by
   * `fetch` as it reads, when one is given); false asks for `identity`. Default true.
   */
  compression?: boolean;
  budget: RequestBudget;
  clock: Clock;
  /** Sends each attempt instead of {@link exchange}; it decodes the answer itself, as it reads. */
  fetch?: typeof fetch;
  /** Uniform in [0, 1); `Math.random` by default. */
  random?: () => number;
  onEvent?: (event: MdqClientEvent) => void;
}

export interface HttpRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  signal?: AbortSignal | undefined;
}

/** A complete answer: status, headers and the whole body as text. */
export interface HttpResponse {
  status: number;
  headers: Headers;
  text: string;
  /** Attempts it took, this one included. */
  attempts: number;
}

/**
 * What the transport asks for unless the request names its own `Accept-Encoding`: the codings
 * every MDQ answers in (CONTRACT §8) and the client decodes, or none. A 5000-row page is ~1.5 MB of
 * JSON and ~10× fewer bytes compressed (docs/api.md "Compression").
 */
export const ACCEPT_COMPRESSED = "gzip, br";
const ACCEPT_IDENTITY = "identity";

/** Statuses worth retrying: the failure is the service's, and may pass. */
const TRANSIENT_STATUSES = new Set([500, 502, 503, 504]);

const TIMED_OUT = Symbol("timed out");

/** Failures no retry can mend: the caller stopped, the wait asked is too long, the answer is invalid. */
const FINAL_CODES = new Set<MdqClientErrorCode>([
  "ABORTED",
  "RATE_LIMITED",
  "SERVER_ANSWER_INVALID",
  "TIMEOUT",
]);

/**
 * Sends POST requests with retries.
 * @example const response = await transport.post({ url, headers, body });
 */
export class HttpTransport {
  private readonly fetchImpl: typeof fetch | undefined;
  private readonly random: () => number;
  private readonly acceptEncoding: string;

  constructor(private readonly options: HttpTransportOptions) {
    this.fetchImpl = options.fetch;
    this.random = options.random ?? Math.random;
    this.acceptEncoding = options.compression === false ? ACCEPT_IDENTITY : ACCEPT_COMPRESSED;
  }

  /** POSTs until an answer that is not transient, or the attempts run out. */
  async post(request: HttpRequest): Promise<HttpResponse> {
    const { retry, budget, clock } = this.options;
    let lastError: MdqClientError | undefined;
    for (let attempt = 1; attempt <= retry.maxAttempts; attempt += 1) {
      await budget.acquire(request.signal);
      const sentAt = clock.now();
      let delayMs: number;
      let reason: "status" | "network" | "timeout";
      let status: number | undefined;
      try {
        const response = await this.sendOnce(request);
        budget.observe(response.headers, sentAt);
        if (response.status === 429) {
          const retryAfter = retryAfterSeconds(response.headers, clock.now()) ?? 1;
          lastError = errorOf(response, attempt);
          if (retryAfter > retry.maxRetryAfterSeconds) throw lastError;
          budget.pauseUntil(clock.now() + retryAfter * 1000);
          this.options.onEvent?.({ type: "rate-limited", retryAfterSeconds: retryAfter, url: request.url });
          delayMs = 0;
          reason = "status";
          status = 429;
        } else if (TRANSIENT_STATUSES.has(response.status)) {
          lastError = errorOf(response, attempt);
          const retryAfter = retryAfterSeconds(response.headers, clock.now());
          const honoured = retryAfter !== undefined && retryAfter <= retry.maxRetryAfterSeconds;
          delayMs = honoured ? retryAfter * 1000 : this.backoff(attempt);
          // A busy or draining service (503 with Retry-After, CONTRACT §8) is honoured as a 429
          // is: every request of this client holds back, not only the one refused.
          if (honoured && response.status === 503) budget.pauseUntil(clock.now() + delayMs);
          reason = "status";
          status = response.status;
        } else {
          return { ...response, attempts: attempt };
        }
      } catch (error) {
        if (error instanceof MdqClientError && FINAL_CODES.has(error.code)) throw error;
        const timedOut = error === TIMED_OUT;
        lastError = new MdqClientError(
          timedOut ? "TIMEOUT" : "NETWORK",
          timedOut
            ? `no complete answer from ${request.url} within ${retry.timeoutMs} ms`
            : `the connection to ${request.url} failed: ${describe(error)}`,
          { attempts: attempt, ...(timedOut ? {} : { cause: error }) },
        );
        delayMs = this.backoff(attempt);
        reason = timedOut ? "timeout" : "network";
      }
      if (attempt === retry.maxAttempts) break;
      this.options.onEvent?.({
        type: "retry",
        attempt,
        delayMs,
        reason,
        ...(status === undefined ? {} : { status }),
        url: request.url,
      });
      if (delayMs > 0) await clock.sleep(delayMs, request.signal);
    }
    throw lastError ?? new MdqClientError("NETWORK", `no attempt was made to reach ${request.url}`);
  }

  /** Full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter"). */
  private backoff(attempt: number): number {
    const { backoffBaseMs, backoffCapMs } = this.options.retry;
    const ceiling = Math.min(backoffCapMs, backoffBaseMs * 2 ** (attempt - 1));
    return Math.floor(this.random() * ceiling);
  }

  /**
   * One attempt, body included, within the timeout; rejects with TIMED_OUT, ABORTED or the cause.
   */
  private async sendOnce(request: HttpRequest): Promise<Omit<HttpResponse, "attempts">> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(TIMED_OUT), this.options.retry.timeoutMs);
    const onAbort = () => controller.abort(request.signal?.reason);
    if (request.signal?.aborted) throw abortedError(request.signal);
    request.signal?.addEventListener("abort", onAbort, { once: true });
    const { maxBodyBytes } = this.options.retry;
    const headers = { "accept-encoding": this.acceptEncoding, ...request.headers };
    try {
      if (this.fetchImpl === undefined) {
        return await exchange({
          url: request.url,
          headers,
          body: request.body,
          signal: controller.signal,
          maxBodyBytes,
        });
      }
      const response = await this.fetchImpl(request.url, {
        method: "POST",
        headers,
        body: request.body,
        signal: controller.signal,
      });
      const text = await readBody(response, maxBodyBytes, request.url);
      return { status: response.status, headers: response.headers, text };
    } catch (error) {
      if (request.signal?.aborted) throw abortedError(request.signal);
      if (error instanceof MdqClientError) throw error;
      if (controller.signal.aborted && controller.signal.reason === TIMED_OUT) throw TIMED_OUT;
      throw error;
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener("abort", onAbort);
    }
  }
}

/**
 * The body of a fetch `response` as UTF-8 text, read up to `maxBytes`: an answer that says or
 * turns out to be longer is cancelled and fails with SERVER_ANSWER_INVALID, so that a server
 * sending without end cannot fill the memory.
 */
async function readBody(response: Response, maxBytes: number, url: string): Promise<string> {
  const tooLarge = () => answerTooLarge(url, maxBytes, response.status);
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!response.body) return "";
  const chunks: Uint8Array[] = [];
  let length = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, length).toString("utf8");
}

/**
 * `Retry-After` in seconds (RFC 9110 §10.2.3: delay-seconds or an HTTP-date), or undefined.
 */
export function retryAfterSeconds(headers: Headers, now: number): number | undefined {
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/** The error an answer stands for, from its body when it has a code, else from its status. */
export function errorOf(response: Omit<HttpResponse, "attempts">, attempts?: number): MdqClientError {
  const body = parseJson(response.text);
  const details = {
    status: response.status,
    ...(attempts === undefined ? {} : { attempts }),
    ...retryAfterDetail(response.headers),
  };
  if (isObject(body) && Array.isArray(body["errors"]) && body["errors"].length > 0) {
    const error = MdqClientError.fromGraphQLErrors(body["errors"], response.status);
    return new MdqClientError(error.code, error.message, {
      ...details,
      errors: error.errors,
      serviceCode: error.serviceCode,
    });
  }
  if (isObject(body) && typeof body["error"] === "string") {
    const oauthError = body["error"];
    const description =
      typeof body["error_description"] === "string" ? body["error_description"] : oauthError;
    return new MdqClientError(OAUTH_CODES[oauthError] ?? codeOfStatus(response.status), description, {
      ...details,
      serviceCode: oauthError,
      oauthError,
    });
  }
  return new MdqClientError(
    codeOfStatus(response.status),
    `the service answered HTTP ${response.status}`,
    details,
  );
}

const OAUTH_CODES: Record<string, MdqClientErrorCode> = {
  rate_limited: "RATE_LIMITED",
  temporarily_unavailable: "SERVICE_UNAVAILABLE",
  server_error: "INTERNAL_SERVER_ERROR",
};

function codeOfStatus(status: number): MdqClientErrorCode {
  if (status === 401) return "UNAUTHENTICATED";
  if (status === 403) return "FORBIDDEN";
  if (status === 404) return "NOT_FOUND";
  if (status === 429) return "RATE_LIMITED";
  if (status === 500) return "INTERNAL_SERVER_ERROR";
  if (status === 502 || status === 503 || status === 504) return "SERVICE_UNAVAILABLE";
  if (status === 400 || status === 405 || status === 413 || status === 415) return "BAD_REQUEST";
  return "PROTOCOL";
}

function retryAfterDetail(headers: Headers): { retryAfterSeconds?: number } {
  const seconds = retryAfterSeconds(headers, Date.now());
  return seconds === undefined ? {} : { retryAfterSeconds: seconds };
}

/** JSON.parse, or undefined when the text is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return `${error.message}${cause}`;
  }
  return String(error);
}
