/** Parses a GraphQL document within the token limit (QUERY_LIMITS.maxTokens). */
import { type DocumentNode, GraphQLError } from "graphql";
import { Parser } from "graphql/language/parser.js";
import { withCode } from "./coded-error.js";
import { QUERY_LIMITS } from "./query-limits.js";

/**
 * The document of `source`, or the error refusing it: QUERY_TOO_COMPLEX when the parser stopped
 * at the token limit, GRAPHQL_PARSE_FAILED for a syntax error. The two are told apart by the
 * parser's own token count when it stopped (the guard throws on token `maxTokens + 1`), not by
 * the wording of its message.
 */
export function parseDocument(source: string): DocumentNode | GraphQLError {
  const parser = new Parser(source, { maxLexicalTokens: QUERY_LIMITS.maxTokens });
  try {
    return parser.parseDocument();
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
    if (parser.tokenCount > QUERY_LIMITS.maxTokens) {
      const max = QUERY_LIMITS.maxTokens;
      return new GraphQLError(`the query has more than ${max} tokens; at most ${max} are allowed`, {
        source: error.source,
        positions: error.positions,
        extensions: { code: "QUERY_TOO_COMPLEX" },
      });
    }
    return withCode(error, "GRAPHQL_PARSE_FAILED");
  }
}
