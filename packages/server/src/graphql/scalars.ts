/** The `Date` and `DateTime` scalars (CONTRACT §3): strict on input, canonical on output. */
import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from "graphql";
import { isCalendarDate } from "../calendar.js";

function parseDate(value: unknown): string {
  if (typeof value !== "string" || !isCalendarDate(value)) {
    throw new GraphQLError(
      `Date must be a real calendar day written YYYY-MM-DD; got ${JSON.stringify(value)}`,
      {
        extensions: { code: "BAD_USER_INPUT" },
      },
    );
  }
  return value;
}

/** `Date`: a real calendar day, `YYYY-MM-DD`. */
export const DateScalar = new GraphQLScalarType({
  name: "Date",
  description: "A calendar day, YYYY-MM-DD (ISO 8601). Only real days are accepted: 2026-02-30 is refused.",
  serialize: (value) => value,
  parseValue: parseDate,
  parseLiteral: (node: ValueNode) => parseDate(node.kind === Kind.STRING ? node.value : undefined),
});

/** `DateTime`: an instant, ISO 8601 in UTC with milliseconds, e.g. 2026-11-22T06:15:00.000Z. */
export const DateTimeScalar = new GraphQLScalarType({
  name: "DateTime",
  description: "An instant in ISO 8601, UTC, with milliseconds: 2026-11-22T06:15:00.000Z.",
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
