/**
 * Read replicas (CONTRACT §9, docs/storage.md "Reads on standbys"), on a real primary with two
 * real streaming standbys and, last, PgBouncer in transaction mode in front of them: every
 * answer's `dataVersion` is checked against what a primary-only instance answers just before the
 * request starts (never older), readiness follows a publish at once while the standbys lag or are
 * paused, a walk through nginx across three instances and two standbys never sees its version go
 * back while loads land, a standby killed mid-walk costs no failed request and is skipped within
 * 5 s, and one that comes back is used again.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  freePort,
  graphqlCall,
  graphqlOn,
  type Nginx,
  type PgBouncer,
  type StandbyPair,
  startNginx,
  startPgBouncer,
  startStandbyPair,
  tokenFrom,
  within,
} from "@mdq/test-support";
import { todayIn } from "../src/calendar.js";
import { type ConfigInput, loadConfig } from "../src/config.js";
import type { CurrencyCode } from "../src/currencies.js";
import { type DemoCredentials, seedDemoRegion } from "../src/demo/demo-seed.js";
import { buildService, type Service } from "../src/server.js";
import type { Store, StoredRecord } from "../src/store/model/store.js";
import { migrateDatabase, openStore } from "../src/store/open-store.js";
import { createPostgresPool } from "../src/store/postgres/postgres-pool.js";
import { openPostgresStore, PostgresStore } from "../src/store/postgres/postgres-store.js";
import { ReplicaObserver } from "../src/store/postgres/replica-observer.js";
import { ReplicaRouter } from "../src/store/postgres/replica-router.js";

const RECORDS = `query($c: ID!, $from: Date!, $to: Date!, $page: Int!) {
  marketingRecords(clientId: $c, dateRange: {from: $from, to: $to}, pagination: {page: $page, pageSize: 1000}) { recordId }
}`;
const AGGREGATE = `query($c: ID!, $from: Date!, $to: Date!) {
  marketingAggregate(clientId: $c, dateRange: {from: $from, to: $to}, metrics: [CLICKS], groupBy: [DATE_DAY]) { DATE_DAY TOTAL_CLICKS }
}`;
const CHANGES = `query($c: ID!, $from: Date!, $to: Date!) {
  marketingDataChanges(clientId: $c, dateRange: {from: $from, to: $to}) { dataVersion days { date } }
}`;
const READINESS = `query($c: ID!, $d: Date!) {
  marketingDataReadiness(clientId: $c, date: $d) { status dataVersion }
}`;

/** One instance of the region: its service and its own store (and router, with standbys). */
interface Instance {
  service: Service;
  store: Store;
  token: string;
}

/** What the checks read of a GraphQL answer. */
interface GraphqlBody {
  data?: Record<string, unknown>;
  errors?: unknown[];
  extensions?: { pageInfo?: { marketingRecords?: { dataVersion?: string; totalCount?: number } } };
}

/** The number in a data version's text (`uk.42` → 42). */
function versionNumber(text: unknown): number {
  assert.equal(typeof text, "string");
  const match = /^[a-z]+\.(\d+)$/.exec(text as string);
  assert.ok(match, `not a data version: ${String(text)}`);
  return Number(match[1]);
}

