/**
 * `POST {authUrl}/oauth2/token` (spec §4.1, CONTRACT §2), as a pipeline:
 * no-cache → check media type → parse form → authenticate client → check grant → check scope → issue.
 */
import type { FastifyInstance } from "fastify";
import { OAuthError } from "../errors.js";
import { decodeUtf8, mediaTypeOf } from "../plugins/request-body.js";
import type { App } from "../store/model/store.js";
import { issueAccessToken, READ_SCOPE, TOKEN_LIFETIME_SECONDS } from "./access-token.js";
import type { AppDirectory } from "./app-directory.js";
import { secretMatches } from "./app-secrets.js";
import { type ClientCredentials, parseBasicCredentials } from "./client-auth.js";
import type { KeyRing } from "./signing-keys.js";

/** The only grant type (spec §5.1). */
export const CLIENT_CREDENTIALS_GRANT = "client_credentials";

export interface TokenEndpointOptions {
  keys: KeyRing;
  apps: AppDirectory;
  settings: { authUrl: string; baseUrl: string; region: string };
}

/** A hash no secret matches, compared when the client is unknown so timing does not tell. */
const UNKNOWN_CLIENT_HASH = "0".repeat(64);

/** Parses an application/x-www-form-urlencoded body; a repeated parameter is invalid (RFC 6749 §3.2). */
function parseForm(body: unknown): Map<string, string> {
  const text = decodeUtf8(body);
  if (text === undefined) throw new OAuthError("invalid_request", "the request body is not valid UTF-8");
  const form = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(text)) {
    if (form.has(name)) throw new OAuthError("invalid_request", `parameter ${name} is repeated`);
    form.set(name, value);
  }
  return form;
}

/** Finds the app and checks its secret (current, or previous within its grace period). */
async function authenticateClient(
  apps: AppDirectory,
  credentials: ClientCredentials,
  now: number,
): Promise<App> {
  const app = await apps.app(credentials.clientId);
  const currentMatches = secretMatches(credentials.clientSecret, app?.secretHash ?? UNKNOWN_CLIENT_HASH);
  const previousMatches =
    app?.previousSecretHash != null &&
    app.previousSecretExpiresAt !== null &&
    app.previousSecretExpiresAt.getTime() > now &&
    secretMatches(credentials.clientSecret, app.previousSecretHash);
  if (!app || app.revokedAt !== null || !(currentMatches || previousMatches)) {
    throw new OAuthError("invalid_client", "client authentication failed");
  }
  return app;
}

function checkGrant(form: Map<string, string>): void {
  const grantType = form.get("grant_type");
  if (grantType === undefined || grantType === "")
    throw new OAuthError("invalid_request", "grant_type is required");
  if (grantType !== CLIENT_CREDENTIALS_GRANT) {
    throw new OAuthError("unsupported_grant_type", `grant_type must be ${CLIENT_CREDENTIALS_GRANT}`);
  }
}

function checkScope(form: Map<string, string>): string {
  const scope = form.get("scope");
  if (scope === undefined || scope === "") throw new OAuthError("invalid_request", "scope is required");
  const scopes = new Set(scope.split(" "));
  if (scopes.size !== 1 || !scopes.has(READ_SCOPE))
    throw new OAuthError("invalid_scope", `scope must be ${READ_SCOPE}`);
  return READ_SCOPE;
}

/** Registers the token endpoint on `app`. */
export async function tokenEndpoint(app: FastifyInstance, options: TokenEndpointOptions): Promise<void> {
  app.post("/oauth2/token", async (request, reply) => {
    reply.header("cache-control", "no-store").header("pragma", "no-cache");
    if (mediaTypeOf(request.headers["content-type"]).type !== "application/x-www-form-urlencoded") {
      throw new OAuthError("invalid_request", "Content-Type must be application/x-www-form-urlencoded");
    }
    const form = parseForm(request.body);
    if (form.has("client_secret") || form.has("client_assertion")) {
      throw new OAuthError(
        "invalid_client",
        "client credentials must be sent with HTTP Basic, not in the body",
      );
    }
    const credentials = parseBasicCredentials(request.headers.authorization);
    const bodyClientId = form.get("client_id");
    if (bodyClientId !== undefined && bodyClientId !== credentials.clientId) {
      throw new OAuthError("invalid_client", "client_id in the body differs from the HTTP Basic client id");
    }
    const now = Date.now();
    const client = await authenticateClient(options.apps, credentials, now);
    checkGrant(form);
    const scope = checkScope(form);
    const accessToken = await issueAccessToken(
      options.keys,
      options.settings,
      { appClientId: client.appClientId, brandId: client.brandId },
      now,
    );
    return { access_token: accessToken, token_type: "Bearer", expires_in: TOKEN_LIFETIME_SECONDS, scope };
  });
}
