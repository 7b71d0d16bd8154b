/**
 * Health endpoints and Prometheus metrics (docs/observability.md): `/livez` and `/readyz` on the
 * public listener, `GET /metrics` on the admin listener without the admin token, counting what
 * the service did — requests by route and status, latency, tokens issued and refused, rows
 * served, 429s — in a registry of each service's own.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import {
  basicOf,
  daysAgo,
  deleteKeys,
  graphqlOn,
  REDIS_URL,
  requestToken,
  type SharedRegion,
  startSharedRegion,
  tokenFrom,
  uniqueRegion,
} from "@mdq/test-support";
import { QUESTION_CLASSES } from "../src/observability/question-class.js";
import type { Service } from "../src/server.js";

const RATE_LIMIT = 40;
const RECORDS = `query($c: ID!, $from: Date!, $to: Date!) {
  marketingRecords(clientId: $c, dateRange: {from: $from, to: $to}) { recordId }
}`;
const AGGREGATE = `query($c: ID!, $from: Date!, $to: Date!) {
  marketingAggregate(clientId: $c, dateRange: {from: $from, to: $to}, metrics: [CLICKS], groupBy: [MARKET]) { MARKET }
}`;

async function scrape(service: Service): Promise<string> {
  const response = await service.adminApp.inject({ method: "GET", url: "/metrics" });
  assert.equal(response.statusCode, 200, response.body);
  return response.body;
}

/** The value of one sample line of the exposition, e.g. `mdq_tokens_issued_total`. */
function sample(exposition: string, series: string): number | undefined {
  const line = exposition.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("health endpoints", () => {
  let region: SharedRegion;
  let withRedis: SharedRegion;
  let service: Service;
  let redisService: Service;

  before(async () => {
    region = await startSharedRegion({ days: 2 });
    service = await region.instance();
    withRedis = await startSharedRegion({ days: 2, config: { region: uniqueRegion(), redisUrl: REDIS_URL } });
    redisService = await withRedis.instance();
    await redisService.redis!.connected();
  });
  after(async () => {
    await region.close();
    await withRedis.close();
    await deleteKeys(`mdq:${withRedis.config.region}:`);
  });

  it("answers /livez with 200 while the process runs", async () => {
    const live = await service.app.inject({ method: "GET", url: "/livez" });
    assert.equal(live.statusCode, 200);
    assert.deepEqual(live.json(), { status: "ok" });
  });

  it("answers /readyz with 200 when the store answers, naming what it checked", async () => {
    const ready = await service.app.inject({ method: "GET", url: "/readyz" });
    assert.equal(ready.statusCode, 200);
    assert.deepEqual(ready.json(), { status: "ready", region: "uk", checks: { store: "up" } });
  });

  it("checks Redis too when it is configured", async () => {
    const ready = await redisService.app.inject({ method: "GET", url: "/readyz" });
    assert.equal(ready.statusCode, 200);
    assert.deepEqual(ready.json(), {
      status: "ready",
      region: withRedis.config.region,
      checks: { store: "up", redis: "up" },
    });
  });

  it("does not count health checks against the rate limit", async () => {
    const ready = await service.app.inject({ method: "GET", url: "/readyz" });
    assert.equal(ready.headers["ratelimit"], undefined);
  });
});

describe("GET /metrics on the admin listener", () => {
  let region: SharedRegion;
  let service: Service;
  let other: Service;

  before(async () => {
    region = await startSharedRegion({ days: 5, config: { rateLimitMax: RATE_LIMIT } });
    service = await region.instance();
    other = await region.instance();
  });
  after(() => region.close());

  it("is served without the admin token, in the Prometheus text format, with the process metrics", async () => {
    const response = await service.adminApp.inject({ method: "GET", url: "/metrics" });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers["content-type"]), /^text\/plain; version=0\.0\.4/);
    assert.match(response.body, /^# TYPE mdq_http_requests_total counter$/m);
    assert.match(response.body, /^mdq_service_info\{region="uk",engine="duckdb"\} 1$/m);
    assert.match(response.body, /^process_cpu_user_seconds_total /m);
    assert.match(response.body, /^nodejs_heap_size_used_bytes /m);
    // Without Redis there is no Redis to report down.
    assert.doesNotMatch(response.body, /^mdq_redis_up/m);
  });

  it("leaves every other admin route behind the admin token", async () => {
    const status = await service.adminApp.inject({ method: "GET", url: "/admin/status" });
    assert.equal(status.statusCode, 401);
    const wrongMethod = await service.adminApp.inject({ method: "POST", url: "/metrics" });
    assert.equal(wrongMethod.statusCode, 401);
  });

  it("counts tokens issued and token requests refused, by RFC 6749 error", async () => {
    const app = region.credentials.apps[0]!;
    await tokenFrom(service, app);
    await tokenFrom(service, app);
    await requestToken(service, { ...app, appClientSecret: "wrong" });
    const unsupported = await service.app.inject({
      method: "POST",
      url: "/oauth2/token",
      headers: { authorization: basicOf(app), "content-type": "application/x-www-form-urlencoded" },
      payload: "grant_type=password&scope=api_data%2Fread",
    });
    assert.equal(unsupported.statusCode, 400);
    const exposition = await scrape(service);
    assert.equal(sample(exposition, "mdq_tokens_issued_total"), 2);
    assert.equal(sample(exposition, 'mdq_token_requests_failed_total{error="invalid_client"}'), 1);
    assert.equal(sample(exposition, 'mdq_token_requests_failed_total{error="unsupported_grant_type"}'), 1);
  });

  it("counts the rows served by records and aggregate queries", async () => {
    const app = region.credentials.apps[0]!;
    const token = await tokenFrom(service, app);
    const variables = { c: app.brandClientId, from: daysAgo(3), to: daysAgo(1) };
    const records = await graphqlOn(service, token, RECORDS, variables);
    const aggregate = await graphqlOn(service, token, AGGREGATE, variables);
    const recordRows = (records.json() as { data: { marketingRecords: unknown[] } }).data.marketingRecords
      .length;
    const aggregateRows = (aggregate.json() as { data: { marketingAggregate: unknown[] } }).data
      .marketingAggregate.length;
    assert.ok(recordRows > 0 && aggregateRows > 0);
    const exposition = await scrape(service);
    assert.equal(sample(exposition, 'mdq_rows_served_total{query="records"}'), recordRows);
    assert.equal(sample(exposition, 'mdq_rows_served_total{query="aggregate"}'), aggregateRows);
  });

  it("counts requests by route pattern, method and status, and times them by route", async () => {
    const before = await scrape(service);
    const okSeries = 'mdq_http_requests_total{route="/graphql",method="POST",status="200"}';
    const unauthorized = 'mdq_http_requests_total{route="/graphql",method="POST",status="401"}';
    const app = region.credentials.apps[0]!;
    const token = await tokenFrom(service, app);
    await graphqlOn(service, token, RECORDS, { c: app.brandClientId, from: daysAgo(2), to: daysAgo(1) });
    await graphqlOn(service, "not-a-token", RECORDS, {
      c: app.brandClientId,
      from: daysAgo(2),
      to: daysAgo(1),
    });
    await service.app.inject({ method: "GET", url: "/no/such/path/12345" });
    const after = await scrape(service);
    assert.equal((sample(after, okSeries) ?? 0) - (sample(before, okSeries) ?? 0), 1);
    assert.equal((sample(after, unauthorized) ?? 0) - (sample(before, unauthorized) ?? 0), 1);
    // Unknown paths share one label value: they cannot grow the label set.
    assert.ok(
      (sample(after, 'mdq_http_requests_total{route="unmatched",method="GET",status="404"}') ?? 0) >= 1,
    );
    assert.doesNotMatch(after, /no\/such\/path/);
    const count = 'mdq_http_request_duration_seconds_count{route="/graphql"}';
    assert.equal((sample(after, count) ?? 0) - (sample(before, count) ?? 0), 2);
    assert.match(after, /^mdq_http_request_duration_seconds_bucket\{le="0\.005",route="\/graphql"\} \d+$/m);
  });

  it("times each request by the question it asks, the GraphQL ones by their root fields", async () => {
    const app = region.credentials.apps[0]!;
    const c = app.brandClientId;
    const range = { c, from: daysAgo(3), to: daysAgo(1) };
    const series = (name: string) => `mdq_question_duration_seconds_count{class="${name}"}`;
    const before = await scrape(service);
    const token = await tokenFrom(service, app);
    const asked = {
      readiness: await graphqlOn(
        service,
        token,
        "query($c: ID!) { marketingDataReadiness(clientId: $c) { status } }",
        { c },
      ),
      changes: await graphqlOn(
        service,
        token,
        "query($c: ID!, $from: Date!, $to: Date!) { marketingDataChanges(clientId: $c, dateRange: {from: $from, to: $to}) { dataVersion } }",
        range,
      ),
      // Through a fragment, with __typename beside: still the one question.
      myAccess: await graphqlOn(
        service,
        token,
        "query($c: ID!) { __typename ...access } fragment access on Query { myAccess(clientId: $c) { brandId } }",
        { c },
      ),
      records: await graphqlOn(service, token, RECORDS, range),
      aggregate: await graphqlOn(service, token, AGGREGATE, range),
      // Two questions in one document, and a request refused before its question is known.
      mixed: await graphqlOn(
        service,
        token,
        "query($c: ID!) { myAccess(clientId: $c) { brandId } marketingDataReadiness(clientId: $c) { status } }",
        { c },
      ),
      unauthorized: await graphqlOn(service, "not-a-token", RECORDS, range),
    };
    for (const [name, answer] of Object.entries(asked))
      assert.equal(answer.statusCode, name === "unauthorized" ? 401 : 200, `${name}: ${answer.body}`);
    const exported = await service.app.inject({
      method: "GET",
      url: `/export/marketing-records?clientId=${c}&from=${range.from}&to=${range.to}&format=csv`,
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(exported.statusCode, 200, exported.body);
    await service.app.inject({ method: "GET", url: "/livez" });
    const after = await scrape(service);
    const asks = (name: string) => (sample(after, series(name)) ?? 0) - (sample(before, series(name)) ?? 0);
    assert.deepEqual(Object.fromEntries(QUESTION_CLASSES.map((name) => [name, asks(name)])), {
      token: 1,
      readiness: 1,
      changes: 1,
      myAccess: 1,
      records: 1,
      aggregate: 1,
      export: 1,
      other: 3,
    });
    // Buckets fine enough to read CONTRACT §8's 50 ms.
    for (const le of ["0.005", "0.01", "0.02", "0.03", "0.05", "0.075", "0.1"])
      assert.match(
        after,
        new RegExp(`^mdq_question_duration_seconds_bucket\\{le="${le}",class="token"\\} \\d+$`, "m"),
      );
  });

  it("lists the question classes in docs/observability.md, in their order", async () => {
    const docs = await readFile(
      fileURLToPath(new URL("../../../../docs/observability.md", import.meta.url)),
      "utf8",
    );
    const row = docs.split("\n").find((line) => line.startsWith("| `mdq_question_duration_seconds`"));
    assert.ok(row, "a row for mdq_question_duration_seconds");
    assert.ok(row.includes(`\`class\` (${QUESTION_CLASSES.map((name) => `\`${name}\``).join(", ")})`), row);
  });

  it("counts 429s by endpoint, and never names a client address", async () => {
    const app = region.credentials.apps[0]!;
    const token = await tokenFrom(service, app);
    const address = "192.0.2.77";
    let limited = 0;
    for (let sent = 0; sent <= RATE_LIMIT; sent += 1) {
      const answer = await service.app.inject({
        method: "POST",
        url: "/graphql",
        remoteAddress: address,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        payload: JSON.stringify({ query: "{ __typename }" }),
      });
      if (answer.statusCode === 429) limited += 1;
    }
    assert.equal(limited, 1);
    const exposition = await scrape(service);
    assert.equal(sample(exposition, 'mdq_rate_limited_total{endpoint="graphql"}'), 1);
    assert.ok(!exposition.includes(address));
  });

  it("keeps each service's counts apart, even in one process", async () => {
    const exposition = await scrape(other);
    assert.equal(sample(exposition, "mdq_tokens_issued_total"), 0);
    assert.equal(sample(exposition, 'mdq_rows_served_total{query="records"}'), undefined);
    assert.match(exposition, /^process_cpu_user_seconds_total /m);
  });
});
