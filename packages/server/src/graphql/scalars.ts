/** The `Date` and `DateTime` scalars (CONTRACT §3): strict on input, canonical on output. */
import { GraphQLError, GraphQLScalarType, Kind, print, type ValueNode } from "graphql";
import { isCalendarDate } from "../calendar.js";

/**
 * The scalars' descriptions. `schema.ts` prints these into the SDL: Mercurius copies every
 * property of these scalar objects onto the schema's types, so a second wording here would
 * make the introspected schema drift from `schema.graphql`.
 */
export const DATE_DESCRIPTION = "A calendar day, YYYY-MM-DD (ISO 8601). Only real days are accepted.";
export const DATE_TIME_DESCRIPTION =
  "An instant in ISO 8601, UTC, with milliseconds: 2026-11-22T06:15:00.000Z.";

function parseDate(value: unknown, shown: string, node?: ValueNode): string {
  if (typeof value !== "string" || !isCalendarDate(value)) {
    throw new GraphQLError(`Date must be a real calendar day written YYYY-MM-DD; got ${shown}`, {
      ...(node ? { nodes: node } : {}),
      extensions: { code: "BAD_USER_INPUT" },
    });
  }
  return value;
}

/** `Date`: a real calendar day, `YYYY-MM-DD`. */
export const DateScalar = new GraphQLScalarType({
  name: "Date",
  description: DATE_DESCRIPTION,
  serialize: (value) => value,
  parseValue: (value) => parseDate(value, JSON.stringify(value) ?? String(value)),
  parseLiteral: (node: ValueNode) =>
    parseDate(node.kind === Kind.STRING ? node.value : undefined, print(node), node),
});

/** `DateTime`: an instant, ISO 8601 in UTC with milliseconds, e.g. 2026-11-22T06:15:00.000Z. */
export const DateTimeScalar = new GraphQLScalarType({
  name: "DateTime",
  description: DATE_TIME_DESCRIPTION,
  serialize: (value) => (value instanceof Date ? value.toISOString() : value),
  parseValue: (value) => {
    const parsed = typeof value === "string" ? new Date(value) : undefined;
    if (!parsed || Number.isNaN(parsed.getTime())) {
      throw new GraphQLError("DateTime must be an ISO 8601 instant", {
        extensions: { code: "BAD_USER_INPUT" },
      });
    }
    return parsed;
  },
});
