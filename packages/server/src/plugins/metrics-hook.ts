/**
 * Records every public request in the service's metrics: count and latency by route (the route
 * pattern, never the raw URL, so that unknown paths cannot grow the label set), latency by
 * question class (observability/question-class.ts), 429s, and the token endpoint's outcomes
 * (issued, or refused by RFC 6749 error code).
 */
import { EXPORT_PATH } from "@mdq/contract";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ServiceMetrics } from "../observability/metrics.js";
import { notedQuestionClass, type QuestionClass } from "../observability/question-class.js";

const TOKEN_ROUTE = "/oauth2/token";
/** Labels for paths that matched no route (404). */
const UNMATCHED = "unmatched";

function routeOf(request: FastifyRequest): string {
  return request.routeOptions.url ?? UNMATCHED;
}

/** The question `request` asked: by its route for a token or an export, else as its endpoint noted. */
function questionClassOf(request: FastifyRequest, route: string): QuestionClass {
  if (route === TOKEN_ROUTE && request.method === "POST") return "token";
  if (route === EXPORT_PATH && request.method === "GET") return "export";
  return notedQuestionClass(request) ?? "other";
}

/** The RFC 6749 `error` of a token endpoint error body, or `unknown`. */
function oauthErrorOf(payload: unknown): string {
  if (typeof payload !== "string") return "unknown";
  try {
    const error = (JSON.parse(payload) as { error?: unknown }).error;
    return typeof error === "string" ? error : "unknown";
  } catch {
    return "unknown";
  }
}

/** Installs the metric hooks on `app` (register before the routes, at the root). */
export function useMetrics(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.addHook("onSend", async (request, reply, payload) => {
    if (routeOf(request) !== TOKEN_ROUTE || request.method !== "POST") return payload;
    if (reply.statusCode === 200) metrics.tokensIssued.inc();
    else metrics.tokenFailures.inc({ error: oauthErrorOf(payload) });
    return payload;
  });
  app.addHook("onResponse", async (request, reply) => {
    const route = routeOf(request);
    const status = reply.statusCode;
    metrics.requests.inc({ route, method: request.method, status: String(status) });
    metrics.requestDuration.observe({ route }, reply.elapsedTime / 1000);
    metrics.questionDuration.observe({ class: questionClassOf(request, route) }, reply.elapsedTime / 1000);
    if (status === 429) metrics.rateLimited.inc({ endpoint: route === TOKEN_ROUTE ? "token" : "graphql" });
  });
}
