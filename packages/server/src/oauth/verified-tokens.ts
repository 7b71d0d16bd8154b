/**
 * Access tokens whose signature was verified, so that a client's next requests with the same
 * token skip the signature check (an EdDSA verification per request, ~3% of a records page's
 * CPU: issue 11). A remembered token is accepted again only while it has not expired and the
 * key that verified it is still the ring's key for its `kid` (a retired-and-dropped or reloaded
 * key verifies afresh); everything else — the app's revocation, its brand, its grants — is
 * checked on every request as before.
 */
import type { CryptoKey } from "jose";
import { LRUCache } from "lru-cache";
import type { AccessTokenClaims, VerifiedToken } from "./token-claims.js";

/** Tokens remembered at most: a few hundred bytes each. */
const MAX_TOKENS = 10_000;

export class VerifiedTokens {
  private readonly tokens = new LRUCache<string, VerifiedToken>({ max: MAX_TOKENS });

  /** Remembers that `token`'s signature was verified with `key`, the ring's key for `kid`. */
  remember(token: string, verified: VerifiedToken): void {
    this.tokens.set(token, verified);
  }

  /**
   * The claims of `token` if it was verified before with the key `keyOf(kid)` still gives, or
   * undefined (then it is verified in full). `expired` when it was, but has expired since.
   */
  recall(
    token: string,
    keyOf: (kid: string) => CryptoKey | undefined,
    now = Date.now(),
  ): AccessTokenClaims | "expired" | undefined {
    const verified = this.tokens.get(token);
    if (verified === undefined) return undefined;
    if (keyOf(verified.kid) !== verified.key) {
      this.tokens.delete(token);
      return undefined;
    }
    // As jose: expired once `exp` is at or before the current second.
    if (verified.claims.expiresAt <= Math.floor(now / 1000)) {
      this.tokens.delete(token);
      return "expired";
    }
    return verified.claims;
  }
}
