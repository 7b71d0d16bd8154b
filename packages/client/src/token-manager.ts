/**
 * The access token (spec §5.4): fetched with the client-credentials grant, cached in memory until
 * shortly before it expires, renewed with a single request however many calls need it at once,
 * and renewed once when the service refuses it (401).
 */
import { MdqClientError } from "./errors.js";
import { errorOf, type HttpTransport, isObject, parseJson } from "./http-transport.js";
import { abortedError } from "./request-budget.js";
import type { Clock, MdqClientEvent } from "./types.js";

/** The only scope (spec §5.2). */
export const API_SCOPE = "api_data/read";

export interface TokenManagerOptions {
  transport: HttpTransport;
  clock: Clock;
  authUrl: string;
  appClientId: string;
  appClientSecret: string;
  /** Renew this many seconds before expiry (at most a tenth of the lifetime); default 60. */
  renewBeforeSeconds?: number;
  /** The `User-Agent` of the token request, as of every other request of the client; none when unset. */
  userAgent?: string;
  onEvent?: (event: MdqClientEvent) => void;
}

interface CachedToken {
  accessToken: string;
  /** When to stop using it (ms): expiry minus the renewal lead. */
  renewAt: number;
}

/**
 * Hands out a valid access token.
 * @example const token = await tokens.token(); // cached, or fetched once for every waiting caller
 */
export class TokenManager {
  private cached: CachedToken | undefined;
  private pending: Promise<CachedToken> | undefined;
  private readonly authorization: string;
  private readonly tokenUrl: string;
  /** Token requests sent (successful or not): what "one token request" is measured by. */
  requestCount = 0;

  constructor(private readonly options: TokenManagerOptions) {
    this.tokenUrl = `${options.authUrl}/oauth2/token`;
    // RFC 6749 §2.3.1: id and secret are form-encoded before they are joined with ':'.
    const pair = `${formEncode(options.appClientId)}:${formEncode(options.appClientSecret)}`;
    this.authorization = `Basic ${Buffer.from(pair, "utf8").toString("base64")}`;
  }

  /** A token valid for a while yet: the cached one, or a new one (one request for all callers). */
  async token(signal?: AbortSignal): Promise<string> {
    const cached = this.cached;
    if (cached && this.options.clock.now() < cached.renewAt) return cached.accessToken;
    return (await this.shared(signal)).accessToken;
  }

  /**
   * A new token after the service refused `rejected` (401). Callers that were refused the same
   * token share one renewal; a caller whose token was already replaced gets the replacement.
   */
  async renew(rejected: string, signal?: AbortSignal): Promise<string> {
    if (this.cached && this.cached.accessToken !== rejected) return this.token(signal);
    if (this.cached?.accessToken === rejected) this.cached = undefined;
    return (await this.shared(signal)).accessToken;
  }

  /** Forgets the cached token. */
  clear(): void {
    this.cached = undefined;
  }

  /** The in-flight token request, started if there is none; the caller's signal only stops its wait. */
  private shared(signal?: AbortSignal): Promise<CachedToken> {
    if (!this.pending) {
      const request = this.request().finally(() => {
        if (this.pending === request) this.pending = undefined;
      });
      this.pending = request;
    }
    return abortable(this.pending, signal);
  }

  private async request(): Promise<CachedToken> {
    const { transport, clock } = this.options;
    const requestedAt = clock.now();
    this.requestCount += 1;
    const response = await transport.post({
      url: this.tokenUrl,
      headers: {
        authorization: this.authorization,
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json",
        ...(this.options.userAgent === undefined ? {} : { "user-agent": this.options.userAgent }),
      },
      body: new URLSearchParams({ grant_type: "client_credentials", scope: API_SCOPE }).toString(),
    });
    if (response.status !== 200) {
      const error = errorOf(response, response.attempts);
      if (response.status === 400 || response.status === 401) {
        throw new MdqClientError("AUTH_FAILED", `the token endpoint refused the request: ${error.message}`, {
          status: response.status,
          attempts: response.attempts,
          ...(error.oauthError === undefined
            ? {}
            : { oauthError: error.oauthError, serviceCode: error.oauthError }),
        });
      }
      throw error;
    }
    const body = parseJson(response.text);
    if (
      !isObject(body) ||
      typeof body["access_token"] !== "string" ||
      body["access_token"] === "" ||
      typeof body["token_type"] !== "string" ||
      body["token_type"].toLowerCase() !== "bearer"
    ) {
      throw new MdqClientError("PROTOCOL", "the token endpoint's answer is not a bearer token response", {
        status: response.status,
      });
    }
    const lifetime =
      typeof body["expires_in"] === "number" && body["expires_in"] > 0 ? body["expires_in"] : 3600;
    const lead = Math.min(this.options.renewBeforeSeconds ?? 60, lifetime / 10);
    const token = { accessToken: body["access_token"], renewAt: requestedAt + (lifetime - lead) * 1000 };
    this.cached = token;
    this.options.onEvent?.({ type: "token", expiresInSeconds: lifetime });
    return token;
  }
}

/** application/x-www-form-urlencoded encoding of one value (RFC 6749 Appendix B). */
export function formEncode(value: string): string {
  return new URLSearchParams([["", value]]).toString().slice(1);
}

function abortable<Value>(promise: Promise<Value>, signal?: AbortSignal): Promise<Value> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortedError(signal));
  return new Promise<Value>((resolve, reject) => {
    const onAbort = () => reject(abortedError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
