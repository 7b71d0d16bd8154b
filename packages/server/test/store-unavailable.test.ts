/**
 * A store that cannot answer (docs/observability.md, docs/errors.md): every request that needs it
 * gets 503 with `Retry-After` — `SERVICE_UNAVAILABLE` on GraphQL, `temporarily_unavailable` on the
 * token endpoint, `UNAVAILABLE` on the admin API — never a 500, never a stack trace or a
 * connection string; `/readyz` fails while `/livez` holds; and the service recovers by itself.
 * The store is a real PostgreSQL store whose database is cut off for real by a TCP gate; and a
 * real DuckDB store whose read needs more memory than its limit leaves (duckdb-errors.ts).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  createMigratedDatabase,
  daysAgo,
  graphqlOn,
  POSTGRES_HOST,
  POSTGRES_PORT,
  requestToken,
  startTcpGate,
  type TcpGate,
  type TestDatabase,
  tokenFrom,
  within,
} from "@mdq/test-support";
import type { LightMyRequestResponse } from "fastify";
import { ensureAdminToken } from "../src/admin/admin-token.js";
import { todayIn } from "../src/calendar.js";
import { type ConfigInput, loadConfig, type ServiceConfig } from "../src/config.js";
import { type DemoCredentials, seedDemoRegion } from "../src/demo/demo-seed.js";
import { issueAccessToken } from "../src/oauth/access-token.js";
import { buildService, type Service } from "../src/server.js";
import { type DuckDbStore, openDuckDbStore } from "../src/store/duckdb/duckdb-store.js";
import type { Store } from "../src/store/model/store.js";
import { openPostgresStore } from "../src/store/postgres/postgres-store.js";

const RECORDS = `query($c: ID!, $from: Date!, $to: Date!) {
  marketingRecords(clientId: $c, dateRange: {from: $from, to: $to}) { recordId }
}`;
/** Records sorted by converted spend: a Top-N over the window, money converted in SQL. */
const SORTED = `query($c: ID!, $from: Date!, $to: Date!) {
  marketingRecords(clientId: $c, dateRange: {from: $from, to: $to}, currency: JPY,
    sort: [{field: SPEND, direction: DESC}], pagination: {page: 15, pageSize: 1000}) { recordId spend }
}`;
/**
 * DuckDB's memory limit, in MB, that the sorted read below outgrows on one thread while the
 * service's own reads (apps, tokens) still fit: measured, 2 MB fails those, 6 MB fits the read.
 */
const MEMORY_MB = 3;
const STORE_MESSAGE =
  "the service cannot reach its database right now; retry after the number of seconds in Retry-After";

/** The service's configuration in these tests, with `extra` settings. */
function configOf(dataDir: string, extra: ConfigInput): ServiceConfig {
  return loadConfig(
    {},
    {
      region: "uk",
      authUrl: "http://auth.test",
      baseUrl: "http://api.test",
      logLevel: "silent",
      dataDir,
      ...extra,
    },
  );
}

/** The demo region seeded into `store`: `days` days ending yesterday. */
function seedRegion(store: Store, config: ServiceConfig, days: number): Promise<DemoCredentials> {
  return seedDemoRegion(store, {
    region: config.region,
    authUrl: config.authUrl,
    baseUrl: config.baseUrl,
    today: todayIn(config.timeZone),
    days,
  });
}

/** Nothing internal leaks: no stack frame, no connection string, no host of the database. */
function assertNothingLeaks(response: LightMyRequestResponse): void {
  assert.doesNotMatch(response.body, /postgres:|root@|127\.0\.0\.1|ECONN|at .*\.js|node_modules/);
}

