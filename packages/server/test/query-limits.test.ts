/**
 * Abusive queries are refused with `QUERY_TOO_COMPLEX` (HTTP 200, no `data`) before any store
 * work: too many aliases, top-level fields or fields, too deep, too many tokens, too long, and
 * fragment fan-outs. What GraphQL tools and a daily sync send still passes.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestRegion, type TestRegion } from "@mdq/test-support";
import { getIntrospectionQuery, Lexer, Source, TokenKind } from "graphql";
import { addDays } from "../src/calendar.js";
import { QUERY_LIMITS } from "../src/graphql/query-limits.js";

interface RawResponse {
  status: number;
  text: string;
  body: {
    data?: Record<string, unknown> | null;
    errors?: { message: string; path?: unknown; extensions: Record<string, unknown> }[];
    extensions?: { pageInfo?: Record<string, { page: number; pageSize: number }> };
  };
}

function assertNoStackTrace(text: string): void {
  assert.doesNotMatch(text, /\bat [^\s"]+ \(|\bat (?:async )?[^\s"]*\.[cm]?[jt]s:\d+|"stack"|node:internal/);
}

/** Number of lexical tokens of a GraphQL document, as the parser's `maxTokens` counts them. */
function tokenCount(query: string): number {
  const lexer = new Lexer(new Source(query));
  let count = 0;
  while (lexer.advance().kind !== TokenKind.EOF) count += 1;
  return count;
}

const repeat = (count: number, item: (index: number) => string) =>
  Array.from({ length: count }, (_, index) => item(index)).join(" ");

/** `{ __type(name: "Query") { ...T0 } }` with T0 … T(n-1) each nesting `ofType` once more. */
function ofTypeFragmentChain(length: number): string {
  const fragments = repeat(length, (index) => `fragment T${index} on __Type { ofType { ...T${index + 1} } }`);
  return `{ __type(name: "Query") { ...T0 } } ${fragments} fragment T${length} on __Type { name }`;
}

