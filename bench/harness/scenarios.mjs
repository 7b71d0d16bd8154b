// The scenarios: which contenders answer each, the baseline its ratios are against, and the
// requests the load generator sends (the same question to every contender, in its own dialect).
import { WALK_CONTENDERS } from "./cold-walk.mjs";
import { aggregateBody, readinessBody, recordsBody } from "./queries.mjs";

/** The PostGraphile document of a records page: the same rows, through PostGraphile's own API. */
export function postgraphileRecordsBody({ brandId, from, to, markets, dataSources, page, pageSize }) {
  return JSON.stringify({
    query: `query($b: String!, $from: Date!, $to: Date!, $m: [String], $s: [String], $first: Int!, $offset: Int!) {
  benchRecordsPage(brand: $b, dayFrom: $from, dayTo: $to, markets: $m, sources: $s, first: $first, offset: $offset) {
    totalCount nodes { recordId date market dataSource channel campaignId campaignName impressions clicks spendE4 conversionsE4 revenueE4 currency }
  }
}`,
    variables: {
      b: brandId,
      from,
      to,
      m: markets,
      s: dataSources,
      first: pageSize,
      offset: (page - 1) * pageSize,
    },
  });
}

function graphqlRequest(body, token) {
  return {
    method: "POST",
    path: "/graphql",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body,
  };
}

/** The bearer token a contender's requests carry (yoga and the bare routes get MDQ-on-DuckDB's). */
function tokenFor(contender, context, appClientId) {
  const store = contender.startsWith("mdq-postgres") ? "postgres" : "duckdb";
  const tokens = context.tokens[store];
  return tokens[appClientId ?? Object.keys(tokens)[0]];
}

/** A records page as each contender is asked it. */
function recordsRequest(contender, context, page, pageSize) {
  const question = { ...context.question, page, pageSize };
  if (contender === "postgraphile") {
    return {
      method: "POST",
      path: "/graphql",
      headers: { "content-type": "application/json" },
      body: postgraphileRecordsBody(question),
    };
  }
  return graphqlRequest(recordsBody(question), tokenFor(contender, context));
}

const PAGE_CONTENDERS = [
  "mdq-duckdb",
  "mdq-duckdb-nocache",
  "mdq-postgres",
  "mdq-postgres-nocache",
  "bare-sql",
  "bare-memory",
  "yoga",
  "postgraphile",
];

/** Scenario definitions, in the order they run and print. */
export const SCENARIOS = {
  // Every page of a distinct query once, as a daily sync asks them (bench/harness/cold-walk.mjs):
  // measured by the walker, not autocannon; one table entry per page size.
  "cold-walk": {
    title: "cold walk: every page of a distinct query once",
    kind: "walk",
    contenders: WALK_CONTENDERS,
    baseline: "bare-memory",
  },
  "records-1000": {
    title: "repeated page (cache): records page 1, 1000 rows",
    contenders: PAGE_CONTENDERS,
    baseline: "bare-sql",
    requests: (contender, context) => [recordsRequest(contender, context, 1, 1000)],
  },
  "records-5000": {
    title: "repeated page (cache): records page 1, 5000 rows",
    contenders: PAGE_CONTENDERS,
    baseline: "bare-sql",
    requests: (contender, context) => [recordsRequest(contender, context, 1, 5000)],
  },
  "deep-page": {
    title: "repeated page (cache): deep page (page 50 × 1000)",
    contenders: PAGE_CONTENDERS,
    baseline: "bare-sql",
    requests: (contender, context) => [recordsRequest(contender, context, context.deepPage, 1000)],
  },
  aggregate: {
    title: "repeated page (cache): 90-day aggregate, day × market × source",
    contenders: PAGE_CONTENDERS.filter((contender) => contender !== "postgraphile"),
    baseline: "bare-sql",
    requests: (contender, context) => [
      graphqlRequest(aggregateBody(context.question), tokenFor(contender, context)),
    ],
  },
  token: {
    title: "token issuance (client_credentials, HTTP Basic)",
    contenders: ["mdq-duckdb", "mdq-postgres", "oidc"],
    baseline: "oidc",
    requests: (contender, context) => {
      const app = context.credentials[contender.startsWith("mdq-postgres") ? "postgres" : "duckdb"].apps[0];
      const basic = Buffer.from(`${app.appClientId}:${app.appClientSecret}`).toString("base64");
      return [
        {
          method: "POST",
          path: contender === "oidc" ? "/token" : "/oauth2/token",
          headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${basic}` },
          body: "grant_type=client_credentials&scope=api_data%2Fread",
        },
      ];
    },
  },
  "daily-sync": {
    title: "daily sync mix, every app of every brand",
    contenders: ["mdq-duckdb", "mdq-duckdb-nocache", "mdq-postgres", "mdq-postgres-nocache", "yoga"],
    baseline: "yoga",
    // Per app: is today ready? then every page (5000 rows) of the last 7 days, then 90-day totals.
    requests: (contender, context) =>
      context.syncPlan.flatMap(({ appClientId, brandId, pages }) => {
        const token = tokenFor(contender, context, appClientId);
        const window = { ...context.question, brandId, from: context.syncFrom };
        return [
          graphqlRequest(readinessBody({ brandId }), token),
          ...Array.from({ length: pages }, (_, index) =>
            graphqlRequest(recordsBody({ ...window, page: index + 1, pageSize: 5000 }), token),
          ),
          graphqlRequest(aggregateBody({ ...context.question, brandId }), token),
        ];
      }),
  },
  memory: {
    title: "memory: 50 concurrent 5000-row pages",
    contenders: ["mdq-duckdb", "mdq-duckdb-nocache", "mdq-postgres", "mdq-postgres-nocache"],
    baseline: null,
    connections: 50,
    rounds: 1,
    requests: (contender, context) => [recordsRequest(contender, context, 1, 5000)],
  },
};

/** The scenarios a plain `npm run bench` runs. */
export const DEFAULT_SCENARIOS = Object.keys(SCENARIOS);
