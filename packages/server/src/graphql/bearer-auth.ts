/**
 * Bearer authentication of GraphQL requests (spec §5, RFC 6750): a valid, unexpired token of this
 * region whose app is still active. Failures are 401 with `WWW-Authenticate`.
 */
import type { FastifyRequest } from "fastify";
import { MdqError } from "../errors.js";
import { InvalidTokenError, verifyAccessToken } from "../oauth/access-token.js";
import type { AppDirectory } from "../oauth/app-directory.js";
import type { KeyRing } from "../oauth/signing-keys.js";
import type { VerifiedTokens } from "../oauth/verified-tokens.js";
import type { Caller } from "./arguments.js";

export interface BearerAuthOptions {
  keys: KeyRing;
  apps: AppDirectory;
  settings: { authUrl: string; baseUrl: string; region: string };
  /** Tokens verified before, recalled without checking their signature again. */
  verifiedTokens?: VerifiedTokens;
}

const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;
/** The auth-scheme of an Authorization header is case-insensitive (RFC 9110 §11.1). */
const BEARER_SCHEME = /^Bearer(?:\s|$)/i;

function unauthenticated(message: string, tokenSent: boolean): MdqError {
  const challenge = tokenSent
    ? `Bearer error="invalid_token", error_description="${message.replaceAll('"', "'")}"`
    : "Bearer";
  return new MdqError("UNAUTHENTICATED", message, { "www-authenticate": challenge });
}

/** The caller behind a request's bearer token. */
export async function authenticateBearer(
  request: FastifyRequest,
  options: BearerAuthOptions,
): Promise<Caller> {
  const header = request.headers.authorization;
  // RFC 6750 §3.1: no error code when the request carries no bearer token at all, including when
  // it authenticates with another scheme such as Basic.
  if (header === undefined || !BEARER_SCHEME.test(header)) {
    throw unauthenticated("an access token is required: send 'Authorization: Bearer <access token>'", false);
  }
  const match = BEARER.exec(header);
  if (!match) throw unauthenticated("the Authorization header must be 'Bearer <access token>'", true);
  let claims: Awaited<ReturnType<typeof verifyAccessToken>>;
  try {
    claims = await verifyAccessToken(options.keys, options.settings, match[1]!, options.verifiedTokens);
  } catch (error) {
    if (error instanceof InvalidTokenError) throw unauthenticated(error.message, true);
    throw error;
  }
  const app = await options.apps.app(claims.appClientId);
  if (!app || app.revokedAt !== null) throw unauthenticated("the access token's app has been revoked", true);
  if (app.brandId !== claims.brandId)
    throw unauthenticated("the access token's brand is not its app's brand", true);
  return {
    brandId: claims.brandId,
    appClientId: claims.appClientId,
    grants: await options.apps.effectiveGrants(app),
    scope: claims.scope,
    region: claims.region,
    tokenExpiresAt: new Date(claims.expiresAt * 1000),
  };
}
