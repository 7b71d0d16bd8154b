/**
 * What a verified access token says, and what a verification remembers: below both the token's
 * verifier (access-token.ts) and the memory of verified tokens (verified-tokens.ts).
 */
import type { CryptoKey } from "jose";

/** What a verified access token says. */
export interface AccessTokenClaims {
  appClientId: string;
  brandId: string;
  scope: string;
  region: string;
  jti: string;
  issuedAt: number;
  expiresAt: number;
}

/** A token's verification: its claims, and the ring's key for `kid` that verified its signature. */
export interface VerifiedToken {
  claims: AccessTokenClaims;
  key: CryptoKey;
  kid: string;
}
