/**
 * The question a public request asks, as `mdq_question_duration_seconds{class}` labels it
 * (docs/observability.md): a token (`POST /oauth2/token`), one GraphQL question by the root
 * fields it selects (graphql/request-class.ts), the bulk export; anything else (health checks,
 * the explorer, GraphQL requests refused before their question is known, a document mixing
 * questions) is `other`. The GraphQL endpoint notes its request's class here; the metrics hook
 * reads it when the response is sent.
 */
import type { FastifyRequest } from "fastify";

/** Every question class, in the order docs/observability.md lists them. */
export const QUESTION_CLASSES = [
  "token",
  "readiness",
  "changes",
  "myAccess",
  "records",
  "aggregate",
  "export",
  "other",
] as const;

/** One of QUESTION_CLASSES. */
export type QuestionClass = (typeof QUESTION_CLASSES)[number];

/** The classes a GraphQL request's root fields give it. */
export type GraphQLQuestion = Exclude<QuestionClass, "token" | "export">;

/** Classes noted by the endpoints, per request: gone with the request. */
const noted = new WeakMap<FastifyRequest, QuestionClass>();

/**
 * Notes that `request` asks `question` (the GraphQL endpoint, once its checks passed).
 * @example noteQuestionClass(request, checks.questionOf(body));
 */
export function noteQuestionClass(request: FastifyRequest, question: QuestionClass): void {
  noted.set(request, question);
}

/** The class noted for `request`, or undefined when no endpoint noted one. */
export function notedQuestionClass(request: FastifyRequest): QuestionClass | undefined {
  return noted.get(request);
}
