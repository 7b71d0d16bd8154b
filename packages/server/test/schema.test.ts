import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { startTestRegion, type TestRegion } from "@mdq/test-support";
import {
  astFromValue,
  buildClientSchema,
  buildSchema,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLSchema,
  getIntrospectionQuery,
  type IntrospectionQuery,
  isEnumType,
  isInputObjectType,
  isNonNullType,
  isObjectType,
  print,
  printSchema,
} from "graphql";
import { typeDefs } from "../src/graphql/schema.js";

/** The committed SDL, at the package root (this file runs from dist/test). */
const SCHEMA_FILE = new URL("../../schema.graphql", import.meta.url);
const REGENERATE =
  "packages/server/schema.graphql is out of date; regenerate it with " +
  "`npm run build && node packages/server/scripts/print-schema.mjs` and commit the result";

/** `name: Type = default`, as SDL writes an argument or input field. */
function signature(entry: GraphQLArgument | GraphQLInputField): string {
  const value = entry.defaultValue === undefined ? undefined : astFromValue(entry.defaultValue, entry.type);
  return `${entry.name}: ${String(entry.type)}${value ? ` = ${print(value)}` : ""}`;
}

function fieldSignature(field: GraphQLField<unknown, unknown>): string {
  return `${field.name}: ${String(field.type)}`;
}

function enumValues(schema: GraphQLSchema, name: string): string[] {
  const type = schema.getType(name);
  assert.ok(isEnumType(type), `${name} is an enum`);
  return type.getValues().map((value) => value.name);
}

function inputFields(schema: GraphQLSchema, name: string): string[] {
  const type = schema.getType(name);
  assert.ok(isInputObjectType(type), `${name} is an input type`);
  return Object.values(type.getFields()).map(signature);
}

function objectFields(schema: GraphQLSchema, name: string): string[] {
  const type = schema.getType(name);
  assert.ok(isObjectType(type), `${name} is an object type`);
  return Object.values(type.getFields()).map(fieldSignature);
}

function includesAll(actual: readonly string[], expected: readonly string[], what: string): void {
  const missing = expected.filter((entry) => !actual.includes(entry));
  assert.deepEqual(missing, [], `${what} lacks ${missing.join(", ")}; it has ${actual.join(", ")}`);
}

/** CONTRACT §3: the three queries, each argument with its type and default. */
const QUERIES = {
  marketingDataReadiness: {
    args: ["clientId: ID!", "date: Date"],
    type: "MarketingDataReadiness!",
  },
  marketingRecords: {
    args: [
      "clientId: ID!",
      "dateRange: DateRangeInput!",
      "currency: Currency = EUR",
      "pagination: PaginationInput",
      "sort: [RecordSortInput!]",
      "filter: MarketingFilterInput",
    ],
    type: "[MarketingRecord!]!",
  },
  marketingAggregate: {
    args: [
      "clientId: ID!",
      "dateRange: DateRangeInput!",
      "metrics: [Metric!]!",
      "groupBy: [Dimension!] = [DATE_DAY]",
      "currency: Currency = EUR",
      "pagination: PaginationInput",
      "sort: [AggregateSortInput!]",
      "filter: MarketingFilterInput",
    ],
    type: "[MarketingAggregate!]!",
  },
} as const;

const DIMENSIONS = ["DATE_DAY", "DATE_WEEK", "DATE_MONTH", "MARKET", "DATA_SOURCE", "CHANNEL", "CAMPAIGN_ID"];
const METRICS = ["IMPRESSIONS", "CLICKS", "SPEND", "CONVERSIONS", "REVENUE"];
const TOTALS = METRICS.map((metric) => `TOTAL_${metric}`);