describe("a service whose PostgreSQL store becomes unreachable", () => {
  let database: TestDatabase;
  let gate: TcpGate;
  let store: Store;
  let service: Service;
  let dataDir: string;
  let credentials: DemoCredentials;
  /** A token of an app whose state the service has cached (authCacheSeconds 60). */
  let cachedToken: string;
  let variables: Record<string, string>;

  before(async () => {
    database = await createMigratedDatabase("unavailable");
    gate = await startTcpGate(POSTGRES_HOST, POSTGRES_PORT);
    store = await openPostgresStore({
      url: database.urlVia(gate.address),
      poolSize: 4,
      connectTimeoutMs: 1000,
    });
    dataDir = await mkdtemp(join(tmpdir(), "mdq-unavailable-"));
    const config = configOf(dataDir, { authCacheSeconds: 60, databaseUrl: database.urlVia(gate.address) });
    credentials = await seedRegion(store, config, 5);
    service = await buildService(config, { store });
    const app = credentials.apps[0]!;
    cachedToken = await tokenFrom(service, app);
    variables = { c: app.brandClientId, from: daysAgo(3), to: daysAgo(1) };
    const warm = await graphqlOn(service, cachedToken, RECORDS, variables);
    assert.equal(warm.statusCode, 200, warm.body);
  });
  after(async () => {
    await service?.app.close();
    await store?.close();
    await gate?.close();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  describe("while the database is cut off", () => {
    before(() => gate.block());
    after(() => gate.open());

    it("answers a GraphQL query whose execution needs the store with 503 SERVICE_UNAVAILABLE and Retry-After", async () => {
      const answer = await graphqlOn(service, cachedToken, RECORDS, variables);
      assert.equal(answer.statusCode, 503, answer.body);
      assert.equal(answer.headers["retry-after"], "5");
      // Execution started, so `data` is null (the root field is non-null), as for any failed field.
      assert.deepEqual(answer.json(), {
        data: null,
        errors: [
          {
            message: STORE_MESSAGE,
            locations: [{ line: 2, column: 3 }],
            path: ["marketingRecords"],
            extensions: { code: "SERVICE_UNAVAILABLE" },
          },
        ],
      });
      assertNothingLeaks(answer);
    });

    it("answers a GraphQL request whose authentication needs the store with 503 before execution", async () => {
      const app = credentials.apps[1]!;
      // A valid token of an app this service has not seen yet: its state must be read from the store.
      const signed = await issueAccessToken(
        service.keys,
        { authUrl: "http://auth.test", baseUrl: "http://api.test", region: "uk" },
        { appClientId: app.appClientId, brandId: app.brandClientId },
      );
      const answer = await graphqlOn(service, signed, RECORDS, { ...variables, c: app.brandClientId });
      assert.equal(answer.statusCode, 503, answer.body);
      assert.equal(answer.headers["retry-after"], "5");
      assert.deepEqual(answer.json(), {
        errors: [{ message: STORE_MESSAGE, extensions: { code: "SERVICE_UNAVAILABLE" } }],
      });
      assertNothingLeaks(answer);
    });

    it("answers the token endpoint with 503 temporarily_unavailable, Retry-After and no-store", async () => {
      const answer = await requestToken(service, credentials.apps[2]!);
      assert.equal(answer.statusCode, 503, answer.body);
      assert.equal(answer.headers["retry-after"], "5");
      assert.equal(answer.headers["cache-control"], "no-store");
      assert.equal(answer.headers["pragma"], "no-cache");
      assert.deepEqual(answer.json(), { error: "temporarily_unavailable", error_description: STORE_MESSAGE });
      assertNothingLeaks(answer);
    });

    it("answers the admin API with 503 UNAVAILABLE", async () => {
      const answer = await service.adminApp.inject({
        method: "GET",
        url: "/admin/brands",
        headers: { authorization: `Bearer ${await ensureAdminToken(dataDir)}` },
      });
      assert.equal(answer.statusCode, 503, answer.body);
      assert.equal(answer.headers["retry-after"], "5");
      assert.deepEqual(answer.json(), { error: { code: "UNAVAILABLE", message: STORE_MESSAGE } });
    });

    it("is not ready, but alive", async () => {
      const ready = await service.app.inject({ method: "GET", url: "/readyz" });
      assert.equal(ready.statusCode, 503);
      assert.equal(ready.headers["retry-after"], "5");
      assert.deepEqual(ready.json(), { status: "unavailable", checks: { store: "down" } });
      assert.equal((await service.app.inject({ method: "GET", url: "/livez" })).statusCode, 200);
    });

    it("counts the failures as unavailable store errors, and none as unexpected", async () => {
      assert.ok((await service.metrics.value("mdq_store_errors_total", { kind: "unavailable" })) >= 4);
      assert.equal(await service.metrics.value("mdq_store_errors_total", { kind: "other" }), 0);
      const exposition = (await service.adminApp.inject({ method: "GET", url: "/metrics" })).body;
      assert.doesNotMatch(exposition, /status="500"/);
      assert.match(exposition, /^mdq_token_requests_failed_total\{error="temporarily_unavailable"\} [1-9]/m);
    });
  });

  it("recovers by itself once the database answers again", async () => {
    await within(10_000, "queries answered again", async () => {
      return (await graphqlOn(service, cachedToken, RECORDS, variables)).statusCode === 200;
    });
    assert.equal((await service.app.inject({ method: "GET", url: "/readyz" })).statusCode, 200);
    assert.equal((await requestToken(service, credentials.apps[2]!)).statusCode, 200);
  });
});

describe("a service whose DuckDB store runs out of memory for a read", () => {
  /** The service under test, its store under a small memory limit, and a token of its first app. */
  let region: {
    store: DuckDbStore;
    service: Service;
    dataDir: string;
    token: string;
    variables: Record<string, string>;
  };

  before(async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "mdq-out-of-memory-"));
    const config = configOf(dataDir, { pageCacheMb: 0 });
    const seeding = await openDuckDbStore(join(dataDir, "store"));
    const credentials = await seedRegion(seeding, config, 30);
    await seeding.close();
    // Opened again under a limit its reads outgrow (an operator's MDQ_DUCKDB_MEMORY_MB).
    const store = await openDuckDbStore(join(dataDir, "store"), { memoryMb: MEMORY_MB, threads: 1 });
    const service = await buildService(config, { store });
    const app = credentials.apps[0]!;
    region = {
      store,
      service,
      dataDir,
      token: await tokenFrom(service, app),
      variables: { c: app.brandClientId, from: daysAgo(30), to: daysAgo(1) },
    };
  });
  after(async () => {
    await region?.service.app.close();
    await region?.store.close();
    if (region) await rm(region.dataDir, { recursive: true, force: true });
  });

  it("answers 503 SERVICE_UNAVAILABLE with Retry-After, not 500, and answers again once memory is back", async () => {
    const { service, store, token, variables } = region;
    const answer = await graphqlOn(service, token, SORTED, variables);
    assert.equal(answer.statusCode, 503, answer.body);
    assert.equal(answer.headers["retry-after"], "2");
    assert.deepEqual(answer.json().errors?.[0]?.extensions, { code: "SERVICE_UNAVAILABLE" });
    assert.equal(answer.json().errors[0].message, STORE_MESSAGE);
    assertNothingLeaks(answer);
    assert.doesNotMatch(answer.body, /Out of Memory|memory_limit/);
    const reads = store as unknown as { rows(sql: string): Promise<unknown[]> };
    await reads.rows("SET memory_limit = '128MB'");
    const again = await graphqlOn(service, token, SORTED, variables);
    assert.equal(again.statusCode, 200, again.body);
    await reads.rows(`SET memory_limit = '${MEMORY_MB}MB'`);
  });

  it("answers a bulk export the same 503 before its first byte", async () => {
    const { service, token, variables } = region;
    const query = new URLSearchParams({
      clientId: variables["c"]!,
      from: variables["from"]!,
      to: variables["to"]!,
    });
    const answer = await service.app.inject({
      method: "GET",
      url: `/export/marketing-records?${query}&currency=JPY`,
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(answer.statusCode, 503, answer.body);
    assert.equal(answer.headers["retry-after"], "2");
    assert.deepEqual(answer.json().errors?.[0]?.extensions, { code: "SERVICE_UNAVAILABLE" });
    assertNothingLeaks(answer);
  });
});
