/**
 * One HTTP request from a chosen local address (any of 127.0.0.0/8 on Linux), so a test can be
 * several clients at once, as a rate limit keyed by client address sees them.
 */
import { request } from "node:http";
import { basicOf, TOKEN_REQUEST_BODY } from "./inject-calls.js";

/** A whole HTTP answer. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request to send with `httpCall`. */
export interface HttpCall {
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** Source address of the connection; 127.0.0.1 by default. */
  from?: string;
  timeoutMs?: number;
}

/** Sends one request on a fresh connection and reads the whole answer. */
export function httpCall(url: string, call: HttpCall = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method: call.method ?? (call.body === undefined ? "GET" : "POST"),
        headers: call.headers,
        localAddress: call.from ?? "127.0.0.1",
        agent: false,
        timeout: call.timeoutMs ?? 30_000,
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("end", () =>
          resolve({
            status: answer.statusCode ?? 0,
            headers: answer.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        answer.on("error", reject);
      },
    );
    outgoing.on("timeout", () => outgoing.destroy(new Error(`no answer from ${url} in time`)));
    outgoing.on("error", reject);
    outgoing.end(call.body);
  });
}

/** A GraphQL POST with a bearer token. */
export function graphqlCall(
  baseUrl: string,
  token: string,
  query: string,
  variables: Record<string, unknown> = {},
  extra: Omit<HttpCall, "body" | "method"> = {},
): Promise<HttpAnswer> {
  return httpCall(`${baseUrl}/graphql`, {
    ...extra,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...extra.headers },
    body: JSON.stringify({ query, variables }),
  });
}

/** A client-credentials token request with HTTP Basic (CONTRACT §2). */
export function tokenCall(
  authUrl: string,
  appClientId: string,
  secret: string,
  extra: Omit<HttpCall, "body" | "method"> = {},
): Promise<HttpAnswer> {
  return httpCall(`${authUrl}/oauth2/token`, {
    ...extra,
    headers: {
      authorization: basicOf({ appClientId, appClientSecret: secret }),
      "content-type": "application/x-www-form-urlencoded",
      ...extra.headers,
    },
    body: TOKEN_REQUEST_BODY,
  });
}