describe("read replicas: answers are never older than what the region published", {
  timeout: 240_000,
}, () => {
  let pair: StandbyPair;
  let database: string;
  let dataDir: string;
  let credentials: DemoCredentials;
  let app: DemoCredentials["apps"][number];
  let today: string;
  /** A primary-only instance: the checker's "what the primary knows at request start". */
  let primaryOnly: Instance;
  /** Three instances reading on both standbys. */
  const instances: Instance[] = [];
  const opened: Store[] = [];
  let loadNumber = 0;

  async function instance(config: ConfigInput): Promise<Instance> {
    const serviceConfig = loadConfig(
      {},
      {
        region: "uk",
        authUrl: "http://auth.test",
        baseUrl: "http://api.test",
        logLevel: "silent",
        rateLimitMax: 1_000_000,
        pageCacheMb: 0,
        dataDir,
        ...config,
      },
    );
    const store = await openStore(serviceConfig);
    opened.push(store);
    const service = await buildService(serviceConfig, { store, keyRefreshSeconds: 0 });
    return { service, store, token: await tokenFrom(service, app) };
  }

  /** A load of `rows` records on yesterday through `target`'s store (the admin's write path). */
  async function loadYesterday(target: Instance, rows = 30): Promise<void> {
    loadNumber += 1;
    const day = yesterday();
    const records: StoredRecord[] = Array.from({ length: rows }, (_, index) => ({
      recordId: `replica-${index}`,
      date: day,
      market: app.markets[0]!,
      dataSource: app.dataSources[0]!,
      channel: "search",
      campaignId: `c-${loadNumber}`,
      campaignName: `load ${loadNumber}`,
      impressions: 100 + loadNumber,
      clicks: 10,
      spendE4: 12_3400n,
      conversionsE4: 10_000n,
      revenueE4: 50_0000n,
      currency: "EUR" as CurrencyCode,
    }));
    await target.store.replaceRecords(app.brandClientId, records, { processingDate: today, source: "test" });
  }

  function yesterday(): string {
    const date = new Date(`${today}T00:00:00Z`);
    date.setUTCDate(date.getUTCDate() - 1);
    return date.toISOString().slice(0, 10);
  }

  function firstDay(): string {
    const date = new Date(`${today}T00:00:00Z`);
    date.setUTCDate(date.getUTCDate() - 3);
    return date.toISOString().slice(0, 10);
  }

  async function graphql(target: Instance, query: string, variables: Record<string, unknown>) {
    const response = await graphqlOn(target.service, target.token, query, variables);
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json() as GraphqlBody;
    assert.equal(body.errors, undefined, response.body);
    return body;
  }

  /** A records page, checked against the primary-only instance's answer read just before. */
  async function checkedPage(target: Instance, page: number): Promise<number> {
    const variables = { c: app.brandClientId, from: firstDay(), to: yesterday(), page };
    const primary = await graphql(primaryOnly, RECORDS, variables);
    const answer = await graphql(target, RECORDS, variables);
    return checkedVersion(primary, answer);
  }

  /** The same, the page asked over HTTP through `nginx` (whichever instance it picks answers). */
  async function checkedPageThrough(nginx: Nginx, page: number): Promise<number> {
    const variables = { c: app.brandClientId, from: firstDay(), to: yesterday(), page };
    const primary = await graphql(primaryOnly, RECORDS, variables);
    const response = await graphqlCall(nginx.url, instances[0]!.token, RECORDS, variables);
    assert.equal(response.status, 200, response.body);
    const answer = JSON.parse(response.body) as GraphqlBody;
    assert.equal(answer.errors, undefined, response.body);
    return checkedVersion(primary, answer);
  }

  /** The answer's records version, checked never older than the primary's `floor` answer. */
  function checkedVersion(floor: GraphqlBody, answer: GraphqlBody): number {
    const primary = versionNumber(floor.extensions?.pageInfo?.marketingRecords?.dataVersion);
    const version = versionNumber(answer.extensions?.pageInfo?.marketingRecords?.dataVersion);
    assert.ok(version >= primary, `records page at version ${version}, older than the primary's ${primary}`);
    return version;
  }

  /** Readiness, checked against the primary-only instance's answer read just before. */
  async function checkedReadiness(target: Instance): Promise<{ status: string; version: number }> {
    const variables = { c: app.brandClientId, d: today };
    const primary = (await graphql(primaryOnly, READINESS, variables)).data?.["marketingDataReadiness"] as {
      status: string;
      dataVersion: string;
    };
    const answer = (await graphql(target, READINESS, variables)).data?.["marketingDataReadiness"] as {
      status: string;
      dataVersion: string;
    };
    const version = versionNumber(answer.dataVersion);
    assert.ok(version >= versionNumber(primary.dataVersion), "readiness older than the primary's");
    if (primary.status === "READY") assert.equal(answer.status, "READY");
    return { status: answer.status, version };
  }

  function readsOn(target: Instance, on: string): Promise<number> {
    return target.service.metrics.value("mdq_store_reads_total", { target: on });
  }

  /** The GraphQL requests `target` has answered 200. */
  function answeredBy(target: Instance): Promise<number> {
    return target.service.metrics.value("mdq_http_requests_total", { route: "/graphql", status: "200" });
  }

  async function readsOnAll(on: string): Promise<number> {
    let total = 0;
    for (const target of instances) total += await readsOn(target, on);
    return total;
  }

  before(async () => {
    pair = await startStandbyPair(2);
    database = await pair.createDatabase("replicas");
    await migrateDatabase(pair.primary.url(database));
    dataDir = await mkdtemp(join(tmpdir(), "mdq-replicas-"));
    const seedConfig = loadConfig({}, { region: "uk", databaseUrl: pair.primary.url(database), dataDir });
    today = todayIn(seedConfig.timeZone);
    const seedStore = await openStore(seedConfig);
    credentials = await seedDemoRegion(seedStore, {
      region: "uk",
      authUrl: "http://auth.test",
      baseUrl: "http://api.test",
      today,
      days: 4,
    });
    await seedStore.close();
    app = credentials.apps[0]!;
    primaryOnly = await instance({ databaseUrl: pair.primary.url(database) });
    const replicated = {
      databaseUrl: pair.primary.url(database),
      databaseReplicaUrls: pair.standbys.map((standby) => standby.url(database)).join(","),
    };
    // The third with its page cache on: its pages reuse a brand's position while no load lands.
    for (let index = 0; index < 3; index += 1)
      instances.push(await instance(index === 2 ? { ...replicated, pageCacheMb: 64 } : replicated));
    for (const standby of pair.standbys) await standby.caughtUp();
  });

  after(async () => {
    for (const target of [primaryOnly, ...instances]) await target?.service.app.close();
    for (const store of opened) await store.close().catch(() => undefined);
    await pair?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("reads on a standby that has replayed the brand's latest version, and the routing check is cheap", async (t) => {
    const router = instances[0]!.store;
    assert.ok(router instanceof ReplicaRouter);
    await within(
      5_000,
      "a standby chosen",
      async () => (await router.targetFor(app.brandClientId)) !== "primary",
    );
    const costs: number[] = [];
    for (let index = 0; index < 200; index += 1) {
      const started = process.hrtime.bigint();
      await router.targetFor(app.brandClientId);
      costs.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    costs.sort((a, b) => a - b);
    const median = costs[costs.length >> 1]!;
    t.diagnostic(`routing check: median ${median.toFixed(3)} ms over ${costs.length}`);
    // The budget is 1 ms (issue 56; bench/replicas.mjs measures it alone); a test on a shared
    // machine only checks it stays far from a request's own time.
    assert.ok(median < 25, `routing check median ${median.toFixed(3)} ms`);
    const before = (await readsOnAll("replica1")) + (await readsOnAll("replica2"));
    for (const target of instances) await checkedPage(target, 1);
    const afterReads = (await readsOnAll("replica1")) + (await readsOnAll("replica2"));
    // Every page, unless the observer's last poll went stale on a machine too busy to poll.
    assert.ok(afterReads - before > 0, "the pages were read on the standbys");
  });

  it("behind the page cache, a brand's position is asked of the primary once per data generation", async () => {
    const cached = instances[2]!;
    const positions = (source: string) =>
      cached.service.metrics.value("mdq_replica_positions_total", { source });
    const variables = { c: app.brandClientId, from: firstDay(), to: yesterday() };
    await graphql(cached, AGGREGATE, variables);
    const asked = await positions("primary");
    const known = await positions("known");
    await graphql(cached, AGGREGATE, { ...variables, from: yesterday() });
    await graphql(cached, AGGREGATE, { ...variables, to: firstDay() });
    assert.equal(await positions("primary"), asked, "no second read of the position");
    assert.equal(await positions("known"), known + 2);
    await loadYesterday(instances[0]!);
    await graphql(cached, AGGREGATE, variables);
    assert.equal(await positions("primary"), asked + 1, "a load makes it ask again");
  });

  it("aggregates, changes and exports answer on the standbys as on the primary", async () => {
    const variables = { c: app.brandClientId, from: firstDay(), to: yesterday() };
    const target = instances[1]!;
    for (const query of [AGGREGATE, CHANGES]) {
      assert.deepEqual(
        (await graphql(target, query, variables)).data,
        (await graphql(primaryOnly, query, variables)).data,
      );
    }
    const exportOf = (on: Instance) =>
      on.service.app.inject({
        method: "GET",
        url: `/export/marketing-records?clientId=${app.brandClientId}&from=${firstDay()}&to=${yesterday()}&format=csv`,
        headers: { authorization: `Bearer ${on.token}` },
      });
    const [routed, primary] = [await exportOf(target), await exportOf(primaryOnly)];
    assert.equal(routed.statusCode, 200, routed.body);
    assert.equal(routed.body, primary.body);
    const metrics = target.service.metrics;
    for (const operation of ["aggregate", "changes", "export"]) {
      const onStandbys =
        (await metrics.value("mdq_store_reads_total", { target: "replica1", operation })) +
        (await metrics.value("mdq_store_reads_total", { target: "replica2", operation }));
      const onPrimary = await metrics.value("mdq_store_reads_total", { target: "primary", operation });
      assert.equal(onStandbys + onPrimary, 1, operation);
    }
  });

  it("a load and a publish while both standbys are paused: readiness and records follow the publish at once", async () => {
    for (const standby of pair.standbys) await standby.pauseReplay();
    try {
      const behindBefore = await readsOnAll("primary");
      await loadYesterday(instances[0]!);
      const published = await instances[1]!.service.admin.publish({
        brandId: app.brandClientId,
        processingDate: today,
      });
      assert.equal(published.processingDate, today);
      for (const target of instances) {
        const readiness = await checkedReadiness(target);
        assert.equal(readiness.status, "READY");
        await checkedPage(target, 1);
      }
      assert.ok((await readsOnAll("primary")) - behindBefore >= 6, "the paused standbys were passed over");
      assert.ok(
        (await instances[0]!.service.metrics.value("mdq_replica_fallbacks_total", { reason: "behind" })) > 0,
        "the fallbacks are counted",
      );
    } finally {
      for (const standby of pair.standbys) await standby.resumeReplay();
    }
    for (const standby of pair.standbys) await standby.caughtUp();
    // Caught up, the standbys serve the brand again, with the same answers.
    await within(5_000, "standbys used again", async () => {
      const before = (await readsOnAll("replica1")) + (await readsOnAll("replica2"));
      await checkedReadiness(instances[2]!);
      return (await readsOnAll("replica1")) + (await readsOnAll("replica2")) > before;
    });
  });

  it("a client walking pages through nginx across three instances and two standbys while loads land and one standby lags never sees its version go back", async () => {
    const ports: number[] = [];
    for (const target of instances) {
      await target.service.app.listen({ host: "127.0.0.1", port: 0 });
      ports.push((target.service.app.server.address() as AddressInfo).port);
    }
    const nginx = await startNginx(join(dataDir, "nginx"), await freePort(), ports);
    const answeredBefore = await Promise.all(instances.map((target) => answeredBy(target)));
    await pair.standbys[0]!.setApplyDelay(400);
    let loading = true;
    const loads = (async () => {
      while (loading) {
        await loadYesterday(instances[loadNumber % 3]!);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const standbyReads = (await readsOnAll("replica1")) + (await readsOnAll("replica2"));
    try {
      const loadsBefore = loadNumber;
      let first = 0;
      let highest = 0;
      for (let request = 0; request < 120; request += 1) {
        const version = await checkedPageThrough(nginx, (request % 3) + 1);
        assert.ok(version >= highest, `version went back from ${highest} to ${version}`);
        highest = version;
        if (request === 0) first = version;
      }
      assert.ok(loadNumber - loadsBefore >= 3, "loads landed during the walk");
      assert.ok(highest > first, "the walk saw versions the loads made");
      const served = (await readsOnAll("replica1")) + (await readsOnAll("replica2")) - standbyReads;
      assert.ok(served > 0, "the standbys served part of the walk");
      for (const [index, target] of instances.entries())
        assert.ok(
          (await answeredBy(target)) > answeredBefore[index]!,
          `nginx sent instance ${index + 1} part of the walk`,
        );
    } finally {
      loading = false;
      await loads;
      await nginx.stop();
      await pair.standbys[0]!.setApplyDelay(0);
    }
  });

  it("a standby killed mid-walk costs no failed request, is skipped within 5 s, and is used again once back", async () => {
    const router = instances[0]!.store as ReplicaRouter;
    let highest = 0;
    const walk = async (requests: number) => {
      for (let request = 0; request < requests; request += 1) {
        const version = await checkedPage(instances[request % 3]!, (request % 3) + 1);
        assert.ok(version >= highest);
        highest = version;
      }
    };
    await walk(6);
    const killedAt = Date.now();
    const killing = pair.standbys[0]!.kill();
    await walk(12);
    await killing;
    const skippedAfter = await within(
      5_000,
      "the killed standby skipped",
      async () => !router.observer.standbys[0]!.up,
    );
    assert.ok(Date.now() - killedAt <= 5_000 + skippedAfter);
    await walk(6);
    const ready = await instances[0]!.service.app.inject({ method: "GET", url: "/readyz" });
    assert.equal(ready.statusCode, 200, "ready while the primary answers");
    assert.equal(await instances[0]!.service.metrics.value("mdq_replica_up", { target: "replica1" }), 0);
    await pair.standbys[0]!.start();
    await pair.standbys[0]!.caughtUp();
    await within(10_000, "the standby used again", async () => {
      const before = await readsOnAll("replica1");
      await walk(3);
      return (await readsOnAll("replica1")) > before;
    });
  });

  it("a read whose standby connection fails is retried on another target: no failed request", async () => {
    // The observer sees standby 1 answer; the reads' own connections to it are refused.
    const refused = `postgres://postgres@127.0.0.1:${await freePort()}/${database}`;
    const url = pair.primary.url(database);
    const router = new ReplicaRouter({
      primary: await openPostgresStore({ url }),
      replicas: [
        new PostgresStore(createPostgresPool({ url: refused })),
        new PostgresStore(createPostgresPool({ url: pair.standbys[1]!.url(database) })),
      ],
      routing: createPostgresPool({ url, poolSize: 2 }),
      observer: new ReplicaObserver({
        primaryUrl: url,
        replicaUrls: pair.standbys.map((standby) => standby.url(database)),
      }),
    });
    opened.push(router);
    await router.observer.poll();
    const config = loadConfig(
      {},
      {
        region: "uk",
        authUrl: "http://auth.test",
        baseUrl: "http://api.test",
        logLevel: "silent",
        pageCacheMb: 0,
        dataDir,
      },
    );
    const service = await buildService(config, { store: router, keyRefreshSeconds: 0 });
    const target: Instance = { service, store: router, token: await tokenFrom(service, app) };
    try {
      for (let request = 0; request < 12; request += 1) {
        await router.observer.poll();
        await checkedPage(target, 1);
      }
      assert.ok((await service.metrics.value("mdq_replica_read_retries_total", { target: "replica1" })) > 0);
      assert.equal(await service.metrics.value("mdq_store_reads_total", { target: "replica1" }), 0);
    } finally {
      await service.app.close();
    }
  });

  describe("behind PgBouncer in transaction mode", () => {
    let bouncer: PgBouncer;
    let pooled: Instance;

    before(async () => {
      bouncer = await startPgBouncer([
        { name: "primary", port: pair.primary.port, databases: [database] },
        ...pair.standbys.map((standby, index) => ({
          name: `standby${index + 1}`,
          port: standby.port,
          databases: [database],
        })),
      ]);
      pooled = await instance({
        databaseUrl: bouncer.url("primary", database),
        databaseReplicaUrls: pair.standbys
          .map((_, index) => bouncer.url(`standby${index + 1}`, database))
          .join(","),
      });
      instances.push(pooled);
    });

    after(async () => {
      await pooled?.service.app.close();
      await bouncer?.stop();
    });

    it("loads (advisory locks), publishes and routed reads work unchanged", async () => {
      await loadYesterday(pooled);
      await pooled.service.admin.publish({ brandId: app.brandClientId, processingDate: today });
      const readiness = await checkedReadiness(pooled);
      assert.equal(readiness.status, "READY");
      await checkedPage(pooled, 1);
      await within(5_000, "a standby read through PgBouncer", async () => {
        const before = (await readsOn(pooled, "replica1")) + (await readsOn(pooled, "replica2"));
        await checkedPage(pooled, 2);
        return (await readsOn(pooled, "replica1")) + (await readsOn(pooled, "replica2")) > before;
      });
    });
  });
});
