/**
 * JWT access tokens per RFC 9068 (`typ: at+jwt`): issued at the token endpoint and verified on
 * every GraphQL request with the algorithm, typ, issuer, audience and expiry pinned.
 */
import { KeyObject, randomUUID, sign } from "node:crypto";
import { type CryptoKey, type JWTPayload, errors as joseErrors, jwtVerify } from "jose";
import { type KeyRing, SIGNING_ALGORITHM } from "./signing-keys.js";
import type { AccessTokenClaims } from "./token-claims.js";
import type { VerifiedTokens } from "./verified-tokens.js";

/** The only scope (spec §5.2). */
export const READ_SCOPE = "api_data/read";
/** Lifetime of every access token in seconds (spec §3). */
export const TOKEN_LIFETIME_SECONDS = 3600;

interface TokenSettings {
  authUrl: string;
  baseUrl: string;
  region: string;
}

/** The private key of each CryptoKey as a KeyObject, converted once per key. */
const keyObjects = new WeakMap<CryptoKey, KeyObject>();

const base64urlJson = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url");

/**
 * Signs a new access token for an app of a brand: the JWS compact form jose's `SignJWT` writes
 * (the same header and claims, in the same order), signed with node's one-shot Ed25519 `sign`
 * instead of WebCrypto's: the token endpoint's largest cost (issue 11, item 3).
 */
export async function issueAccessToken(
  keys: KeyRing,
  settings: TokenSettings,
  subject: { appClientId: string; brandId: string },
  now = Date.now(),
): Promise<string> {
  const { kid, privateKey } = keys.activeKey();
  let keyObject = keyObjects.get(privateKey);
  if (keyObject === undefined) {
    keyObject = KeyObject.from(privateKey);
    keyObjects.set(privateKey, keyObject);
  }
  const issuedAt = Math.floor(now / 1000);
  const header = base64urlJson({ alg: SIGNING_ALGORITHM, typ: "at+jwt", kid });
  const payload = base64urlJson({
    client_id: subject.appClientId,
    brand: subject.brandId,
    scope: READ_SCOPE,
    region: settings.region,
    iss: settings.authUrl,
    aud: settings.baseUrl,
    sub: subject.appClientId,
    iat: issuedAt,
    exp: issuedAt + TOKEN_LIFETIME_SECONDS,
    jti: randomUUID(),
  });
  const signingInput = `${header}.${payload}`;
  const signature = sign(null, Buffer.from(signingInput), keyObject).toString("base64url");
  return `${signingInput}.${signature}`;
}

/** Why a token was refused; the message is safe to show. */
export class InvalidTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InvalidTokenError";
  }
}

/**
 * Verifies a bearer token; throws `InvalidTokenError` for anything not acceptable. A token signed
 * by a key the ring has not loaded yet is verified after the ring learns it (`KeyRing.learnKeyOf`).
 * With `verifiedTokens`, a token verified before is recalled instead (oauth/verified-tokens.ts).
 */
export async function verifyAccessToken(
  keys: KeyRing,
  settings: TokenSettings,
  token: string,
  verifiedTokens?: VerifiedTokens,
): Promise<AccessTokenClaims> {
  const recalled = verifiedTokens?.recall(token, (kid) => keys.verificationKey(kid));
  if (recalled === "expired") throw new InvalidTokenError("the access token has expired");
  if (recalled !== undefined) return recalled;
  await keys.learnKeyOf(token);
  let payload: JWTPayload;
  let verifiedWith: { kid: string; key: CryptoKey } | undefined;
  try {
    ({ payload } = await jwtVerify(
      token,
      async (header) => {
        const kid = header.kid ?? "";
        const key = keys.verificationKey(kid);
        if (!key) throw new InvalidTokenError("the access token was signed by an unknown key");
        verifiedWith = { kid, key };
        return key;
      },
      {
        algorithms: [SIGNING_ALGORITHM],
        typ: "at+jwt",
        issuer: settings.authUrl,
        audience: settings.baseUrl,
        requiredClaims: ["exp", "iat", "jti", "sub"],
      },
    ));
  } catch (error) {
    if (error instanceof InvalidTokenError) throw error;
    if (error instanceof joseErrors.JWTExpired) throw new InvalidTokenError("the access token has expired");
    if (error instanceof joseErrors.JWTClaimValidationFailed) {
      throw new InvalidTokenError(`the access token's ${error.claim} claim is not valid here`);
    }
    throw new InvalidTokenError("the access token is malformed or its signature is invalid");
  }
  const { client_id: appClientId, brand, scope, region, jti, iat, exp } = payload;
  if (typeof appClientId !== "string" || typeof brand !== "string" || typeof scope !== "string") {
    throw new InvalidTokenError("the access token lacks client_id, brand or scope");
  }
  if (region !== settings.region)
    throw new InvalidTokenError("the access token was issued for another region");
  if (!scope.split(" ").includes(READ_SCOPE))
    throw new InvalidTokenError(`the access token lacks scope ${READ_SCOPE}`);
  const claims = {
    appClientId,
    brandId: brand,
    scope,
    region,
    jti: String(jti),
    issuedAt: Number(iat),
    expiresAt: Number(exp),
  };
  if (verifiedTokens && verifiedWith) verifiedTokens.remember(token, { claims, ...verifiedWith });
  return claims;
}
