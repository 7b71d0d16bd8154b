/**
 * Every query-level error code of CONTRACT §3, produced over HTTP: status 200, the exact
 * `extensions.code`, a message that says what is wrong, and `data` as the GraphQL spec has it
 * (absent for request errors: parse, validation, variable coercion; null when a non-null root
 * field fails during execution).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type ErrorCode, GRAPHQL_ERROR_CODES } from "@mdq/contract";
import { startTestRegion, type TestRegion } from "@mdq/test-support";
import { addDays } from "../src/calendar.js";
import { JIT_AFTER_RUNS } from "../src/graphql/graphql-endpoint.js";

/** Days of demo data; the demo's FX history starts 10 days before the first of them. */
const DATA_DAYS = 100;
const EARLY_BRAND = "brand-before-fx";
const EARLY_APP = "app-before-fx";

interface Fixture {
  /** The first demo app's brand. */
  clientId: string;
  /** A data day of the demo. */
  day: string;
  /** A day before the first FX rate, on which EARLY_BRAND has a GBP record. */
  earlyDay: string;
}

interface GraphQLRequest {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  /** Whose token to send: the first demo app's (default) or EARLY_APP's. */
  as?: "demo" | "early";
}

interface ErrorCase {
  code: ErrorCode;
  /** The behaviour the case proves; the test's name. */
  behaviour: string;
  request: (fixture: Fixture) => GraphQLRequest;
  /** `absent` for request errors; `null` when the (non-null) root field failed in execution. */
  data: "absent" | "null";
  message: RegExp;
}

interface RawResponse {
  status: number;
  text: string;
  body: {
    data?: Record<string, unknown> | null;
    errors?: {
      message: string;
      locations?: unknown;
      path?: (string | number)[];
      extensions: Record<string, unknown>;
    }[];
    extensions?: { pageInfo?: Record<string, unknown> };
  };
}

const range = (from: string, to: string) => `dateRange: {from: "${from}", to: "${to}"}`;

function records(f: Fixture, args: string, selection = "recordId"): string {
  return `{ marketingRecords(clientId: "${f.clientId}", ${args}) { ${selection} } }`;
}

function aggregate(f: Fixture, args: string, selection = "DATE_DAY TOTAL_SPEND"): string {
  return `{ marketingAggregate(clientId: "${f.clientId}", ${range(f.day, f.day)}, ${args}) { ${selection} } }`;
}

/** UNSUPPORTED_CURRENCY for EARLY_BRAND's day before any FX rate; `query` gets the brand and range arguments. */
function beforeFirstRate(behaviour: string, query: (args: string) => string): ErrorCase {
  return {
    code: "UNSUPPORTED_CURRENCY",
    behaviour,
    request: (f) => ({
      query: query(`clientId: "${EARLY_BRAND}", ${range(f.earlyDay, f.earlyDay)}`),
      as: "early",
    }),
    data: "null",
    // GBP is the stored records' currency, not the one asked for: only the operator can help.
    message:
      /^cannot convert: there is no GBP reference rate on or before \d{4}-\d{2}-\d{2}, the currency of the brand's stored records: only the region's operator can load the missing rates; contact them$/,
  };
}

/**
 * The table. Each query string is sent once: Mercurius compiles a query with graphql-jit the
 * second time it sees it, and on that one request graphql-jit, not graphql-js, coerces the
 * variables (with other messages), so a repeated string would test two code paths at once.
 */
