/**
 * Requests to a service in the same process through Fastify's inject (real routing, parsing and
 * hooks, no socket): the token endpoint (CONTRACT §2) and GraphQL (CONTRACT §3).
 */
import type { Service } from "@mdq/server";
import type { LightMyRequestResponse } from "fastify";

/** An app's client credentials. */
export interface AppCredentials {
  appClientId: string;
  appClientSecret: string;
}

/** The HTTP Basic header value of an app's credentials (RFC 6749 §2.3.1: form-encoded, then base64). */
export function basicOf(app: AppCredentials): string {
  const pair = `${encodeURIComponent(app.appClientId)}:${encodeURIComponent(app.appClientSecret)}`;
  return `Basic ${Buffer.from(pair).toString("base64")}`;
}

/** The body of a client-credentials token request for the read scope. */
export const TOKEN_REQUEST_BODY = "grant_type=client_credentials&scope=api_data%2Fread";

/** The token endpoint's answer on `service` for `app`. */
export function requestToken(service: Service, app: AppCredentials): Promise<LightMyRequestResponse> {
  return service.app.inject({
    method: "POST",
    url: "/oauth2/token",
    headers: { authorization: basicOf(app), "content-type": "application/x-www-form-urlencoded" },
    payload: TOKEN_REQUEST_BODY,
  });
}

/** A token from `service` for `app` (throws unless 200). */
export async function tokenFrom(service: Service, app: AppCredentials): Promise<string> {
  const response = await requestToken(service, app);
  if (response.statusCode !== 200) throw new Error(`token: ${response.statusCode} ${response.body}`);
  return (response.json() as { access_token: string }).access_token;
}

/** A hand-made POST: its Authorization header, its Content-Type (null: none), its body. */
export interface RawPost {
  authorization?: string;
  contentType?: string | null;
  payload?: string | Buffer;
}

/** POSTs `options` to `url` of `service`; what `options` leaves out comes from `defaults`. */
export function rawPost(
  service: Service,
  url: string,
  options: RawPost,
  defaults: { contentType: string; payload: string },
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = {};
  if (options.authorization !== undefined) headers["authorization"] = options.authorization;
  if (options.contentType !== null) headers["content-type"] = options.contentType ?? defaults.contentType;
  return service.app.inject({ method: "POST", url, headers, payload: options.payload ?? defaults.payload });
}

/** POSTs a GraphQL query to `service` with `token`. */
export function graphqlOn(
  service: Service,
  token: string,
  query: string,
  variables?: Record<string, unknown>,
): Promise<LightMyRequestResponse> {
  return service.app.inject({
    method: "POST",
    url: "/graphql",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    payload: JSON.stringify({ query, variables }),
  });
}
