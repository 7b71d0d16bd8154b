/**
 * The page cache (store/decorators/page-cache.ts) never serves a stale page: two instances on one PostgreSQL
 * database, each with its own cache; a load or an FX change made through one instance is in the
 * other's very next answer. And it is used: a repeated query is a hit (mdq_page_cache_lookups_total).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createMigratedDatabase, graphqlOn, type TestDatabase, tokenFrom } from "@mdq/test-support";
import { ensureAdminToken } from "../src/admin/admin-token.js";
import { addDays, todayIn } from "../src/calendar.js";
import { loadConfig } from "../src/config.js";
import { type DemoCredentials, seedDemoRegion } from "../src/demo/demo-seed.js";
import { RECORD_COLUMNS } from "../src/load/records-file.js";
import { buildService, type Service } from "../src/server.js";
import type { Store } from "../src/store/model/store.js";
import { openPostgresStore } from "../src/store/postgres/postgres-store.js";

const RECORDS = `query($c: ID!, $d: Date!) { marketingRecords(clientId: $c, dateRange: {from: $d, to: $d},
  currency: GBP, sort: [{field: DATE_DAY, direction: ASC}]) { recordId date impressions spend currency } }`;

describe("page cache across two instances on one PostgreSQL", () => {
  let database: TestDatabase;
  let work: string;
  const stores: Store[] = [];
  const services: Service[] = [];
  let credentials: DemoCredentials;
  let adminToken: string;
  let day: string;

  before(async () => {
    database = await createMigratedDatabase("pagecache");
    work = await mkdtemp(join(tmpdir(), "mdq-page-cache-"));
    const config = loadConfig(
      {},
      {
        region: "uk",
        authUrl: "http://auth.test",
        baseUrl: "http://api.test",
        rateLimitMax: 1_000_000,
        logLevel: "silent",
        dataDir: work,
      },
    );
    const today = todayIn(config.timeZone);
    day = addDays(today, -1);
    for (let instance = 0; instance < 2; instance++)
      stores.push(await openPostgresStore({ url: database.url }));
    credentials = await seedDemoRegion(stores[0]!, {
      region: config.region,
      authUrl: config.authUrl,
      baseUrl: config.baseUrl,
      today,
      days: 3,
      scale: 1,
    });
    adminToken = await ensureAdminToken(work);
    for (const store of stores) services.push(await buildService(config, { store }));
  });

  after(async () => {
    for (const service of services) await service.app.close();
    for (const store of stores) await store.close();
    await database.drop();
    await rm(work, { recursive: true, force: true });
  });

  async function records(service: Service, token: string) {
    const answer = await graphqlOn(service, token, RECORDS, {
      c: credentials.apps[0]!.brandClientId,
      d: day,
    });
    assert.equal(answer.statusCode, 200, answer.body);
    const body = answer.json() as { data: { marketingRecords: Record<string, unknown>[] }; errors?: unknown };
    assert.equal(body.errors, undefined, answer.body);
    return body.data.marketingRecords;
  }

  /** POSTs to `service`'s admin API and asserts 200. */
  async function admin(service: Service, url: string, payload: Record<string, unknown>): Promise<void> {
    const answer = await service.adminApp.inject({
      method: "POST",
      url,
      headers: { authorization: `Bearer ${adminToken}` },
      payload,
    });
    assert.equal(answer.statusCode, 200, answer.body);
  }

  /**
   * Loads one record of the first app's brand on `day` through `service` (replacing the day);
   * `metrics` is the file's impressions … currency.
   */
  async function loadOneRecord(service: Service, recordId: string, metrics: string): Promise<void> {
    const app = credentials.apps[0]!;
    const file = join(work, `${recordId}.csv`);
    const record = `${recordId},${day},${app.markets[0]},${app.dataSources[0]},search,c-1,Cache test,${metrics}`;
    await writeFile(file, `${RECORD_COLUMNS.join(",")}\n${record}\n`);
    await admin(service, "/admin/loads", { brandId: app.brandClientId, path: file });
  }

  async function lookups(service: Service, result: "hit" | "miss"): Promise<number> {
    const metric = await service.metrics.registry.getSingleMetricAsString("mdq_page_cache_lookups_total");
    const line = metric
      .split("\n")
      .find((text) => text.includes(`query="records"`) && text.includes(`result="${result}"`));
    return line ? Number(line.split(" ").pop()) : 0;
  }

  it("answers a repeated query from memory, with the same rows", async () => {
    const [a, b] = services as [Service, Service];
    const token = await tokenFrom(a, credentials.apps[0]!);
    const first = await records(b, token);
    const missesBefore = await lookups(b, "miss");
    const hitsBefore = await lookups(b, "hit");
    const second = await records(b, token);
    assert.deepEqual(second, first);
    assert.ok(first.length > 0);
    assert.equal(await lookups(b, "hit"), hitsBefore + 1);
    assert.equal(await lookups(b, "miss"), missesBefore);
  });

  it("a load through one instance is in the other instance's next answer", async () => {
    const [a, b] = services as [Service, Service];
    const token = await tokenFrom(a, credentials.apps[0]!);
    const before = await records(b, token);
    assert.ok(before.every((row) => row["impressions"] !== 424242));
    await loadOneRecord(a, "cache-1", "424242,1,10,0,0,GBP");
    const after = await records(b, token);
    assert.deepEqual(
      after.map((row) => [row["recordId"], row["impressions"], row["spend"]]),
      [["cache-1", 424242, 10]],
    );
  });

  it("an FX change through one instance changes the other's converted money at once", async () => {
    const [a, b] = services as [Service, Service];
    const token = await tokenFrom(a, credentials.apps[0]!);
    await loadOneRecord(a, "cache-2", "1,1,100,0,0,EUR");
    await records(b, token);
    const fx = join(work, "fx.csv");
    await writeFile(fx, `date,currency,rate\n${day},GBP,0.5\n`);
    await admin(a, "/admin/fx", { path: fx });
    const converted = await records(b, token);
    assert.deepEqual(
      converted.map((row) => row["spend"]),
      [50],
      "100 EUR at 0.5 GBP per EUR",
    );
  });
});