const CASES: ErrorCase[] = [
  {
    code: "GRAPHQL_PARSE_FAILED",
    behaviour: "a document with a syntax error",
    request: (f) => ({ query: `{ marketingDataReadiness(clientId: "${f.clientId}" { status } }` }),
    data: "absent",
    message: /^Syntax Error: Expected Name, found "\{"\.$/,
  },
  {
    code: "GRAPHQL_PARSE_FAILED",
    behaviour: "an unterminated string",
    request: () => ({ query: `{ marketingDataReadiness(clientId: "abc) { status } }` }),
    data: "absent",
    message: /^Syntax Error: Unterminated string\.$/,
  },
  {
    code: "GRAPHQL_PARSE_FAILED",
    behaviour: "a syntax error at a name that happens to be 'tokens' (not a token limit)",
    request: () => ({ query: "{ __typename } tokens" }),
    data: "absent",
    message: /^Syntax Error: Unexpected Name "tokens"\.$/,
  },
  {
    code: "GRAPHQL_PARSE_FAILED",
    behaviour: "a query that is JSON text (never retried as a JSON-encoded AST)",
    request: () => ({ query: '"hello"' }),
    data: "absent",
    message: /^query must be GraphQL text, not JSON$/,
  },
  {
    code: "GRAPHQL_PARSE_FAILED",
    behaviour: "a query that is a JSON-encoded AST object",
    request: () => ({ query: JSON.stringify({ kind: "Document", definitions: [] }) }),
    data: "absent",
    message: /^query must be GraphQL text, not JSON$/,
  },
  {
    code: "GRAPHQL_VALIDATION_FAILED",
    behaviour: "an unknown field",
    request: (f) => ({ query: `{ marketingDataReadiness(clientId: "${f.clientId}") { status nope } }` }),
    data: "absent",
    message: /^Cannot query field "nope" on type "MarketingDataReadiness"\.$/,
  },
  {
    code: "GRAPHQL_VALIDATION_FAILED",
    behaviour: "an unknown enum value written as a literal",
    request: (f) => ({ query: aggregate(f, "metrics: [SPENDING]") }),
    data: "absent",
    message: /^Value "SPENDING" does not exist in "Metric" enum\./,
  },
  {
    code: "GRAPHQL_VALIDATION_FAILED",
    behaviour: "a missing required argument",
    request: (f) => ({ query: `{ marketingRecords(clientId: "${f.clientId}") { recordId } }` }),
    data: "absent",
    message: /^Field "marketingRecords" argument "dateRange" of type "DateRangeInput!" is required/,
  },
  {
    code: "GRAPHQL_VALIDATION_FAILED",
    behaviour: "a null literal for a non-null argument",
    request: (f) => ({ query: `{ marketingRecords(clientId: null, ${range(f.day, f.day)}) { recordId } }` }),
    data: "absent",
    message: /^Expected value of type "ID!", found null\.$/,
  },
  {
    code: "GRAPHQL_VALIDATION_FAILED",
    behaviour: "a variable used but not declared",
    request: () => ({ query: "{ marketingDataReadiness(clientId: $brand) { status } }" }),
    data: "absent",
    message: /^Variable "\$brand" is not defined\.$/,
  },
  {
    code: "GRAPHQL_VALIDATION_FAILED",
    behaviour: "a nullable variable in a non-null position",
    request: (f) => ({
      query: `query($from: Date) { marketingRecords(clientId: "${f.clientId}", dateRange: {from: $from, to: "${f.day}"}) { recordId } }`,
      variables: { from: f.day },
    }),
    data: "absent",
    message: /^Variable "\$from" of type "Date" used in position expecting type "Date!"\.$/,
  },
  {
    code: "BAD_USER_INPUT",
    behaviour: "an impossible date (2026-02-30) given as a variable",
    request: (f) => ({
      query: `query($date: Date) { marketingDataReadiness(clientId: "${f.clientId}", date: $date) { status } }`,
      variables: { date: "2026-02-30" },
    }),
    data: "absent",
    message:
      /^Variable "\$date" got invalid value "2026-02-30"; Date must be a real calendar day written YYYY-MM-DD/,
  },
  {
    code: "GRAPHQL_VALIDATION_FAILED",
    behaviour: "two operations and no operationName",
    request: () => ({ query: "query A { __typename } query B { __typename }" }),
    data: "absent",
    message: /^Must provide operation name if query contains multiple operations\.$/,
  },
  {
    code: "GRAPHQL_VALIDATION_FAILED",
    behaviour: "an operationName that names no operation",
    request: () => ({ query: "query A { __typename }", operationName: "B" }),
    data: "absent",
    message: /^Unknown operation named "B"\.$/,
  },
  {
    code: "BAD_USER_INPUT",
    behaviour: "an impossible date inside an input-object variable (named as $r, at r.from)",
    request: (f) => ({
      query: `query($r: DateRangeInput!) { marketingRecords(clientId: "${f.clientId}", dateRange: $r) { recordId } }`,
      variables: { r: { from: "2026-02-30", to: f.day } },
    }),
    data: "absent",
    message:
      /^Variable "\$r" got invalid value "2026-02-30" at "r\.from"; Date must be a real calendar day written YYYY-MM-DD; got "2026-02-30"$/,
  },
  {
    code: "BAD_USER_INPUT",
    behaviour: "an impossible date (2026-02-30) written as a literal",
    request: (f) => ({
      query: `{ marketingDataReadiness(clientId: "${f.clientId}", date: "2026-02-30") { status } }`,
    }),
    data: "absent",
    message: /^Date must be a real calendar day written YYYY-MM-DD; got "2026-02-30"$/,
  },
  {
    code: "BAD_USER_INPUT",
    behaviour: "a date literal that is not a string",
    request: (f) => ({ query: records(f, `dateRange: {from: 20260101, to: "${f.day}"}`) }),
    data: "absent",
    message: /^Date must be a real calendar day written YYYY-MM-DD; got 20260101$/,
  },
  {
    code: "BAD_USER_INPUT",
    behaviour: "an Int variable out of the 32-bit range (2147483648)",
    request: (f) => ({
      query: `query($size: Int) { marketingRecords(clientId: "${f.clientId}", ${range(f.day, f.day)}, pagination: {pageSize: $size}) { recordId } }`,
      variables: { size: 2147483648 },
    }),
    data: "absent",
    message:
      /^Variable "\$size" got invalid value 2147483648; Int cannot represent non 32-bit signed integer value: 2147483648$/,
  },
  {
    code: "BAD_USER_INPUT",
    behaviour: "a null variable for a non-null type",
    request: () => ({
      query: "query($brand: ID!) { marketingDataReadiness(clientId: $brand) { status } }",
      variables: { brand: null },
    }),
    data: "absent",
    message: /^Variable "\$brand" of non-null type "ID!" must not be null\.$/,
  },
  {
    code: "BAD_USER_INPUT",
    behaviour: "a required variable that is not provided",
    request: () => ({
      query: "query($brandId: ID!) { marketingDataReadiness(clientId: $brandId) { date } }",
      variables: {},
    }),
    data: "absent",
    message: /^Variable "\$brandId" of required type "ID!" was not provided\.$/,
  },
  {
    code: "BAD_USER_INPUT",
    behaviour: "a required variable when the body has no variables member",
    request: () => ({ query: "query($brand: ID!) { marketingDataReadiness(clientId: $brand) { date } }" }),
    data: "absent",
    message: /^Variable "\$brand" of required type "ID!" was not provided\.$/,
  },
  {
    code: "BAD_USER_INPUT",
    behaviour: "an unknown enum value in a variable",
    request: (f) => ({
      query: `query($metrics: [Metric!]!) { marketingAggregate(clientId: "${f.clientId}", ${range(f.day, f.day)}, metrics: $metrics) { DATE_DAY } }`,
      variables: { metrics: ["SPENDING"] },
    }),
    data: "absent",
    message:
      /^Variable "\$metrics" got invalid value "SPENDING" at "metrics\[0\]"; Value "SPENDING" does not exist in "Metric" enum\./,
  },
  {
    code: "BAD_USER_INPUT",
    behaviour: "a sort naming the same field twice",
    request: (f) => ({
      query: records(
        f,
        `${range(f.day, f.day)}, sort: [{field: DATE_DAY, direction: DESC}, {field: DATE_DAY, direction: ASC}]`,
      ),
    }),
    data: "null",
    message: /^sort names DATE_DAY more than once$/,
  },
  {
    code: "BAD_USER_INPUT",
    behaviour: "an empty metrics list",
    request: (f) => ({ query: aggregate(f, "metrics: []", "DATE_DAY") }),
    data: "null",
    message: /^metrics must name at least one metric$/,
  },
  {
    code: "BAD_USER_INPUT",
    behaviour: "a groupBy naming the same dimension twice",
    request: (f) => ({
      query: aggregate(f, "metrics: [SPEND], groupBy: [MARKET, MARKET]", "MARKET TOTAL_SPEND"),
    }),
    data: "null",
    message: /^groupBy names MARKET more than once$/,
  },
  {
    code: "BAD_USER_INPUT",
    behaviour: "an empty filter list",
    request: (f) => ({ query: records(f, `${range(f.day, f.day)}, filter: {markets: []}`) }),
    data: "null",
    message: /^filter\.markets must not be empty; omit it to mean "all"$/,
  },
  {
    code: "BAD_USER_INPUT",
    behaviour: 'a malformed market code ("gb")',
    request: (f) => ({ query: records(f, `${range(f.day, f.day)}, filter: {markets: ["gb"]}`) }),
    data: "null",
    message: /^filter\.markets has a malformed value "gb"$/,
  },
  {
    code: "DATE_RANGE_TOO_LONG",
    behaviour: "a date range of 91 days counting both ends",
    request: (f) => ({ query: records(f, range(addDays(f.day, -90), f.day)) }),
    data: "null",
    message: /^dateRange covers 91 days; at most 90 are allowed per request \(both ends count\)$/,
  },
  {
    code: "INVALID_DATE_RANGE",
    behaviour: "a date range whose end is before its start",
    request: (f) => ({ query: records(f, range(f.day, addDays(f.day, -1))) }),
    data: "null",
    message: /^dateRange\.to \(\d{4}-\d{2}-\d{2}\) is before dateRange\.from \(\d{4}-\d{2}-\d{2}\)$/,
  },
  {
    code: "INVALID_PAGINATION",
    behaviour: "a page size of 999, below the minimum",
    request: (f) => ({ query: records(f, `${range(f.day, f.day)}, pagination: {pageSize: 999}`) }),
    data: "null",
    message: /^pagination\.pageSize must be between 1000 and 5000; got 999$/,
  },
  {
    code: "INVALID_PAGINATION",
    behaviour: "a page size of 5001, above the maximum",
    request: (f) => ({ query: aggregate(f, "metrics: [SPEND], pagination: {pageSize: 5001}") }),
    data: "null",
    message: /^pagination\.pageSize must be between 1000 and 5000; got 5001$/,
  },
  {
    code: "INVALID_PAGINATION",
    behaviour: "page 0",
    request: (f) => ({ query: records(f, `${range(f.day, f.day)}, pagination: {page: 0}`) }),
    data: "null",
    message: /^pagination\.page must be at least 1; got 0$/,
  },
  {
    code: "TOO_MANY_SORT_ENTRIES",
    behaviour: "three aggregate sort entries",
    request: (f) => ({
      query: aggregate(
        f,
        "metrics: [SPEND], groupBy: [DATE_DAY, MARKET, CHANNEL], sort: [{field: DATE_DAY, direction: DESC}, {field: MARKET, direction: ASC}, {field: CHANNEL, direction: ASC}]",
        "DATE_DAY MARKET CHANNEL TOTAL_SPEND",
      ),
    }),
    data: "null",
    message: /^sort has 3 entries; aggregate queries allow at most 2$/,
  },
  {
    code: "INVALID_SORT_FIELD",
    behaviour: "an aggregate sorted by a dimension it is not grouped by",
    request: (f) => ({ query: aggregate(f, "metrics: [SPEND], sort: [{field: MARKET, direction: ASC}]") }),
    data: "null",
    message: /^cannot sort by MARKET: it is not in groupBy$/,
  },
  {
    code: "INVALID_SORT_FIELD",
    behaviour: "an aggregate sorted by a TOTAL_ whose metric is not requested",
    request: (f) => ({
      query: aggregate(f, "metrics: [SPEND], sort: [{field: TOTAL_REVENUE, direction: DESC}]"),
    }),
    data: "null",
    message: /^cannot sort by TOTAL_REVENUE: its metric is not in metrics$/,
  },
  {
    code: "METRIC_NOT_REQUESTED",
    behaviour: "TOTAL_REVENUE selected with metrics [SPEND]",
    request: (f) => ({ query: aggregate(f, "metrics: [SPEND]", "TOTAL_SPEND TOTAL_REVENUE") }),
    data: "null",
    message: /^TOTAL_REVENUE is selected but REVENUE is not in metrics; add it to metrics$/,
  },
  {
    code: "METRIC_NOT_REQUESTED",
    behaviour: "TOTAL_REVENUE selected through a fragment under an alias",
    request: (f) => ({
      query: `${aggregate(f, "metrics: [SPEND]", "...Totals")} fragment Totals on MarketingAggregate { spend: TOTAL_SPEND revenue: TOTAL_REVENUE }`,
    }),
    data: "null",
    message: /^TOTAL_REVENUE is selected but REVENUE is not in metrics; add it to metrics$/,
  },
  {
    code: "METRIC_NOT_REQUESTED",
    behaviour: "TOTAL_CLICKS selected in an inline fragment included by a true variable",
    request: (f) => ({
      query: `query($withClicks: Boolean!) { marketingAggregate(clientId: "${f.clientId}", ${range(f.day, f.day)}, metrics: [SPEND]) { TOTAL_SPEND ... @include(if: $withClicks) { TOTAL_CLICKS } } }`,
      variables: { withClicks: true },
    }),
    data: "null",
    message: /^TOTAL_CLICKS is selected but CLICKS is not in metrics; add it to metrics$/,
  },
  beforeFirstRate(
    "records converted on a day before the first FX rate",
    (args) => `{ marketingRecords(${args}, currency: EUR) { recordId spend } }`,
  ),
  beforeFirstRate(
    "an aggregate converted on a day before the first FX rate",
    (args) => `{ marketingAggregate(${args}, metrics: [REVENUE], currency: USD) { TOTAL_REVENUE } }`,
  ),
  {
    code: "INVALID_DATA_VERSION",
    behaviour: "changes since a version of another region",
    request: (f) => ({
      query: `{ marketingDataChanges(clientId: "${f.clientId}", ${range(f.day, f.day)}, since: "us.1") { dataVersion } }`,
    }),
    data: "null",
    message:
      /^since \("us\.1"\) is not a data version of region uk: pass a dataVersion this region returned, or null for every day$/,
  },
  {
    code: "INVALID_DATA_VERSION",
    behaviour: "changes since a version this region has not issued yet",
    request: (f) => ({
      query: `{ marketingDataChanges(clientId: "${f.clientId}", ${range(f.day, f.day)}, since: "uk.999999999") { dataVersion } }`,
    }),
    data: "null",
    message: /^since \("uk\.999999999"\) is later than the brand's current data version \(uk\.\d+\)$/,
  },
  {
    code: "QUERY_TOO_COMPLEX",
    behaviour: "a query with more aliases than allowed",
    request: (f) => ({
      query: records(
        f,
        range(f.day, f.day),
        Array.from({ length: 16 }, (_, index) => `id${index}: recordId`).join(" "),
      ),
    }),
    data: "absent",
    message: /^query uses 16 aliases; at most 15$/,
  },
  {
    code: "QUERY_TOO_COMPLEX",
    behaviour: "a document of more than 2000 tokens (the parser's own limit)",
    request: (f) => ({
      query: records(f, `${range(f.day, f.day)}, filter: {markets: [${'"GB" '.repeat(2000)}]}`),
    }),
    data: "absent",
    message: /^the query has more than 2000 tokens; at most 2000 are allowed$/,
  },
  {
    code: "QUERY_TOO_COMPLEX",
    behaviour: "a field repeated so often that graphql-js gives up validating it",
    request: () => ({ query: `{ ${"__typename ".repeat(1500)}}` }),
    data: "absent",
    message: /^the query is too complex to validate: too many overlapping fields or fragment spreads$/,
  },
];

