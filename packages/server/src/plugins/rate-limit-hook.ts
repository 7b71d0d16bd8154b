/**
 * Applies the rate limit (CONTRACT §3 rule 9) to the token and GraphQL endpoints: one budget per
 * client IP across both, `RateLimit-Policy`/`RateLimit` on every answer (draft-ietf-httpapi-
 * ratelimit-headers), 429 with `Retry-After` when spent. The client IP comes from
 * `X-Forwarded-For` only through Fastify's `trustProxy`, which lists the trusted proxies.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { MdqError, OAuthError } from "../errors.js";
import type { RateLimiter, RateLimitPolicy } from "../limits/rate-limit.js";

/** Counts every request of `app`'s routes (register it inside the scope to limit). */
export function useRateLimit(app: FastifyInstance, limiter: RateLimiter, policy: RateLimitPolicy): void {
  const policyHeader = `"per-ip";q=${policy.max};w=${policy.windowSeconds}`;
  app.addHook("onRequest", async (request: FastifyRequest, reply) => {
    const decision = await limiter.consume(request.ip);
    reply.header("ratelimit-policy", policyHeader);
    reply.header("ratelimit", `"per-ip";r=${decision.remaining};t=${decision.resetSeconds}`);
    if (decision.allowed) return;
    const retryAfter = { "retry-after": String(decision.retryAfterSeconds) };
    const message = `rate limit of ${policy.max} requests per ${policy.windowSeconds} s exceeded; retry in ${decision.retryAfterSeconds} s`;
    if (request.url.startsWith("/oauth2/")) throw new OAuthError("rate_limited", message, retryAfter);
    throw new MdqError("RATE_LIMITED", message, retryAfter);
  });
}