describe("the GraphQL schema", () => {
  let region: TestRegion;
  let introspection: IntrospectionQuery;
  let live: GraphQLSchema;
  before(async () => {
    region = await startTestRegion({ days: 10 });
    const response = await region.graphql(getIntrospectionQuery());
    assert.equal(response.status, 200);
    assert.equal(response.body.errors, undefined);
    introspection = response.body.data as unknown as IntrospectionQuery;
    live = buildClientSchema(introspection);
  });
  after(() => region.close());

  it("is what the committed schema.graphql says, as the running service introspects it", async () => {
    const committed = await readFile(SCHEMA_FILE, "utf8");
    assert.equal(printSchema(live).trim(), committed.trim(), REGENERATE);
  });

  it("introspects exactly as the SDL in src/graphql/schema.ts prints (no description or type drifts)", () => {
    assert.equal(printSchema(live), printSchema(buildSchema(typeDefs)), REGENERATE);
  });

  it("has the fixed enums of CONTRACT §3 with their values", () => {
    assert.deepEqual(enumValues(live, "ReadinessStatus"), ["READY", "NOT_READY"]);
    assert.deepEqual(enumValues(live, "SortDirection"), ["ASC", "DESC"]);
    assert.deepEqual(enumValues(live, "Metric"), METRICS);
    assert.deepEqual(enumValues(live, "Dimension"), DIMENSIONS);
    includesAll(enumValues(live, "Currency"), ["EUR", "GBP", "USD"], "Currency");
    includesAll(
      enumValues(live, "RecordSortField"),
      ["DATE_DAY", "MARKET", "DATA_SOURCE", "CHANNEL", "CAMPAIGN_ID", ...METRICS],
      "RecordSortField",
    );
    includesAll(enumValues(live, "AggregateSortField"), [...DIMENSIONS, ...TOTALS], "AggregateSortField");
  });

  it("has the fixed scalars and input types of CONTRACT §3", () => {
    assert.equal(live.getType("Date")?.toString(), "Date");
    assert.equal(live.getType("DateTime")?.toString(), "DateTime");
    includesAll(inputFields(live, "DateRangeInput"), ["from: Date!", "to: Date!"], "DateRangeInput");
    includesAll(
      inputFields(live, "PaginationInput"),
      ["page: Int = 1", "pageSize: Int = 1000"],
      "PaginationInput",
    );
    includesAll(
      inputFields(live, "RecordSortInput"),
      ["field: RecordSortField!", "direction: SortDirection!"],
      "RecordSortInput",
    );
    includesAll(
      inputFields(live, "AggregateSortInput"),
      ["field: AggregateSortField!", "direction: SortDirection!"],
      "AggregateSortInput",
    );
    includesAll(
      inputFields(live, "MarketingFilterInput"),
      ["markets: [String!]", "dataSources: [String!]", "channels: [String!]", "campaignIds: [ID!]"],
      "MarketingFilterInput",
    );
  });

  it("has the three queries with their argument names, types and defaults (currency EUR, groupBy [DATE_DAY])", () => {
    const fields = live.getQueryType()?.getFields() ?? {};
    for (const [name, expected] of Object.entries(QUERIES)) {
      const field = fields[name];
      assert.ok(field, `Query.${name} exists`);
      assert.equal(String(field.type), expected.type, `Query.${name} returns ${expected.type}`);
      const args = field.args.map(signature);
      includesAll(args, expected.args, `Query.${name}`);
      // Adding arguments is welcome, but a new required one would break every existing client.
      const addedRequired = field.args
        .filter((arg) => !expected.args.some((entry) => entry.startsWith(`${arg.name}:`)))
        .filter((arg) => isNonNullType(arg.type) && arg.defaultValue === undefined)
        .map((arg) => arg.name);
      assert.deepEqual(addedRequired, [], `Query.${name} has new required arguments`);
    }
  });

  it("reports the argument defaults in introspection as GraphQL literals", () => {
    const query = introspection.__schema.types.find((type) => type.name === "Query");
    assert.ok(query && query.kind === "OBJECT");
    const defaults = Object.fromEntries(
      query.fields.flatMap((field) =>
        field.args
          .filter((arg) => arg.defaultValue !== null)
          .map((arg) => [`${field.name}.${arg.name}`, arg.defaultValue]),
      ),
    );
    assert.deepEqual(defaults, {
      "marketingRecords.currency": "EUR",
      "marketingAggregate.groupBy": "[DATE_DAY]",
      "marketingAggregate.currency": "EUR",
    });
  });

  it("has the fixed output types of CONTRACT §3", () => {
    includesAll(
      objectFields(live, "MarketingDataReadiness"),
      ["status: ReadinessStatus!", "lastProcessedAt: DateTime", "date: Date!", "availableThrough: Date"],
      "MarketingDataReadiness",
    );
    includesAll(
      objectFields(live, "MarketingRecord"),
      [
        "recordId: ID!",
        "date: Date!",
        "market: String!",
        "dataSource: String!",
        "channel: String!",
        "campaignId: ID!",
        "campaignName: String!",
        "impressions: Int!",
        "clicks: Int!",
        "spend: Float!",
        "conversions: Float!",
        "revenue: Float!",
        "currency: Currency!",
      ],
      "MarketingRecord",
    );
    includesAll(
      objectFields(live, "MarketingAggregate"),
      [
        "DATE_DAY: Date",
        "DATE_WEEK: Date",
        "DATE_MONTH: Date",
        "MARKET: String",
        "DATA_SOURCE: String",
        "CHANNEL: String",
        "CAMPAIGN_ID: ID",
        ...TOTALS.map((name) => `${name}: Float`),
        "currency: Currency!",
      ],
      "MarketingAggregate",
    );
  });

  it("is read-only: no mutations and no subscriptions", () => {
    assert.equal(introspection.__schema.mutationType, null);
    assert.equal(introspection.__schema.subscriptionType, null);
  });
});