/** Asserts that an error body carries no stack trace or source location of the server. */
function assertNoStackTrace(text: string): void {
  assert.doesNotMatch(text, /\bat [^\s"]+ \(|\bat (?:async )?[^\s"]*\.[cm]?[jt]s:\d+|"stack"|node:internal/);
}

describe("query-level errors over HTTP", () => {
  let region: TestRegion;
  let fixture: Fixture;
  const tokens: Record<"demo" | "early", string> = { demo: "", early: "" };
  const answered: RawResponse[] = [];

  before(async () => {
    region = await startTestRegion({ days: DATA_DAYS });
    const store = region.service.store;
    const day = addDays(region.today, -5);
    // Well before the demo's first FX rate (DATA_DAYS + 10 days ago): no rate exists on or before it.
    const earlyDay = addDays(region.today, -DATA_DAYS - 60);
    await store.createBrand({ brandId: EARLY_BRAND, name: "Before FX", createdAt: new Date() });
    await store.addGrants(EARLY_BRAND, { markets: ["GB"], dataSources: ["google_ads"] });
    tokens.early = await region.newAppToken({
      appClientId: EARLY_APP,
      brandId: EARLY_BRAND,
      name: "Before FX",
    });
    await store.replaceRecords(EARLY_BRAND, [
      {
        recordId: "before-fx-1",
        date: earlyDay,
        market: "GB",
        dataSource: "google_ads",
        channel: "search",
        campaignId: "c-1",
        campaignName: "Launch",
        impressions: 1000,
        clicks: 40,
        spendE4: 123_4500n,
        conversionsE4: 2_0000n,
        revenueE4: 456_7800n,
        currency: "GBP",
      },
    ]);
    tokens.demo = await region.token();
    fixture = { clientId: region.credentials.apps[0]!.brandClientId, day, earlyDay };
  });
  after(() => region.close());

  async function send(request: GraphQLRequest): Promise<RawResponse> {
    const response = await region.inject({
      method: "POST",
      url: "/graphql",
      headers: {
        authorization: `Bearer ${tokens[request.as ?? "demo"]}`,
        "content-type": "application/json",
      },
      payload: JSON.stringify({
        query: request.query,
        variables: request.variables,
        operationName: request.operationName,
      }),
    });
    const raw = { status: response.statusCode, text: response.body, body: response.json() };
    answered.push(raw);
    return raw;
  }

  for (const entry of CASES) {
    it(`answers ${entry.code} (200) to ${entry.behaviour}`, async () => {
      const request = entry.request(fixture);
      const response = await send(request);
      assert.equal(response.status, 200, response.text);
      const errors = response.body.errors ?? [];
      assert.equal(errors.length, 1, response.text);
      const [error] = errors;
      assert.deepEqual(error!.extensions, { code: entry.code });
      assert.match(error!.message, entry.message);
      assert.deepEqual(
        Object.keys(error!).filter((key) => !["message", "locations", "path", "extensions"].includes(key)),
        [],
      );
      if (entry.data === "absent") {
        assert.equal("data" in response.body, false, `no data member for a request error: ${response.text}`);
        assert.equal(error!.path, undefined);
      } else {
        assert.equal(response.body.data, null, response.text);
        const root = /\{\s*(\w+)\(/.exec(request.query)?.[1];
        assert.deepEqual(error!.path, [root]);
      }
      assert.equal(response.body.extensions, undefined);
    });
  }

  describe("the same answer from graphql-js's first run and graphql-jit's compiled run", () => {
    // Mercurius runs a query string with graphql-js JIT_AFTER_RUNS times, then compiles it with
    // graphql-jit (which coerces variables its own way); a comment makes each string new here.
    for (const entry of CASES) {
      it(`answers ${entry.code} on every run to ${entry.behaviour}`, async () => {
        const request = entry.request(fixture);
        const repeated = { ...request, query: `${request.query}\n# sent ${JIT_AFTER_RUNS + 2} times` };
        const runs: RawResponse[] = [];
        for (let run = 0; run < JIT_AFTER_RUNS + 2; run += 1) runs.push(await send(repeated));
        const [first] = runs;
        assert.deepEqual(first!.body.errors?.[0]?.extensions, { code: entry.code }, first!.text);
        for (const later of runs.slice(1)) {
          assert.equal(later.status, first!.status);
          assert.deepEqual(later.body, first!.body);
        }
      });
    }
  });

  it("refuses a mutation as execution starts: GRAPHQL_VALIDATION_FAILED, data null, no path, on every run", async () => {
    for (let run = 0; run < JIT_AFTER_RUNS + 2; run += 1) {
      const response = await send({ query: "mutation { x }" });
      assert.equal(response.status, 200, response.text);
      assert.deepEqual(response.body, {
        data: null,
        errors: [
          {
            message: "Schema is not configured to execute mutation operation.",
            extensions: { code: "GRAPHQL_VALIDATION_FAILED" },
            locations: [{ line: 1, column: 1 }],
          },
        ],
      });
    }
  });

  describe("values at the limits are accepted", () => {
    it("accepts a date range of exactly 90 days counting both ends", async () => {
      const response = await send({ query: records(fixture, range(addDays(fixture.day, -89), fixture.day)) });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.errors, undefined, response.text);
      const rows = response.body.data?.["marketingRecords"] as unknown[] | undefined;
      assert.equal(rows?.length, 1000);
    });

    for (const pageSize of [1000, 5000]) {
      it(`accepts a page size of ${pageSize}`, async () => {
        const response = await send({
          query: records(fixture, `${range(fixture.day, fixture.day)}, pagination: {pageSize: ${pageSize}}`),
        });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.errors, undefined, response.text);
        const pageInfo = response.body.extensions?.pageInfo?.["marketingRecords"] as Record<string, unknown>;
        assert.equal(pageInfo["page"], 1);
        assert.equal(pageInfo["pageSize"], pageSize);
      });
    }

    it("reads explicit null pagination fields as the defaults (page 1, pageSize 1000)", async () => {
      const response = await send({
        query: `query($page: Int, $size: Int) { marketingRecords(clientId: "${fixture.clientId}", ${range(addDays(fixture.day, -1), fixture.day)}, pagination: {page: $page, pageSize: $size}) { recordId } }`,
        variables: { page: null, size: null },
      });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.errors, undefined, response.text);
      const pageInfo = response.body.extensions?.pageInfo?.["marketingRecords"] as Record<string, unknown>;
      assert.equal(pageInfo["page"], 1);
      assert.equal(pageInfo["pageSize"], 1000);
    });

    it("does not count a TOTAL_ field skipped by @skip or @include as selected", async () => {
      const response = await send({
        query: `query($withRevenue: Boolean!) { marketingAggregate(clientId: "${fixture.clientId}", ${range(fixture.day, fixture.day)}, metrics: [SPEND], groupBy: []) { TOTAL_SPEND TOTAL_REVENUE @include(if: $withRevenue) TOTAL_CLICKS @skip(if: true) } }`,
        variables: { withRevenue: false },
      });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.errors, undefined, response.text);
      const rows = response.body.data?.["marketingAggregate"] as Record<string, unknown>[];
      assert.equal(rows.length, 1);
      assert.deepEqual(Object.keys(rows[0]!), ["TOTAL_SPEND"]);
    });

    it("serves records before the first FX rate in their own currency (no conversion needed)", async () => {
      const response = await send({
        query: `{ marketingRecords(clientId: "${EARLY_BRAND}", ${range(fixture.earlyDay, fixture.earlyDay)}, currency: GBP) { recordId spend revenue currency } }`,
        as: "early",
      });
      assert.equal(response.status, 200, response.text);
      assert.deepEqual(response.body.data, {
        marketingRecords: [{ recordId: "before-fx-1", spend: 123.45, revenue: 456.78, currency: "GBP" }],
      });
    });
  });

  it("exercises every catalogue code answered with 200 in the table above", () => {
    const queryLevel = Object.entries(GRAPHQL_ERROR_CODES)
      .filter(([, entry]) => entry.status === 200)
      .map(([code]) => code)
      .sort();
    const tested = [...new Set(CASES.map((entry) => entry.code))].sort();
    assert.deepEqual(tested, queryLevel);
  });

  it("never puts a stack trace in any response body", () => {
    assert.ok(answered.length >= CASES.length);
    for (const response of answered) assertNoStackTrace(response.text);
  });
});