describe("query limits", () => {
  let region: TestRegion;
  let token: string;
  let clientId: string;
  let day: string;
  const answered: RawResponse[] = [];

  before(async () => {
    region = await startTestRegion({ days: 10 });
    token = await region.token();
    clientId = region.credentials.apps[0]!.brandClientId;
    day = addDays(region.today, -2);
  });
  after(() => region.close());

  async function send(query: string, variables?: Record<string, unknown>): Promise<RawResponse> {
    const response = await region.inject({
      method: "POST",
      url: "/graphql",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      payload: JSON.stringify({ query, variables }),
    });
    const raw = { status: response.statusCode, text: response.body, body: response.json() };
    answered.push(raw);
    return raw;
  }

  /** Asserts the one-error `QUERY_TOO_COMPLEX` answer with exactly `message` and no `data`. */
  async function assertTooComplex(query: string, message: string): Promise<void> {
    const response = await send(query);
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(
      response.body.errors?.map((error) => ({ message: error.message, extensions: error.extensions })),
      [{ message, extensions: { code: "QUERY_TOO_COMPLEX" } }],
    );
    assert.equal("data" in response.body, false, response.text);
  }

  const records = (selection: string) =>
    `marketingRecords(clientId: "${clientId}", dateRange: {from: "${day}", to: "${day}"}) { ${selection} }`;
  const readiness = (alias: string) => `${alias}: marketingDataReadiness(clientId: "${clientId}") { status }`;

  it("refuses more aliases than allowed", async () => {
    await assertTooComplex(
      `{ ${records(repeat(16, (index) => `id${index}: recordId`))} }`,
      "query uses 16 aliases; at most 15",
    );
  });

  it("counts aliases of introspection fields too", async () => {
    await assertTooComplex(
      `{ ${repeat(16, (index) => `t${index}: __typename`)} }`,
      "query uses 16 aliases; at most 15",
    );
  });

  it("refuses more top-level fields than allowed", async () => {
    await assertTooComplex(
      `{ ${repeat(6, (index) => readiness(`r${index}`))} }`,
      "query asks for 6 top-level fields; at most 5",
    );
  });

  it("counts top-level fields brought in by a fragment", async () => {
    await assertTooComplex(
      `{ ...Roots } fragment Roots on Query { ${repeat(6, (index) => readiness(`f${index}`))} }`,
      "query asks for 6 top-level fields; at most 5",
    );
  });

  it("accepts exactly the allowed number of top-level fields", async () => {
    const response = await send(
      `{ ${repeat(QUERY_LIMITS.maxRootFields, (index) => readiness(`ok${index}`))} }`,
    );
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.errors, undefined, response.text);
    assert.deepEqual(Object.keys(response.body.data ?? {}), ["ok0", "ok1", "ok2", "ok3", "ok4"]);
  });

  it("refuses more fields than allowed", async () => {
    await assertTooComplex(
      `{ ${records(repeat(100, () => "recordId"))} }`,
      "query selects 101 fields; at most 100",
    );
  });

  it("refuses introspection nested deeper than the introspection limit", async () => {
    const query = `{ __schema { types { fields { type ${"{ ofType ".repeat(16)}{ name }${" }".repeat(16)} } } } }`;
    await assertTooComplex(query, "introspection depth 21 exceeds 20");
  });

  it("refuses a fragment chain that nests deeper than the introspection limit", async () => {
    await assertTooComplex(ofTypeFragmentChain(20), "introspection depth 22 exceeds 20");
  });

  it("refuses a fragment fan-out (each fragment spreading the next twice) by its expanded size", async () => {
    // 40 levels expand to 2^40 fields: counting them spread by spread would never finish.
    const fragments = repeat(
      40,
      (index) => `fragment F${index + 1} on MarketingRecord { ...F${index} ...F${index} }`,
    );
    const query = `{ ${records("...F40")} } fragment F0 on MarketingRecord { recordId } ${fragments}`;
    await assertTooComplex(query, `query selects ${1 + 2 ** 40} fields; at most 100`);
  });

  it("refuses a field repeated so often that validating it would be too costly", async () => {
    await assertTooComplex(
      `{ ${repeat(1500, () => "__typename")} }`,
      "the query is too complex to validate: too many overlapping fields or fragment spreads",
    );
  });

  it("refuses a 3000-token document shorter than the length limit", async () => {
    const markets = repeat(2990, () => '"GB"');
    const query = `{ ${records("recordId").replace(") {", `, filter: {markets: [${markets}]}) {`)} }`;
    assert.ok(tokenCount(query) >= 3000, `the document has ${tokenCount(query)} tokens`);
    assert.ok(query.length < QUERY_LIMITS.maxQueryLength);
    await assertTooComplex(query, "the query has more than 2000 tokens; at most 2000 are allowed");
  });

  it("refuses a query string over 20 000 characters", async () => {
    const query = `{ __typename }\n# ${"x".repeat(QUERY_LIMITS.maxQueryLength)}`;
    await assertTooComplex(query, `the query is ${query.length} characters long; at most 20000`);
  });

  it("answers the standard introspection query", async () => {
    const response = await send(getIntrospectionQuery());
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.errors, undefined, response.text);
    const schema = response.body.data?.["__schema"] as { queryType: { name: string } };
    assert.equal(schema.queryType.name, "Query");
  });

  it("answers the introspection query with every option GraphQL tools turn on", async () => {
    const response = await send(
      getIntrospectionQuery({
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        schemaDescription: true,
        inputValueDeprecation: true,
      }),
    );
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.errors, undefined, response.text);
  });

  it("passes a daily-sync query with two aliases", async () => {
    const response = await send(
      `query Sync($c: ID!, $day: Date!) {
        ready: marketingDataReadiness(clientId: $c, date: $day) { status availableThrough }
        day: marketingRecords(clientId: $c, dateRange: {from: $day, to: $day}, pagination: {pageSize: 5000}) {
          recordId date market dataSource channel campaignId campaignName
          impressions clicks spend conversions revenue currency
        }
      }`,
      { c: clientId, day },
    );
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.errors, undefined, response.text);
    const rows = response.body.data?.["day"] as { date: string }[];
    assert.ok(rows.length > 0);
    assert.ok(rows.every((row) => row.date === day));
    assert.deepEqual(Object.keys(response.body.extensions?.pageInfo ?? {}), ["day"]);
  });

  it("never puts a stack trace in any response body", () => {
    assert.ok(answered.length > 10);
    for (const response of answered) assertNoStackTrace(response.text);
  });
});
