/**
 * Fairness and overload (CONTRACT §8, issue 55), driven through HTTP on both stores: heavy work
 * (records pages, aggregates) and exports are admitted per brand in turn, so a brand with many
 * requests in flight cannot delay a brand with one; cheap questions never wait behind them; beyond
 * the bounded queue the answer is 503 `SERVICE_UNAVAILABLE` (exports: 429 `RATE_LIMITED`) with
 * `Retry-After`; a queued request whose client leaves is dropped and never runs. The heavy reads
 * and the exports are held at a gate in the store that the test opens one at a time, so every
 * order asserted is the admission's own, never a race of timings.
 */
import assert from "node:assert/strict";
import { request } from "node:http";
import { describe, it } from "node:test";
import { graphqlOn, type HttpAnswer, httpCall, requestToken, within } from "@mdq/test-support";
import type { LightMyRequestResponse } from "fastify";
import { loadConfig, type ServiceConfig } from "../src/config.js";
import { heavyLimits } from "../src/limits/request-lanes.js";
import { buildService, type Service } from "../src/server.js";
import { StoreDecorator } from "../src/store/decorators/store-decorator.js";
import { openDuckDbStore } from "../src/store/duckdb/duckdb-store.js";
import type { AggregateQuery, RecordsQuery } from "../src/store/model/query-request.js";
import type { PageResult, RecordsPage, Store } from "../src/store/model/store.js";
import { createPostgresPool } from "../src/store/postgres/postgres-pool.js";
import { PostgresStore } from "../src/store/postgres/postgres-store.js";
import type { ExportQuery, RecordExport, RecordExports } from "../src/store/reads/export/record-export.js";
import { CHANGES, changesRegion, duckdbEngine, postgresEngine, READINESS } from "./changes-harness.js";

const RECORDS =
  "query($c: ID!, $r: DateRangeInput!) { marketingRecords(clientId: $c, dateRange: $r) { recordId } }";
const AGGREGATE = `query($c: ID!, $r: DateRangeInput!) {
  marketingAggregate(clientId: $c, dateRange: $r, metrics: [CLICKS], groupBy: [MARKET]) { MARKET TOTAL_CLICKS }
}`;
const MY_ACCESS = "query($c: ID!) { myAccess(clientId: $c) { brandId } }";
/** Readiness and a records page in one document: heavy, as its heaviest field. */
const MIXED = `query($c: ID!, $r: DateRangeInput!) {
  marketingDataReadiness(clientId: $c) { status }
  marketingRecords(clientId: $c, dateRange: $r) { recordId }
}`;

/**
 * Every export takes a place in the export lane, however few its rows: the region's exports are
 * all page-sized, and these tests drive the export lane itself.
 */
const EXPORT_PLACES_ONLY = { exportSmallRows: 0 } as const;

/** The brands of the demo and an app of each. */
const APPS = {
  "brand-acme": "app-acme-analytics",
  "brand-globex": "app-globex-bi",
  "brand-initech": "app-initech-dashboard",
};
type Brand = keyof typeof APPS;

/** A store whose records pages, aggregates and exports wait at a gate until the test lets them through, one by one. */
class GatedStore extends StoreDecorator implements RecordExports {
  /** The brand of every heavy read or export that reached the store (was admitted), in order. */
  readonly arrivals: string[] = [];
  private readonly held: { brand: string; go: () => void }[] = [];

  constructor(inner: Store) {
    super(inner);
  }

  /** Heavy reads waiting at the gate now. */
  get holding(): number {
    return this.held.length;
  }

  /** Lets the oldest held read run (the oldest of `brand`'s when given). */
  open(brand?: string): void {
    const index = this.held.findIndex((entry) => brand === undefined || entry.brand === brand);
    if (index >= 0) this.held.splice(index, 1)[0]!.go();
  }

  /** Lets every held read run, and every later one too. */
  openAll(): void {
    this.opened = true;
    while (this.held.length > 0) this.open();
  }

  private opened = false;

  override queryRecords(query: RecordsQuery, pages?: number): Promise<RecordsPage[]> {
    return this.gate(query.scope.brandId, () => super.queryRecords(query, pages));
  }

  override queryAggregate(query: AggregateQuery): Promise<PageResult<Record<string, unknown>>> {
    return this.gate(query.scope.brandId, () => super.queryAggregate(query));
  }

  /** An export holds its place in the export lane from here to its last byte. */
  openRecordExport(query: ExportQuery): Promise<RecordExport> {
    return this.gate(query.scope.brandId, () =>
      (this.inner as Store & RecordExports).openRecordExport(query),
    );
  }

  private async gate<Result>(brand: string, read: () => Promise<Result>): Promise<Result> {
    this.arrivals.push(brand);
    if (!this.opened) await new Promise<void>((go) => this.held.push({ brand, go }));
    return read();
  }
}

/**
 * Sends one request on a connection of its own and returns what cuts that connection: the client
 * leaving before its answer (the answer itself is never read).
 */
function leavingCall(url: string, method: "GET" | "POST", headers: Record<string, string>, body?: string) {
  const outgoing = request(url, { method, headers, agent: false });
  // The test cuts the connection: its error is the point, not a failure.
  outgoing.on("error", () => undefined);
  outgoing.end(body);
  return () => outgoing.destroy();
}

describe("fair lanes: settings", () => {
  it("derives the heavy lane from the store's read connections, leaving one to cheap questions", async () => {
    const config = loadConfig({});
    const queue = { maxQueueLength: 1000, maxWaitMs: 10_000 };
    const duckdb = await openDuckDbStore(":memory:");
    try {
      assert.equal(duckdb.readConnections, 4);
      assert.deepEqual(heavyLimits(duckdb.readConnections, config), {
        concurrency: 3,
        perBrand: 2,
        ...queue,
      });
    } finally {
      await duckdb.close();
    }
    // PostgreSQL: a pool of 10, less 4 exports, less one (the pool connects lazily: nothing is asked).
    const pool = createPostgresPool({ url: "postgres://127.0.0.1:5432/test", poolSize: 10 });
    const postgres = new PostgresStore(pool, config.exportConcurrency);
    try {
      assert.equal(postgres.readConnections, 6);
      assert.deepEqual(heavyLimits(postgres.readConnections, config), {
        concurrency: 5,
        perBrand: 4,
        ...queue,
      });
    } finally {
      await pool.end();
    }
    const one = loadConfig({ MDQ_HEAVY_CONCURRENCY: "1", MDQ_HEAVY_PER_BRAND: "7" });
    assert.deepEqual(heavyLimits(4, one), { concurrency: 1, perBrand: 1, ...queue });
  });

  it("names the bad key of a lane setting", () => {
    assert.throws(() => loadConfig({ MDQ_QUEUE_MAX_WAIT_MS: "0" }), {
      name: "ConfigError",
      message: "invalid configuration MDQ_QUEUE_MAX_WAIT_MS: 0 is outside 1..600000",
    });
    assert.throws(() => loadConfig({ MDQ_HEAVY_CONCURRENCY: "many" }), {
      name: "ConfigError",
      message: 'invalid configuration MDQ_HEAVY_CONCURRENCY: "many" is not a whole number',
    });
  });
});

for (const engine of [duckdbEngine("mdq-lanes-"), postgresEngine("lanes")]) {
  describe(`fair lanes: ${engine.name}`, { timeout: 120_000 }, () => {
    const region = changesRegion(engine, { days: 5 });

    /** A service over the region's store behind a gate, with these lane settings (no page cache). */
    async function gatedService(settings: Partial<ServiceConfig>) {
      const store = new GatedStore(region.store);
      const config = Object.freeze({
        ...region.config,
        pageCacheMb: 0,
        heavyConcurrency: 1,
        heavyPerBrand: 1,
        queueMaxLength: 100,
        queueMaxWaitMs: 600_000,
        ...settings,
      });
      const service = await buildService(config, { store });
      const tokens = new Map<Brand, string>();
      for (const [brand, appClientId] of Object.entries(APPS) as [Brand, string][]) {
        const app = region.credentials.apps.find((entry) => entry.appClientId === appClientId)!;
        const response = await requestToken(service, app);
        assert.equal(response.statusCode, 200, response.body);
        tokens.set(brand, response.json().access_token);
      }
      const ask = (brand: Brand, query: string): Promise<LightMyRequestResponse> =>
        graphqlOn(service, tokens.get(brand)!, query, { c: brand, r: region.whole(), s: null });
      const base = await service.app.listen({ host: "127.0.0.1", port: 0 });
      const exportUrl = (brand: Brand, range = region.whole()) =>
        `${base}/export/marketing-records?${new URLSearchParams({ clientId: brand, ...range })}`;
      const bearer = (brand: Brand) => ({ authorization: `Bearer ${tokens.get(brand)!}` });
      /** A whole export over HTTP, of the region's whole range unless `range` says another. */
      const exportOf = (brand: Brand, range?: { from: string; to: string }): Promise<HttpAnswer> =>
        httpCall(exportUrl(brand, range), { headers: bearer(brand) });
      /** Requests over HTTP whose clients leave when the test says. */
      const leaving = {
        ask: (brand: Brand, query: string) =>
          leavingCall(
            `${base}/graphql`,
            "POST",
            { ...bearer(brand), "content-type": "application/json" },
            JSON.stringify({ query, variables: { c: brand, r: region.whole() } }),
          ),
        export: (brand: Brand) => leavingCall(exportUrl(brand), "GET", bearer(brand)),
      };
      return { service, store, ask, tokens, exportOf, leaving };
    }

    /** Waits until `service` has `count` heavy requests waiting for their turn. */
    const waitingHeavy = (service: Service, count: number) =>
      within(10_000, `${count} heavy requests waiting`, async () => service.lanes.heavy.waiting === count);

    /** Waits until `service` has `count` exports waiting for their turn. */
    const waitingExports = (service: Service, count: number) =>
      within(10_000, `${count} exports waiting`, async () => service.lanes.exports.waiting === count);

    /** Waits until `count` reads or exports are held at the gate. */
    const atGate = (store: GatedStore, count: number) =>
      within(10_000, `${count} held at the gate`, async () => store.holding === count);

    /** An NDJSON export's lines, checked whole: every line a record, as many as MDQ-Row-Count says. */
    function exportedLines(answer: HttpAnswer): string[] {
      assert.equal(answer.status, 200, answer.body);
      assert.ok(answer.body.endsWith("\n"), "the export ends with its last line");
      const lines = answer.body.slice(0, -1).split("\n");
      assert.equal(String(lines.length), answer.headers["mdq-row-count"]);
      for (const line of lines) assert.equal(typeof JSON.parse(line).recordId, "string");
      return lines;
    }

    it("admits a brand with one heavy request before the queued requests of a brand with many", async () => {
      const { service, store, ask } = await gatedService({ heavyConcurrency: 1, heavyPerBrand: 1 });
      try {
        const answers = [ask("brand-acme", RECORDS)];
        await within(10_000, "the first read at the gate", async () => store.holding === 1);
        for (let queued = 1; queued <= 3; queued += 1) {
          answers.push(ask("brand-acme", queued === 2 ? AGGREGATE : RECORDS));
          await waitingHeavy(service, queued);
        }
        answers.push(ask("brand-globex", RECORDS));
        await waitingHeavy(service, 4);
        // One read at a time: each opened read ends, and its place goes to the next brand in turn.
        for (let read = 1; read < 5; read += 1) {
          store.open();
          await within(10_000, `read ${read + 1} at the gate`, async () => store.holding === 1);
        }
        store.open();
        const statuses = (await Promise.all(answers)).map((answer) => answer.statusCode);
        assert.deepEqual(statuses, [200, 200, 200, 200, 200]);
        assert.deepEqual(store.arrivals, [
          "brand-acme",
          "brand-globex",
          "brand-acme",
          "brand-acme",
          "brand-acme",
        ]);
        assert.equal(await service.metrics.value("mdq_queue_length", { class: "heavy" }), 0);
        assert.equal(await service.metrics.value("mdq_requests_in_flight", { class: "heavy" }), 0);
        const exposition = (await service.metrics.render()).body;
        assert.match(exposition, /^mdq_queue_wait_seconds_count\{[^}]*class="heavy"[^}]*\} 5$/m);
      } finally {
        store.openAll();
        await service.app.close();
      }
    });

    it("runs another brand's request at once while a brand at its cap waits", async () => {
      const { service, store, ask } = await gatedService({ heavyConcurrency: 2, heavyPerBrand: 1 });
      try {
        const answers = [ask("brand-acme", RECORDS), ask("brand-acme", RECORDS)];
        await within(10_000, "acme's first read at the gate", async () => store.holding === 1);
        await waitingHeavy(service, 1);
        answers.push(ask("brand-globex", AGGREGATE));
        await within(10_000, "globex's read at the gate", async () => store.holding === 2);
        assert.deepEqual(store.arrivals, ["brand-acme", "brand-globex"]);
        assert.equal(service.lanes.heavy.waiting, 1);
        store.openAll();
        assert.deepEqual(
          (await Promise.all(answers)).map((answer) => answer.statusCode),
          [200, 200, 200],
        );
      } finally {
        store.openAll();
        await service.app.close();
      }
    });

    it("answers cheap questions while the heavy lane is full and its queue is long", async () => {
      const { service, store, ask, tokens } = await gatedService({ heavyConcurrency: 1, queueMaxLength: 2 });
      try {
        const heavy = [
          ask("brand-acme", RECORDS),
          ask("brand-globex", RECORDS),
          ask("brand-initech", AGGREGATE),
        ];
        await within(10_000, "a read at the gate", async () => store.holding === 1);
        await waitingHeavy(service, 2);
        for (const query of [READINESS, MY_ACCESS, CHANGES, "{ __typename }"]) {
          const answer = await ask("brand-acme", query);
          assert.equal(answer.statusCode, 200, answer.body);
          assert.equal(answer.json().errors, undefined, answer.body);
        }
        const app = region.credentials.apps.find((entry) => entry.appClientId === APPS["brand-globex"])!;
        assert.equal((await requestToken(service, app)).statusCode, 200);
        assert.ok(tokens.size === 3);
        assert.equal(store.holding, 1);
        assert.equal(service.lanes.heavy.waiting, 2);
        store.openAll();
        assert.deepEqual(
          (await Promise.all(heavy)).map((answer) => answer.statusCode),
          [200, 200, 200],
        );
      } finally {
        store.openAll();
        await service.app.close();
      }
    });

    it("answers 503 SERVICE_UNAVAILABLE with Retry-After when the queue is full, a mixed document too", async () => {
      const { service, store, ask } = await gatedService({ heavyConcurrency: 1, queueMaxLength: 1 });
      try {
        const admitted = [ask("brand-acme", RECORDS)];
        await within(10_000, "a read at the gate", async () => store.holding === 1);
        admitted.push(ask("brand-globex", RECORDS));
        await waitingHeavy(service, 1);
        for (const query of [AGGREGATE, MIXED]) {
          const shed = await ask("brand-initech", query);
          assert.equal(shed.statusCode, 503);
          assert.equal(shed.headers["retry-after"], "2");
          assert.equal(shed.headers["content-type"], "application/json; charset=utf-8");
          assert.deepEqual(shed.json(), {
            errors: [
              {
                message:
                  "the instance is busy: its queue of 1 waiting requests is full; retry after the number of seconds in Retry-After",
                extensions: { code: "SERVICE_UNAVAILABLE" },
              },
            ],
          });
        }
        assert.equal(
          await service.metrics.value("mdq_shed_requests_total", { class: "heavy", reason: "queue_full" }),
          2,
        );
        assert.deepEqual(store.arrivals, ["brand-acme"]);
        store.openAll();
        assert.deepEqual(
          (await Promise.all(admitted)).map((answer) => answer.statusCode),
          [200, 200],
        );
      } finally {
        store.openAll();
        await service.app.close();
      }
    });

    it("answers 503 SERVICE_UNAVAILABLE with Retry-After when a request waited its longest", async () => {
      const { service, store, ask } = await gatedService({ heavyConcurrency: 1, queueMaxWaitMs: 50 });
      try {
        const admitted = ask("brand-acme", RECORDS);
        await within(10_000, "a read at the gate", async () => store.holding === 1);
        const shed = await ask("brand-globex", AGGREGATE);
        assert.equal(shed.statusCode, 503);
        assert.equal(shed.headers["retry-after"], "2");
        assert.deepEqual(shed.json(), {
          errors: [
            {
              message:
                "the instance is busy: the request waited 50 ms for its turn; retry after the number of seconds in Retry-After",
              extensions: { code: "SERVICE_UNAVAILABLE" },
            },
          ],
        });
        assert.equal(
          await service.metrics.value("mdq_shed_requests_total", { class: "heavy", reason: "wait_expired" }),
          1,
        );
        assert.equal(service.lanes.heavy.waiting, 0);
        store.openAll();
        assert.equal((await admitted).statusCode, 200);
      } finally {
        store.openAll();
        await service.app.close();
      }
    });

    it("drops a queued heavy request whose client leaves: it never runs, and the next brand's takes its turn", async () => {
      const { service, store, ask, leaving } = await gatedService({ heavyConcurrency: 1 });
      try {
        const answers = [ask("brand-acme", RECORDS)];
        await atGate(store, 1);
        // Queued first, globex's request would run next; its client leaves before its turn.
        const leave = leaving.ask("brand-globex", RECORDS);
        await waitingHeavy(service, 1);
        answers.push(ask("brand-initech", AGGREGATE));
        await waitingHeavy(service, 2);
        leave();
        await waitingHeavy(service, 1);
        assert.equal(await service.metrics.value("mdq_queue_length", { class: "heavy" }), 1);
        assert.equal(
          await service.metrics.value("mdq_shed_requests_total", { class: "heavy", reason: "client_gone" }),
          1,
        );
        store.open();
        await within(10_000, "initech's read at the gate", async () => store.arrivals.length === 2);
        store.openAll();
        assert.deepEqual(
          (await Promise.all(answers)).map((answer) => answer.statusCode),
          [200, 200],
        );
        assert.deepEqual(store.arrivals, ["brand-acme", "brand-initech"]);
        assert.equal(await service.metrics.value("mdq_queue_length", { class: "heavy" }), 0);
        assert.equal(await service.metrics.value("mdq_requests_in_flight", { class: "heavy" }), 0);
      } finally {
        store.openAll();
        await service.app.close();
      }
    });

    it("admits a brand's one export at the next free place, ahead of the exports another brand queued, whole", async () => {
      const { service, store, exportOf } = await gatedService({
        ...EXPORT_PLACES_ONLY,
        exportConcurrency: 2,
        exportPerBrand: 2,
      });
      try {
        // Acme holds every export place (its exports held open at the store) and queues two more.
        const acme = [exportOf("brand-acme"), exportOf("brand-acme")];
        await atGate(store, 2);
        for (let queued = 1; queued <= 2; queued += 1) {
          acme.push(exportOf("brand-acme"));
          await waitingExports(service, queued);
        }
        const globex = exportOf("brand-globex");
        await waitingExports(service, 3);
        assert.equal(await service.metrics.value("mdq_requests_in_flight", { class: "export" }), 2);
        assert.equal(await service.metrics.value("mdq_queue_length", { class: "export" }), 3);
        // Acme's first export ends: its place goes to globex, ahead of acme's two queued.
        store.open("brand-acme");
        await within(10_000, "globex's export at the gate", async () => store.arrivals.length === 3);
        assert.deepEqual(store.arrivals, ["brand-acme", "brand-acme", "brand-globex"]);
        assert.equal(await service.metrics.value("mdq_queue_length", { class: "export" }), 2);
        // Globex's export streams whole while acme's second is still held open.
        store.open("brand-globex");
        const globexLines = exportedLines(await globex);
        store.openAll();
        for (const answer of await Promise.all(acme)) exportedLines(answer);
        assert.deepEqual(store.arrivals, [
          "brand-acme",
          "brand-acme",
          "brand-globex",
          "brand-acme",
          "brand-acme",
        ]);
        // The same rows, byte for byte, as globex's export alone.
        assert.deepEqual(exportedLines(await exportOf("brand-globex")), globexLines);
        await within(
          10_000,
          "every export place given back",
          async () => service.lanes.exports.running === 0,
        );
        assert.equal(await service.metrics.value("mdq_queue_length", { class: "export" }), 0);
        assert.equal(await service.metrics.value("mdq_requests_in_flight", { class: "export" }), 0);
        const exposition = (await service.metrics.render()).body;
        assert.match(exposition, /^mdq_queue_wait_seconds_count\{[^}]*class="export"[^}]*\} 6$/m);
      } finally {
        store.openAll();
        await service.app.close();
      }
    });

    it("runs one export of a brand at a time by default: its next exports wait, another brand's runs at once", async () => {
      const { service, store, exportOf } = await gatedService({
        ...EXPORT_PLACES_ONLY,
        exportConcurrency: 3,
      });
      try {
        // MDQ_EXPORT_PER_BRAND unset: acme runs 1 of the 3 places, its other two exports wait.
        const acme = [exportOf("brand-acme"), exportOf("brand-acme"), exportOf("brand-acme")];
        await atGate(store, 1);
        await waitingExports(service, 2);
        assert.equal(service.lanes.exports.running, 1);
        // Globex's export takes a free place, ahead of acme's queued ones, without waiting.
        const globex = exportOf("brand-globex");
        await atGate(store, 2);
        assert.deepEqual(store.arrivals, ["brand-acme", "brand-globex"]);
        assert.equal(service.lanes.exports.waiting, 2);
        store.open("brand-globex");
        exportedLines(await globex);
        store.openAll();
        for (const answer of await Promise.all(acme)) exportedLines(answer);
        assert.deepEqual(store.arrivals, ["brand-acme", "brand-globex", "brand-acme", "brand-acme"]);
      } finally {
        store.openAll();
        await service.app.close();
      }
    });

    it("answers an export 429 RATE_LIMITED with Retry-After when the queue is full or its wait ran out", async () => {
      const { service, store, exportOf } = await gatedService({
        ...EXPORT_PLACES_ONLY,
        exportConcurrency: 2,
        exportPerBrand: 2,
        queueMaxLength: 1,
      });
      try {
        const admitted = [exportOf("brand-acme"), exportOf("brand-acme")];
        await atGate(store, 2);
        admitted.push(exportOf("brand-acme"));
        await waitingExports(service, 1);
        const refused = await exportOf("brand-globex");
        assert.equal(refused.status, 429);
        assert.equal(refused.headers["retry-after"], "5");
        assert.equal(refused.headers["content-type"], "application/json; charset=utf-8");
        assert.deepEqual(JSON.parse(refused.body), {
          errors: [
            {
              message:
                "no export place came free for this brand in time (this instance streams 2 at once, 2 of one brand); retry in 5 s",
              extensions: { code: "RATE_LIMITED" },
            },
          ],
        });
        assert.equal(
          await service.metrics.value("mdq_shed_requests_total", { class: "export", reason: "queue_full" }),
          1,
        );
        assert.deepEqual(store.arrivals, ["brand-acme", "brand-acme"]);
        store.openAll();
        for (const answer of await Promise.all(admitted)) exportedLines(answer);
      } finally {
        store.openAll();
        await service.app.close();
      }
      const waited = await gatedService({ ...EXPORT_PLACES_ONLY, exportConcurrency: 1, queueMaxWaitMs: 50 });
      try {
        const admitted = waited.exportOf("brand-acme");
        await atGate(waited.store, 1);
        const refused = await waited.exportOf("brand-globex");
        assert.equal(refused.status, 429);
        assert.equal(refused.headers["retry-after"], "5");
        assert.deepEqual(JSON.parse(refused.body), {
          errors: [
            {
              message:
                "no export place came free for this brand in time (this instance streams 1 at once, 1 of one brand); retry in 5 s",
              extensions: { code: "RATE_LIMITED" },
            },
          ],
        });
        assert.equal(
          await waited.service.metrics.value("mdq_shed_requests_total", {
            class: "export",
            reason: "wait_expired",
          }),
          1,
        );
        assert.equal(waited.service.lanes.exports.waiting, 0);
        waited.store.openAll();
        exportedLines(await admitted);
      } finally {
        waited.store.openAll();
        await waited.service.app.close();
      }
    });

    it("drops a queued export whose client leaves: it never opens, and the next brand's takes its place", async () => {
      const { service, store, exportOf, leaving } = await gatedService({
        ...EXPORT_PLACES_ONLY,
        exportConcurrency: 1,
      });
      try {
        const answers = [exportOf("brand-acme")];
        await atGate(store, 1);
        const leave = leaving.export("brand-globex");
        await waitingExports(service, 1);
        answers.push(exportOf("brand-initech"));
        await waitingExports(service, 2);
        leave();
        await waitingExports(service, 1);
        assert.equal(await service.metrics.value("mdq_queue_length", { class: "export" }), 1);
        assert.equal(
          await service.metrics.value("mdq_shed_requests_total", { class: "export", reason: "client_gone" }),
          1,
        );
        store.open();
        await within(10_000, "initech's export at the gate", async () => store.arrivals.length === 2);
        store.openAll();
        for (const answer of await Promise.all(answers)) exportedLines(answer);
        assert.deepEqual(store.arrivals, ["brand-acme", "brand-initech"]);
        await within(10_000, "the export place given back", async () => service.lanes.exports.running === 0);
        assert.equal(service.lanes.exports.waiting, 0);
      } finally {
        store.openAll();
        await service.app.close();
      }
    });

    it("streams an export of at most MDQ_EXPORT_SMALL_ROWS rows in the heavy lane, past the export places a large export holds", async () => {
      const oneDay = { from: region.whole().from, to: region.whole().from };
      // The rows of globex's first day and of acme's whole range, as the exports count them.
      const probe = await gatedService({});
      probe.store.openAll();
      const small = Number((await probe.exportOf("brand-globex", oneDay)).headers["mdq-row-count"]);
      const large = Number((await probe.exportOf("brand-acme")).headers["mdq-row-count"]);
      await probe.service.app.close();
      assert.ok(small > 0 && large > small, `${small} and ${large} rows`);

      const { service, store, exportOf } = await gatedService({
        exportConcurrency: 1,
        exportSmallRows: small,
      });
      try {
        // Acme's export opens in the heavy lane, counts more rows than a small export has, and
        // opens again in the export lane, where it holds the one place.
        const acme = exportOf("brand-acme");
        await atGate(store, 1);
        assert.equal(service.lanes.heavy.running, 1);
        store.open("brand-acme");
        await within(10_000, "acme's export opened again", async () => store.arrivals.length === 2);
        await atGate(store, 1);
        assert.equal(service.lanes.heavy.running, 0);
        assert.equal(service.lanes.exports.running, 1);
        // Globex's one day takes a heavy place, not the export place acme holds, and streams whole.
        const globex = exportOf("brand-globex", oneDay);
        await atGate(store, 2);
        assert.equal(service.lanes.heavy.running, 1);
        assert.equal(service.lanes.exports.waiting, 0);
        store.open("brand-globex");
        assert.equal(exportedLines(await globex).length, small);
        await within(
          10_000,
          "globex's heavy place given back",
          async () => service.lanes.heavy.running === 0,
        );
        store.openAll();
        assert.equal(exportedLines(await acme).length, large);
        assert.deepEqual(store.arrivals, ["brand-acme", "brand-acme", "brand-globex"]);
        await within(10_000, "the export place given back", async () => service.lanes.exports.running === 0);
      } finally {
        store.openAll();
        await service.app.close();
      }
    });

    it("answers an export 429 RATE_LIMITED with Retry-After when the heavy lane it opens in has no room", async () => {
      const { service, store, ask, exportOf } = await gatedService({ queueMaxLength: 0 });
      try {
        const page = ask("brand-acme", RECORDS);
        await atGate(store, 1);
        const refused = await exportOf("brand-globex");
        assert.equal(refused.status, 429);
        assert.equal(refused.headers["retry-after"], "5");
        assert.equal(JSON.parse(refused.body).errors[0].extensions.code, "RATE_LIMITED");
        assert.match(
          JSON.parse(refused.body).errors[0].message,
          /^the instance is busy: no place came free in time to open this export \(1 records pages, aggregates and exports of at most 5000 rows at once\); retry in 5 s$/,
        );
        assert.equal(
          await service.metrics.value("mdq_shed_requests_total", { class: "heavy", reason: "queue_full" }),
          1,
        );
        store.openAll();
        assert.equal((await page).statusCode, 200);
        assert.deepEqual(store.arrivals, ["brand-acme"]);
      } finally {
        store.openAll();
        await service.app.close();
      }
    });
  });
}
