/**
 * One conformance suite for every `Store` implementation (STYLE principle 4): the embedded
 * DuckDB store and the PostgreSQL store (a fresh, migrated database per run) must answer every
 * operation identically — brands, apps, grants, FX rates, loads (atomic, record-id conflicts,
 * concurrent loads of one brand), readiness, status, queries with paging, sorting and filters,
 * missing FX rates, data versions, the key ring and ping.
 *
 * Each test uses brands of its own, so the tests share one store per engine. FX rates are
 * region-wide: they are set once (GBP from 2021-03-01, JPY; never CHF), and the FX test uses a
 * currency nothing else reads (NZD). Expected values are worked out by hand in the comments
 * (amounts e4, rates e6; see money.test.ts for the formulas).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { RECORD_FIELDS } from "@mdq/contract";
import { createMigratedDatabase } from "@mdq/test-support";
import { recordObjects } from "../src/graphql/records-json.js";
import { readRecordsFile } from "../src/load/records-file.js";
import { openDuckDbStore } from "../src/store/duckdb/duckdb-store.js";
import type {
  AggregateQuery,
  RecordField,
  RecordsQuery,
  RowScope,
} from "../src/store/model/query-request.js";
import {
  type App,
  type FxRate,
  type Grants,
  type KeyRingStore,
  keepsKeyRing,
  type LoadOrigin,
  type Store,
  type StoredRecord,
} from "../src/store/model/store.js";
import { MissingFxRateError, RecordIdConflictError } from "../src/store/model/store-errors.js";
import { openPostgresStore } from "../src/store/postgres/postgres-store.js";
import { record } from "./stored-records.js";

interface Engine {
  name: "duckdb" | "postgres";
  open(): Promise<{ store: Store; cleanup(): Promise<void> }>;
}

const ENGINES: Engine[] = [
  {
    name: "duckdb",
    async open() {
      const dataDir = await mkdtemp(join(tmpdir(), "mdq-conformance-"));
      const store = await openDuckDbStore(dataDir);
      return {
        store,
        async cleanup() {
          await store.close();
          await rm(dataDir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: "postgres",
    async open() {
      const database = await createMigratedDatabase();
      const store = await openPostgresStore({ url: database.url, poolSize: 4 });
      return {
        store,
        async cleanup() {
          await store.close();
          await database.drop();
        },
      };
    },
  },
];

/** GBP 0.85 from Mon 2021-03-01 and 0.80 from Wed 03-03; JPY 120 from 03-01; CHF never. */
const RATES: FxRate[] = [
  { currency: "GBP", date: "2021-03-01", rateE6: 850_000n },
  { currency: "GBP", date: "2021-03-03", rateE6: 800_000n },
  { currency: "JPY", date: "2021-03-01", rateE6: 120_000_000n },
];

/** The query brand's records (r06 is tiktok_ads, outside the scope below). */
const QUERY_RECORDS: StoredRecord[] = [
  record("r01", "2021-03-01", { conversionsE4: 10_000n, revenueE4: 20_000n, campaignName: "A" }),
  record("r02", "2021-03-01", {
    market: "GB",
    dataSource: "meta_ads",
    channel: "social",
    campaignId: "cmp-b",
    campaignName: "B",
    impressions: 200,
    clicks: 5,
    spendE4: 8_500n,
    currency: "GBP",
  }),
  record("r03", "2021-03-02", {
    dataSource: "meta_ads",
    channel: "social",
    campaignName: "A",
    impressions: 300,
    clicks: 30,
    spendE4: 25_000n,
    conversionsE4: 20_000n,
    revenueE4: 50_000n,
  }),
  record("r04", "2021-03-02", {
    market: "GB",
    campaignId: "cmp-b",
    campaignName: "B",
    impressions: 50,
    clicks: 1,
    spendE4: 1_275n,
    conversionsE4: 5_000n,
    currency: "GBP",
  }),
  record("r05", "2021-03-03", {
    market: "FR",
    channel: "display",
    campaignId: "cmp-c",
    campaignName: "C",
    impressions: 400,
    clicks: 4,
    spendE4: 3_333n,
    revenueE4: 1n,
  }),
  record("r06", "2021-03-03", { dataSource: "tiktok_ads", channel: "video", campaignId: "cmp-d" }),
  record("r07", "2021-03-04", {
    market: "GB",
    campaignId: "cmp-b",
    campaignName: "B",
    impressions: 60,
    clicks: 2,
    spendE4: 16_000n,
    conversionsE4: 10_000n,
    revenueE4: 32_000n,
    currency: "GBP",
  }),
  record("r08", "2021-03-04", { campaignName: "A" }),
];

const ALL_FIELDS: RecordField[] = [...RECORD_FIELDS];

function scopeOf(brandId: string, overrides: Partial<RowScope> = {}): RowScope {
  return {
    brandId,
    from: "2021-03-01",
    to: "2021-03-04",
    markets: ["DE", "FR", "GB"],
    dataSources: ["google_ads", "meta_ads"],
    channels: null,
    campaignIds: null,
    ...overrides,
  };
}

function recordsQuery(brandId: string, overrides: Partial<RecordsQuery> = {}): RecordsQuery {
  return {
    scope: scopeOf(brandId),
    currency: "EUR",
    fields: ["recordId"],
    sort: [{ field: "DATE_DAY", direction: "DESC" }],
    page: { page: 1, pageSize: 100 },
    ...overrides,
  };
}

function aggregateQuery(brandId: string, overrides: Partial<AggregateQuery> = {}): AggregateQuery {
  return {
    scope: scopeOf(brandId),
    currency: "EUR",
    metrics: ["IMPRESSIONS"],
    groupBy: [],
    sort: [],
    page: { page: 1, pageSize: 100 },
    ...overrides,
  };
}

/**
 * The records page `query` asks, its rows as the objects GraphQL execution serialises
 * (graphql/records-json.ts `recordObjects`), each with the query's currency.
 */
async function recordsPage(store: Store, query: RecordsQuery) {
  const [page] = await store.queryRecords(query);
  assert.ok(page, "the store answered no page");
  const rows: Record<string, unknown>[] = recordObjects(page).map((row) => ({
    ...row,
    currency: query.currency,
  }));
  return { ...page, rows };
}

async function recordIds(store: Store, query: RecordsQuery): Promise<string[]> {
  return (await recordsPage(store, query)).rows.map((row) => String(row["recordId"]));
}

function app(appClientId: string, brandId: string, overrides: Partial<App> = {}): App {
  return {
    appClientId,
    brandId,
    name: `App ${appClientId}`,
    secretHash: "a".repeat(64),
    previousSecretHash: null,
    previousSecretExpiresAt: null,
    markets: null,
    dataSources: null,
    revokedAt: null,
    createdAt: new Date("2021-03-01T10:00:00.123Z"),
    ...overrides,
  };
}

async function* failingSource(records: StoredRecord[]): AsyncGenerator<StoredRecord> {
  for (const entry of records) yield entry;
  throw new Error("the source broke mid-way");
}

for (const engine of ENGINES) {
  describe(`store conformance: ${engine.name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;

    before(async () => {
      ({ store, cleanup } = await engine.open());
      await store.upsertFxRates(RATES);
      await store.replaceRecords("cf-query", QUERY_RECORDS, { processingDate: "2021-03-05", source: "test" });
    });

    after(async () => {
      await cleanup();
    });

    it(`reports its engine (${engine.name}) and answers ping`, async () => {
      assert.equal(store.engine, engine.name);
      await store.ping();
    });

    it("creates, finds and lists brands in id order", async () => {
      const createdAt = new Date("2021-02-01T08:30:00.250Z");
      await store.createBrand({ brandId: "cf-brand-b", name: "Brand B", createdAt });
      await store.createBrand({ brandId: "cf-brand-a", name: "Brand Ä", createdAt });
      assert.deepEqual(await store.findBrand("cf-brand-a"), {
        brandId: "cf-brand-a",
        name: "Brand Ä",
        createdAt,
      });
      assert.equal(await store.findBrand("cf-brand-none"), undefined);
      const listed = (await store.listBrands()).filter((brand) => brand.brandId.startsWith("cf-brand-"));
      assert.deepEqual(
        listed.map((brand) => brand.brandId),
        ["cf-brand-a", "cf-brand-b"],
      );
      await assert.rejects(store.createBrand({ brandId: "cf-brand-a", name: "again", createdAt }));
    });

    it("creates, finds, lists and updates apps", async () => {
      const plain = app("cf-app-1", "cf-apps");
      const narrowed = app("cf-app-0", "cf-apps", { markets: ["GB"], dataSources: [] });
      const other = app("cf-app-2", "cf-apps-other");
      for (const entry of [plain, narrowed, other]) await store.createApp(entry);
      assert.deepEqual(await store.findApp("cf-app-1"), plain);
      assert.deepEqual(await store.findApp("cf-app-0"), narrowed);
      assert.equal(await store.findApp("cf-app-none"), undefined);
      assert.deepEqual(await store.listApps("cf-apps"), [narrowed, plain]);
      const all = (await store.listApps()).filter((entry) => entry.appClientId.startsWith("cf-app-"));
      assert.deepEqual(all, [narrowed, plain, other]);

      const rotated: App = {
        ...plain,
        name: "Renamed",
        secretHash: "b".repeat(64),
        previousSecretHash: "a".repeat(64),
        previousSecretExpiresAt: new Date("2021-03-02T00:00:00.999Z"),
        markets: ["DE", "FR"],
        dataSources: ["google_ads"],
        revokedAt: new Date("2021-03-03T12:00:00.001Z"),
      };
      await store.updateApp(rotated);
      assert.deepEqual(await store.findApp("cf-app-1"), rotated);
      const cleared: App = {
        ...rotated,
        previousSecretHash: null,
        previousSecretExpiresAt: null,
        revokedAt: null,
      };
      await store.updateApp({ ...cleared, markets: null, dataSources: null });
      assert.deepEqual(await store.findApp("cf-app-1"), { ...cleared, markets: null, dataSources: null });
      await assert.rejects(store.createApp(app("cf-app-1", "cf-apps")));
    });

    it("adds grants idempotently, removes them, and keeps brands apart", async () => {
      assert.deepEqual(await store.brandGrants("cf-grants"), { markets: [], dataSources: [] });
      await store.addGrants("cf-grants", { markets: ["GB", "DE"], dataSources: ["meta_ads"] });
      await store.addGrants("cf-grants", { markets: ["DE", "US"] });
      await store.addGrants("cf-grants-other", { markets: ["JP"], dataSources: ["amazon_ads"] });
      assert.deepEqual(await store.brandGrants("cf-grants"), {
        markets: ["DE", "GB", "US"],
        dataSources: ["meta_ads"],
      });
      await store.removeGrants("cf-grants", { markets: ["GB", "FR"], dataSources: ["meta_ads"] });
      assert.deepEqual(await store.brandGrants("cf-grants"), { markets: ["DE", "US"], dataSources: [] });
      assert.deepEqual(await store.brandGrants("cf-grants-other"), {
        markets: ["JP"],
        dataSources: ["amazon_ads"],
      });
    });

    it("upserts FX rates: a day's rate is replaced, and later days use the latest earlier rate", async () => {
      await store.replaceRecords("cf-fx", [record("x1", "2021-06-01"), record("x2", "2021-06-02")]);
      await store.upsertFxRates([{ currency: "NZD", date: "2021-06-01", rateE6: 1_500_000n }]);
      const spend = async () =>
        (
          await recordsPage(
            store,
            recordsQuery("cf-fx", {
              scope: scopeOf("cf-fx", { from: "2021-06-01", to: "2021-06-02" }),
              currency: "NZD",
              fields: ["recordId", "spend"],
            }),
          )
        ).rows;
      // EUR 1.0000 at 1.5 on 06-01 and (no rate that day) 06-02.
      assert.deepEqual(await spend(), [
        { recordId: "x2", spend: 1.5, currency: "NZD" },
        { recordId: "x1", spend: 1.5, currency: "NZD" },
      ]);
      await store.upsertFxRates([
        { currency: "NZD", date: "2021-06-01", rateE6: 2_000_000n },
        { currency: "NZD", date: "2021-06-02", rateE6: 1_234_567n },
      ]);
      // 10000 × 1234567 ÷ (10⁶ × 100) = 123.4567 → 123.
      assert.deepEqual(await spend(), [
        { recordId: "x2", spend: 1.23, currency: "NZD" },
        { recordId: "x1", spend: 2, currency: "NZD" },
      ]);
    });

    it("replaces only the loaded days of one brand and summarises the load", async () => {
      const first = await store.replaceRecords(
        "cf-load",
        [record("a1", "2021-03-01"), record("a2", "2021-03-01"), record("b1", "2021-03-02")],
        { processingDate: "2021-03-03", source: "first" },
      );
      assert.match(first.loadId, /^load_[0-9a-f]{16}$/);
      assert.deepEqual(
        { ...first, loadId: "" },
        { loadId: "", rows: 3, days: 2, from: "2021-03-01", to: "2021-03-02", processingDate: "2021-03-03" },
      );
      await store.replaceRecords("cf-load-other", [record("a1", "2021-03-02")]);
      // Days 03-02 and 03-04 are replaced (b1 goes); 03-01 is left alone.
      const second = await store.replaceRecords(
        "cf-load",
        [record("c1", "2021-03-02", { impressions: 7 }), record("b9", "2021-03-04")],
        { processingDate: "2021-03-04", source: "second" },
      );
      assert.deepEqual(
        { ...second, loadId: "" },
        { loadId: "", rows: 2, days: 2, from: "2021-03-02", to: "2021-03-04", processingDate: "2021-03-04" },
      );
      const query = recordsQuery("cf-load", {
        scope: scopeOf("cf-load", { from: "2021-03-01", to: "2021-03-05" }),
        fields: ["recordId", "date", "impressions"],
        sort: [{ field: "DATE_DAY", direction: "ASC" }],
      });
      assert.deepEqual((await recordsPage(store, query)).rows, [
        { recordId: "a1", date: "2021-03-01", impressions: 100, currency: "EUR" },
        { recordId: "a2", date: "2021-03-01", impressions: 100, currency: "EUR" },
        { recordId: "c1", date: "2021-03-02", impressions: 7, currency: "EUR" },
        { recordId: "b9", date: "2021-03-04", impressions: 100, currency: "EUR" },
      ]);
      assert.deepEqual(
        await recordIds(store, { ...query, scope: { ...query.scope, brandId: "cf-load-other" } }),
        ["a1"],
      );
      const empty = await store.replaceRecords("cf-load-empty", [], {
        processingDate: "2021-03-04",
        source: "x",
      });
      assert.deepEqual(
        { ...empty, loadId: "" },
        { loadId: "", rows: 0, days: 0, from: null, to: null, processingDate: "2021-03-04" },
      );
      assert.equal(await store.hasLoad("cf-load-empty", "2021-03-04"), true);
    });

    it("lets a record id move within the replaced days, and refuses one kept on another day, changing nothing", async () => {
      await store.replaceRecords("cf-conflict", [
        record("a1", "2021-03-01"),
        record("a2", "2021-03-01"),
        record("b1", "2021-03-02"),
        record("c1", "2021-03-05"),
      ]);
      const before = await recordIds(
        store,
        recordsQuery("cf-conflict", { scope: scopeOf("cf-conflict", { to: "2021-03-06" }) }),
      );
      const version = (await recordsPage(store, recordsQuery("cf-conflict"))).dataVersion;
      await assert.rejects(
        store.replaceRecords(
          "cf-conflict",
          [record("c1", "2021-03-03"), record("a2", "2021-03-03"), record("z1", "2021-03-03")],
          { processingDate: "2021-03-09", source: "clash" },
        ),
        (error: unknown) => {
          assert.ok(error instanceof RecordIdConflictError);
          assert.deepEqual(error.clashes, [
            { recordId: "a2", keptDay: "2021-03-01" },
            { recordId: "c1", keptDay: "2021-03-05" },
          ]);
          return true;
        },
      );
      const scope = scopeOf("cf-conflict", { to: "2021-03-06" });
      assert.deepEqual(await recordIds(store, recordsQuery("cf-conflict", { scope })), before);
      assert.equal(await store.hasLoad("cf-conflict", "2021-03-09"), false);
      assert.equal((await recordsPage(store, recordsQuery("cf-conflict"))).dataVersion, version);
      // Swapping days between the replaced days is fine.
      await store.replaceRecords("cf-conflict", [record("a1", "2021-03-02"), record("b1", "2021-03-01")]);
      assert.deepEqual(await recordIds(store, recordsQuery("cf-conflict", { scope })), ["c1", "a1", "b1"]);
    });

    it("loads a checked file from its stored files (rows, rollup, record ids): replaced days, kept days, clashes", async () => {
      const work = await mkdtemp(join(tmpdir(), "mdq-conformance-files-"));
      const header =
        "record_id,date,market,data_source,channel,campaign_id,campaign_name,impressions,clicks,spend,conversions,revenue,currency";
      const line = (id: string, date: string, source = "google_ads", spend = "1.5") =>
        `${id},${date},DE,${source},search,cmp-a,"Campaign, A",100,10,${spend},0,2.25,EUR`;
      let files = 0;
      /** `lines` read and checked by `readRecordsFile`, then loaded from the files it writes. */
      const loadFile = async (lines: string[], origin: LoadOrigin) => {
        const path = join(work, `load-${++files}.csv`);
        await writeFile(path, `${header}\n${lines.join("\n")}\n`);
        const file = await readRecordsFile(path);
        const stored = {
          path: join(work, `stored-${files}.${store.storedFileFormat}`),
          rolledUpPath: join(work, `rolled-up-${files}.csv`),
          recordIdsPath: join(work, `record-ids-${files}.csv`),
        };
        try {
          const rows = await file.exportLoad("cf-files", stored, store.storedFileFormat);
          return await store.replaceRecordsFromStoredFile("cf-files", { ...stored, rows }, origin);
        } finally {
          file.close();
        }
      };
      const query = recordsQuery("cf-files", { fields: ["recordId", "date", "dataSource", "spend"] });
      try {
        const first = await loadFile(
          [line("a1", "2021-03-01"), line("a2", "2021-03-01", "meta_ads"), line("b1", "2021-03-02")],
          { processingDate: "2021-03-03", source: "first" },
        );
        assert.deepEqual(
          { rows: first.rows, days: first.days, from: first.from, to: first.to },
          { rows: 3, days: 2, from: "2021-03-01", to: "2021-03-02" },
        );
        // Every day again, ids moved between them: nothing kept, nothing to clash with.
        await loadFile([line("b1", "2021-03-01", "google_ads", "4"), line("a1", "2021-03-02")], {
          processingDate: "2021-03-04",
          source: "reload",
        });
        assert.deepEqual((await recordsPage(store, query)).rows, [
          { recordId: "a1", date: "2021-03-02", dataSource: "google_ads", spend: 1.5, currency: "EUR" },
          { recordId: "b1", date: "2021-03-01", dataSource: "google_ads", spend: 4, currency: "EUR" },
        ]);
        // Meta's rows of 03-02 alone: Google's row of that day stays, and a1 may not move onto it.
        await assert.rejects(
          loadFile([line("a1", "2021-03-01", "meta_ads")], {
            processingDate: "2021-03-05",
            source: "clash",
            replace: "sources",
          }),
          (error: unknown) => {
            assert.ok(error instanceof RecordIdConflictError);
            assert.deepEqual(error.clashes, [{ recordId: "a1", keptDay: "2021-03-02" }]);
            return true;
          },
        );
        assert.equal(await store.hasLoad("cf-files", "2021-03-05"), false);
        await loadFile([line("m1", "2021-03-02", "meta_ads", "2")], {
          processingDate: "2021-03-06",
          source: "meta",
          replace: "sources",
        });
        assert.deepEqual(await recordIds(store, query), ["a1", "m1", "b1"]);
        const status = await store.brandDataStatus("cf-files");
        assert.deepEqual(
          { rows: status.rows, firstDay: status.firstDay, lastDay: status.lastDay },
          { rows: 3, firstDay: "2021-03-01", lastDay: "2021-03-02" },
        );
        // Read from the rollup, which a file load brings from its own file: 1.5 + 2 + 4.
        const total = await store.queryAggregate(aggregateQuery("cf-files", { metrics: ["SPEND"] }));
        assert.deepEqual(total.rows, [{ TOTAL_SPEND: 7.5, currency: "EUR" }]);
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    });

    it("changes nothing when the record source fails mid-way", async () => {
      await store.replaceRecords("cf-atomic", [record("a1", "2021-03-01"), record("b1", "2021-03-02")], {
        processingDate: "2021-03-03",
        source: "good",
      });
      const status = await store.brandDataStatus("cf-atomic");
      const version = (await recordsPage(store, recordsQuery("cf-atomic"))).dataVersion;
      const many = Array.from({ length: 2_000 }, (_, index) => record(`n${index}`, "2021-03-02"));
      await assert.rejects(
        store.replaceRecords("cf-atomic", failingSource(many), {
          processingDate: "2021-03-04",
          source: "bad",
        }),
        { message: "the source broke mid-way" },
      );
      assert.deepEqual(await store.brandDataStatus("cf-atomic"), status);
      assert.deepEqual(await recordIds(store, recordsQuery("cf-atomic")), ["b1", "a1"]);
      assert.equal(await store.hasLoad("cf-atomic", "2021-03-04"), false);
      assert.equal((await recordsPage(store, recordsQuery("cf-atomic"))).dataVersion, version);
      // The store still loads afterwards.
      await store.replaceRecords("cf-atomic", [record("b2", "2021-03-02")]);
      assert.deepEqual(await recordIds(store, recordsQuery("cf-atomic")), ["b2", "a1"]);
    });

    it("leaves exactly one of two concurrent loads of the same days, never a mix", async () => {
      const left = Array.from({ length: 300 }, (_, index) => record(`l${index}`, "2021-03-05"));
      const right = Array.from({ length: 200 }, (_, index) => record(`r${index}`, "2021-03-05"));
      await Promise.all([
        store.replaceRecords("cf-concurrent", left),
        store.replaceRecords("cf-concurrent", right),
      ]);
      const ids = await recordIds(
        store,
        recordsQuery("cf-concurrent", {
          scope: scopeOf("cf-concurrent", { from: "2021-03-05", to: "2021-03-05" }),
          page: { page: 1, pageSize: 1_000 },
        }),
      );
      assert.ok(ids.length === 300 || ids.length === 200, `${ids.length} rows`);
      assert.ok(
        ids.every((id) => id[0] === ids[0]![0]),
        "rows of both loads",
      );
    });

    it("records loads by brand and processing date", async () => {
      await store.replaceRecords("cf-has-load", [record("a1", "2021-03-01")], {
        processingDate: "2021-03-02",
        source: "test",
      });
      assert.equal(await store.hasLoad("cf-has-load", "2021-03-02"), true);
      assert.equal(await store.hasLoad("cf-has-load", "2021-03-03"), false);
      assert.equal(await store.hasLoad("cf-has-load-other", "2021-03-02"), false);
    });

    it("publishes and reports readiness and the brand's data status", async () => {
      const brandId = "cf-ready";
      let loadedVersion: string | undefined;
      /** Readiness facts; the brand's data version must stay the one its load set (publishing is no change). */
      const readinessOf = async (id: string, date: string, grantsOf: Grants) => {
        const { dataVersion, ...facts } = await store.readiness(id, date, grantsOf);
        assert.match(dataVersion, /^[0-9]+$/);
        loadedVersion ??= dataVersion;
        assert.equal(dataVersion, loadedVersion);
        return facts;
      };
      const grants = { markets: ["DE"], dataSources: ["google_ads"] };
      assert.deepEqual(await store.brandDataStatus(brandId), {
        rows: 0,
        firstDay: null,
        lastDay: null,
        lastPublishedAt: null,
        lastPublishedDate: null,
      });
      await store.replaceRecords(brandId, [
        record("a", "2021-03-01"),
        record("b", "2021-03-05", { dataSource: "meta_ads" }),
        record("c", "2021-03-07", { market: "GB" }),
      ]);
      assert.deepEqual(await readinessOf(brandId, "2021-03-08", grants), {
        published: false,
        lastProcessedAt: null,
        availableThrough: "2021-03-01",
      });
      const first = new Date("2021-03-08T06:00:00.100Z");
      const second = new Date("2021-03-09T06:00:00.200Z");
      const again = new Date("2021-03-09T07:00:00.300Z");
      await store.publish(brandId, "2021-03-08", first);
      assert.deepEqual(await readinessOf(brandId, "2021-03-08", grants), {
        published: true,
        lastProcessedAt: first,
        availableThrough: "2021-03-01",
      });
      await store.publish(brandId, "2021-03-09", second);
      await store.publish(brandId, "2021-03-08", again);
      assert.deepEqual(
        await readinessOf(brandId, "2021-03-10", {
          markets: ["DE", "GB"],
          dataSources: ["google_ads", "meta_ads"],
        }),
        {
          published: false,
          lastProcessedAt: again,
          availableThrough: "2021-03-07",
        },
      );
      assert.deepEqual(
        await readinessOf(brandId, "2021-03-09", { markets: [], dataSources: ["google_ads"] }),
        {
          published: true,
          lastProcessedAt: again,
          availableThrough: null,
        },
      );
      assert.deepEqual(await store.brandDataStatus(brandId), {
        rows: 3,
        firstDay: "2021-03-01",
        lastDay: "2021-03-07",
        lastPublishedAt: second,
        lastPublishedDate: "2021-03-09",
      });
    });

    it("reads a page of records with every field, converted and rounded half-even (EUR)", async () => {
      const result = await recordsPage(store, recordsQuery("cf-query", { fields: ALL_FIELDS }));
      assert.equal(result.totalCount, 7);
      const row = (id: string, date: string, rest: Record<string, unknown>) => ({
        recordId: id,
        date,
        market: "DE",
        dataSource: "google_ads",
        channel: "search",
        campaignId: "cmp-a",
        campaignName: "A",
        impressions: 100,
        clicks: 10,
        spend: 1,
        conversions: 0,
        revenue: 0,
        currency: "EUR",
        ...rest,
      });
      const gb = { market: "GB", campaignId: "cmp-b", campaignName: "B" };
      assert.deepEqual(result.rows, [
        // 16000 × 10⁶ ÷ (800000 × 100) = 200 cents; revenue 400.
        row("r07", "2021-03-04", { ...gb, impressions: 60, clicks: 2, spend: 2, conversions: 1, revenue: 4 }),
        row("r08", "2021-03-04", {}),
        // 3333 ÷ 100 = 33.33 → 33; revenue 1 ÷ 100 → 0.
        row("r05", "2021-03-03", {
          market: "FR",
          channel: "display",
          campaignId: "cmp-c",
          campaignName: "C",
          impressions: 400,
          clicks: 4,
          spend: 0.33,
        }),
        row("r03", "2021-03-02", {
          dataSource: "meta_ads",
          channel: "social",
          impressions: 300,
          clicks: 30,
          spend: 2.5,
          conversions: 2,
          revenue: 5,
        }),
        // GBP 1275 on 03-02 at 03-01's 0.85: 1275 × 10⁶ ÷ (850000 × 100) = 15.
        row("r04", "2021-03-02", { ...gb, impressions: 50, clicks: 1, spend: 0.15, conversions: 0.5 }),
        row("r01", "2021-03-01", { conversions: 1, revenue: 2 }),
        row("r02", "2021-03-01", {
          ...gb,
          dataSource: "meta_ads",
          channel: "social",
          impressions: 200,
          clicks: 5,
          spend: 1,
        }),
      ]);
    });

    it("converts records to GBP and JPY, and sorts by converted money with record_id breaking ties", async () => {
      const spend = async (currency: "GBP" | "JPY") =>
        (
          await recordsPage(
            store,
            recordsQuery("cf-query", {
              currency,
              fields: ["recordId", "spend", "revenue"],
              sort: [{ field: "SPEND", direction: "DESC" }],
            }),
          )
        ).rows;
      // GBP: r03 25000 × 0.85 ÷ 100 = 212.5 → 212 (even); r01 and r02 tie at 85 (r01 first);
      // r05 3333 × 0.80 ÷ 100 = 26.664 → 27; r04 1275 ÷ 100 = 12.75 → 13.
      assert.deepEqual(await spend("GBP"), [
        { recordId: "r03", spend: 2.12, revenue: 4.25, currency: "GBP" },
        { recordId: "r07", spend: 1.6, revenue: 3.2, currency: "GBP" },
        { recordId: "r01", spend: 0.85, revenue: 1.7, currency: "GBP" },
        { recordId: "r02", spend: 0.85, revenue: 0, currency: "GBP" },
        { recordId: "r08", spend: 0.8, revenue: 0, currency: "GBP" },
        { recordId: "r05", spend: 0.27, revenue: 0, currency: "GBP" },
        { recordId: "r04", spend: 0.13, revenue: 0, currency: "GBP" },
      ]);
      // Sorting by money converts even when no money is selected.
      assert.deepEqual(
        await recordIds(
          store,
          recordsQuery("cf-query", { currency: "GBP", sort: [{ field: "SPEND", direction: "ASC" }] }),
        ),
        ["r04", "r05", "r08", "r01", "r02", "r07", "r03"],
      );
      // JPY (no minor unit): r03 25000 × 120 ÷ 10000 = 300; r07 GBP 16000 × 120 ÷ 0.80 ÷ 10000 = 240;
      // r02 8500 × 120 ÷ 0.85 ÷ 10000 = 120; r01 = r08 = 120; r04 1275 × 120 ÷ 0.85 ÷ 10000 = 18;
      // r05 3333 × 120 ÷ 10000 = 39.996 → 40.
      assert.deepEqual(
        (await spend("JPY")).map((row) => [row["recordId"], row["spend"]]),
        [
          ["r03", 300],
          ["r07", 240],
          ["r01", 120],
          ["r02", 120],
          ["r08", 120],
          ["r05", 40],
          ["r04", 18],
        ],
      );
    });

    it("pages with a stable order, sorts by several keys, and filters", async () => {
      const page = (number: number) =>
        recordsPage(store, recordsQuery("cf-query", { page: { page: number, pageSize: 3 } }));
      const pages = await Promise.all([1, 2, 3, 4].map(page));
      assert.deepEqual(
        pages.map((result) => result.rows.map((row) => row["recordId"])),
        [["r07", "r08", "r05"], ["r03", "r04", "r01"], ["r02"], []],
      );
      assert.deepEqual(
        pages.map((result) => result.totalCount),
        [7, 7, 7, 7],
      );
      const sorted = async (sort: RecordsQuery["sort"]) =>
        recordIds(store, recordsQuery("cf-query", { sort }));
      assert.deepEqual(
        await sorted([
          { field: "MARKET", direction: "ASC" },
          { field: "IMPRESSIONS", direction: "DESC" },
        ]),
        ["r03", "r01", "r08", "r05", "r02", "r07", "r04"],
      );
      assert.deepEqual(
        await sorted([
          { field: "CAMPAIGN_ID", direction: "DESC" },
          { field: "CONVERSIONS", direction: "ASC" },
        ]),
        ["r05", "r02", "r04", "r07", "r08", "r01", "r03"],
      );
      const filtered = async (overrides: Partial<RowScope>) =>
        recordIds(store, recordsQuery("cf-query", { scope: scopeOf("cf-query", overrides) }));
      assert.deepEqual(await filtered({ channels: ["search"] }), ["r07", "r08", "r04", "r01"]);
      assert.deepEqual(await filtered({ campaignIds: ["cmp-b", "cmp-none"] }), ["r07", "r04", "r02"]);
      assert.deepEqual(await filtered({ markets: ["GB"], dataSources: ["meta_ads"] }), ["r02"]);
      assert.deepEqual(await filtered({ dataSources: ["tiktok_ads"] }), ["r06"]);
      assert.deepEqual(await filtered({ from: "2021-03-02", to: "2021-03-03" }), ["r05", "r03", "r04"]);
      assert.deepEqual(await filtered({ markets: [] }), []);
      const none = await recordsPage(
        store,
        recordsQuery("cf-query", { scope: scopeOf("cf-query", { dataSources: [] }) }),
      );
      assert.equal(none.totalCount, 0);
      assert.deepEqual(await filtered({ brandId: "cf-nobody" }), []);
    });

    it("walks the day sort page after page (keyset reads) with the offset pages' answers", async () => {
      const walk = async (direction: "ASC" | "DESC", currency: RecordsQuery["currency"] = "EUR") => {
        const pages: string[][] = [];
        for (let page = 1; page <= 4; page += 1) {
          const result = await recordsPage(
            store,
            recordsQuery("cf-query", {
              sort: [{ field: "DATE_DAY", direction }],
              currency,
              page: { page, pageSize: 2 },
            }),
          );
          assert.equal(result.totalCount, 7);
          pages.push(result.rows.map((row) => String(row["recordId"])));
        }
        return pages;
      };
      assert.deepEqual(await walk("DESC"), [["r07", "r08"], ["r05", "r03"], ["r04", "r01"], ["r02"]]);
      assert.deepEqual(await walk("ASC"), [["r01", "r02"], ["r03", "r04"], ["r05", "r07"], ["r08"]]);
      // Asked again (now from remembered boundaries), and out of order: the same pages.
      assert.deepEqual(await walk("DESC"), [["r07", "r08"], ["r05", "r03"], ["r04", "r01"], ["r02"]]);
      assert.deepEqual(await recordIds(store, recordsQuery("cf-query", { page: { page: 3, pageSize: 2 } })), [
        "r04",
        "r01",
      ]);
      // A missing rate is refused on every page of a walk, not only the first.
      for (const page of [1, 2])
        await assert.rejects(
          recordsPage(
            store,
            recordsQuery("cf-query", { fields: ALL_FIELDS, currency: "CHF", page: { page, pageSize: 2 } }),
          ),
          MissingFxRateError,
        );
    });

    it("walks any sort page after page from each page's boundary, with the single page's answer", async () => {
      const sorts: RecordsQuery["sort"][] = [
        [{ field: "SPEND", direction: "DESC" }],
        [{ field: "REVENUE", direction: "ASC" }],
        [
          { field: "CAMPAIGN_ID", direction: "ASC" },
          { field: "CLICKS", direction: "DESC" },
        ],
        [
          { field: "MARKET", direction: "DESC" },
          { field: "DATE_DAY", direction: "ASC" },
        ],
        [{ field: "CONVERSIONS", direction: "ASC" }],
        [{ field: "CHANNEL", direction: "DESC" }],
      ];
      for (const sort of sorts) {
        for (const currency of ["GBP", "JPY"] as const) {
          const fields: RecordField[] = ["recordId", "spend", "campaignId"];
          const whole = await recordsPage(
            store,
            recordsQuery("cf-query", { sort, currency, fields, page: { page: 1, pageSize: 100 } }),
          );
          const walked: Record<string, unknown>[] = [];
          // Each page after the first continues from the one before (its sort keys, ties included).
          for (let page = 1; page <= 4; page += 1) {
            const result = await recordsPage(
              store,
              recordsQuery("cf-query", { sort, currency, fields, page: { page, pageSize: 2 } }),
            );
            assert.equal(result.totalCount, 7);
            walked.push(...result.rows);
          }
          assert.deepEqual(walked, whole.rows, `${JSON.stringify(sort)} in ${currency}`);
          // Page 3 of a walk not begun (other fields: no boundary before it) reads its offset.
          const third = await recordsPage(
            store,
            recordsQuery("cf-query", {
              sort,
              currency,
              fields: [...fields, "clicks"],
              page: { page: 3, pageSize: 2 },
            }),
          );
          assert.deepEqual(
            third.rows.map((row) => row["recordId"]),
            whole.rows.slice(4, 6).map((row) => row["recordId"]),
          );
        }
      }
    });

    it("answers a walk's next page from the new data when a load lands between two pages", async () => {
      const brandId = "cf-walk";
      const days = ["2021-03-01", "2021-03-02", "2021-03-03"];
      await store.replaceRecords(brandId, [
        record("w1", days[0]!),
        record("w2", days[1]!),
        record("w3", days[2]!),
      ]);
      const page = async (number: number) => {
        const result = await recordsPage(
          store,
          recordsQuery(brandId, { page: { page: number, pageSize: 1 } }),
        );
        return { ids: result.rows.map((row) => String(row["recordId"])), total: result.totalCount };
      };
      assert.deepEqual(await page(1), { ids: ["w3"], total: 3 });
      // A new record on the newest day moves every later row down one place.
      await store.replaceRecords(brandId, [record("w0", days[2]!), record("w3", days[2]!)]);
      assert.deepEqual(await page(2), { ids: ["w3"], total: 4 });
      assert.deepEqual(await page(3), { ids: ["w2"], total: 4 });
      assert.deepEqual(await page(1), { ids: ["w0"], total: 4 });
    });

    it("aggregates: grand totals convert each row, then sum, then round", async () => {
      const result = await store.queryAggregate(
        aggregateQuery("cf-query", { metrics: ["IMPRESSIONS", "CLICKS", "SPEND", "CONVERSIONS", "REVENUE"] }),
      );
      // Spend in EUR, each row exact to 10⁻⁸: 1 + 1 + 2.5 + 0.15 + 0.3333 + 2 + 1 = 7.9833 → 7.98;
      // revenue 2 + 5 + 0.0001 + 4 = 11.0001 → 11.
      assert.deepEqual(result.rows, [
        {
          TOTAL_IMPRESSIONS: 1210,
          TOTAL_CLICKS: 62,
          TOTAL_SPEND: 7.98,
          TOTAL_CONVERSIONS: 4.5,
          TOTAL_REVENUE: 11,
          currency: "EUR",
        },
      ]);
      assert.equal(result.totalCount, 1);
    });

    it("aggregates by market in GBP, by ISO week and source, and by month", async () => {
      const byMarket = await store.queryAggregate(
        aggregateQuery("cf-query", { currency: "GBP", metrics: ["SPEND"], groupBy: ["MARKET"] }),
      );
      // DE: 0.85 + 2.125 + 0.80 = 3.775 → 3.78 (half-even: 377.5 → 378); FR 0.26664 → 0.27;
      // GB: 0.85 + 0.1275 + 1.60 = 2.5775 → 2.58.
      assert.deepEqual(byMarket.rows, [
        { MARKET: "DE", TOTAL_SPEND: 3.78, currency: "GBP" },
        { MARKET: "FR", TOTAL_SPEND: 0.27, currency: "GBP" },
        { MARKET: "GB", TOTAL_SPEND: 2.58, currency: "GBP" },
      ]);
      const byWeek = await store.queryAggregate(
        aggregateQuery("cf-query", {
          metrics: ["CLICKS", "IMPRESSIONS"],
          groupBy: ["DATE_WEEK", "DATA_SOURCE"],
          sort: [{ field: "TOTAL_CLICKS", direction: "DESC" }],
          scope: scopeOf("cf-query", { from: "2021-02-28", to: "2021-03-04" }),
        }),
      );
      assert.deepEqual(byWeek.rows, [
        {
          DATE_WEEK: "2021-03-01",
          DATA_SOURCE: "meta_ads",
          TOTAL_CLICKS: 35,
          TOTAL_IMPRESSIONS: 500,
          currency: "EUR",
        },
        {
          DATE_WEEK: "2021-03-01",
          DATA_SOURCE: "google_ads",
          TOTAL_CLICKS: 27,
          TOTAL_IMPRESSIONS: 710,
          currency: "EUR",
        },
      ]);
      const byMonth = await store.queryAggregate(
        aggregateQuery("cf-query", { metrics: ["CONVERSIONS"], groupBy: ["DATE_MONTH", "CHANNEL"] }),
      );
      assert.deepEqual(byMonth.rows, [
        { DATE_MONTH: "2021-03-01", CHANNEL: "display", TOTAL_CONVERSIONS: 0, currency: "EUR" },
        { DATE_MONTH: "2021-03-01", CHANNEL: "search", TOTAL_CONVERSIONS: 2.5, currency: "EUR" },
        { DATE_MONTH: "2021-03-01", CHANNEL: "social", TOTAL_CONVERSIONS: 2, currency: "EUR" },
      ]);
    });

    it("answers aggregates not grouped by campaign from the rollup, equal to the records' (§3.7), after every kind of load", async () => {
      const brandId = "cf-rollup";
      const currencies = ["EUR", "GBP", "JPY"] as const;
      const markets = ["DE", "GB", "JP", "FR"];
      const channels = ["search", "social", "display"];
      const days = ["2021-03-01", "2021-03-02", "2021-03-03", "2021-03-07", "2021-03-08"];
      // Amounts that round differently row by row and summed (odd ten-thousandths, refunds).
      const rows = (tag: string, dayList: string[], dataSources: string[]) =>
        dayList.flatMap((date, day) =>
          Array.from({ length: 24 }, (_, index) =>
            record(`${tag}-${date}-${index}`, date, {
              market: markets[index % markets.length]!,
              dataSource: dataSources[index % dataSources.length]!,
              channel: channels[(index >> 2) % channels.length]!,
              campaignId: `cmp-${index % 5}`,
              impressions: 1_000 + 37 * index + day,
              clicks: 7 * index + day,
              spendE4: BigInt(12_345 + 9_999 * index + 17 * day) * (index % 7 === 3 ? -1n : 1n),
              conversionsE4: BigInt(5_001 * (index % 4)),
              revenueE4: BigInt(33_335 * index + 1),
              currency: currencies[(index + day) % currencies.length]!,
            }),
          ),
        );
      const sources = ["google_ads", "meta_ads"];
      await store.replaceRecords(brandId, rows("a", days, sources));
      // Restate one source of a day, then a whole day with fewer rows: the rollup follows both.
      await store.replaceRecords(brandId, rows("b", ["2021-03-02"], ["meta_ads"]).slice(0, 9), {
        processingDate: "2021-03-09",
        source: "test",
        replace: "sources",
      });
      await store.replaceRecords(brandId, rows("c", ["2021-03-07"], sources).slice(0, 5));
      const everyCampaign = Array.from({ length: 5 }, (_, index) => `cmp-${index}`);
      const groupings: AggregateQuery["groupBy"][] = [
        [],
        ["DATE_DAY"],
        ["DATE_WEEK"],
        ["DATE_MONTH"],
        ["MARKET"],
        ["DATA_SOURCE"],
        ["CHANNEL"],
        ["MARKET", "CHANNEL"],
        ["DATE_DAY", "DATA_SOURCE"],
      ];
      let compared = 0;
      for (const groupBy of groupings) {
        for (const currency of currencies) {
          const query = aggregateQuery(brandId, {
            scope: scopeOf(brandId, { from: "2021-03-01", to: "2021-03-08", markets }),
            currency,
            metrics: ["IMPRESSIONS", "CLICKS", "SPEND", "CONVERSIONS", "REVENUE"],
            groupBy,
            sort: groupBy.length > 0 ? [{ field: "TOTAL_SPEND", direction: "DESC" }] : [],
            page: { page: 1, pageSize: 100 },
          });
          // A campaign filter reads the records; naming every campaign, it reads all of them.
          const fromRecords = { ...query, scope: { ...query.scope, campaignIds: everyCampaign } };
          const [rollup, records] = await Promise.all([
            store.queryAggregate(query),
            store.queryAggregate(fromRecords),
          ]);
          assert.deepEqual(rollup.rows, records.rows, `${groupBy.join(",")} in ${currency}`);
          assert.equal(rollup.totalCount, records.totalCount);
          assert.ok(rollup.rows.length > 0);
          compared += 1;
        }
      }
      assert.equal(compared, groupings.length * currencies.length);
      // The counts a records page reads from the rollup are the records' counts.
      const walk = recordsQuery(brandId, {
        scope: scopeOf(brandId, { from: "2021-03-01", to: "2021-03-08", markets, channels: ["search"] }),
        fields: ["recordId", "spend"],
        currency: "GBP",
      });
      const filtered = { ...walk, scope: { ...walk.scope, campaignIds: everyCampaign } };
      const [counted, read] = await Promise.all([recordsPage(store, walk), recordsPage(store, filtered)]);
      assert.deepEqual(counted.rows, read.rows);
      assert.equal(counted.totalCount, read.totalCount);
      assert.equal(counted.totalCount, counted.rows.length);
    });

    it("pages aggregate groups and counts them past the end", async () => {
      const page = (number: number) =>
        store.queryAggregate(
          aggregateQuery("cf-query", {
            groupBy: ["DATE_DAY"],
            sort: [{ field: "DATE_DAY", direction: "DESC" }],
            page: { page: number, pageSize: 3 },
          }),
        );
      const [first, second, third] = await Promise.all([page(1), page(2), page(3)]);
      assert.deepEqual(first!.rows, [
        { DATE_DAY: "2021-03-04", TOTAL_IMPRESSIONS: 160, currency: "EUR" },
        { DATE_DAY: "2021-03-03", TOTAL_IMPRESSIONS: 400, currency: "EUR" },
        { DATE_DAY: "2021-03-02", TOTAL_IMPRESSIONS: 350, currency: "EUR" },
      ]);
      assert.deepEqual(second!.rows, [{ DATE_DAY: "2021-03-01", TOTAL_IMPRESSIONS: 300, currency: "EUR" }]);
      assert.deepEqual(third!.rows, []);
      assert.deepEqual([first!.totalCount, second!.totalCount, third!.totalCount], [4, 4, 4]);
      const nothing = await store.queryAggregate(
        aggregateQuery("cf-query", { scope: scopeOf("cf-query", { markets: [] }), metrics: ["SPEND"] }),
      );
      assert.deepEqual(nothing.rows, [{ TOTAL_SPEND: 0, currency: "EUR" }]);
      assert.equal(nothing.totalCount, 1);
    });

    it("raises MissingFxRateError naming a currency and day without a rate", async () => {
      const brandId = "cf-no-rate";
      await store.replaceRecords(brandId, [
        record("g1", "2021-02-26", { market: "GB", currency: "GBP" }),
        record("c1", "2021-03-02", { market: "CH", currency: "CHF" }),
        record("e1", "2021-03-02"),
      ]);
      const scope = scopeOf(brandId, { from: "2021-02-26", to: "2021-03-02", markets: ["CH", "DE", "GB"] });
      const missing = (currency: string, date: string) => (error: unknown) => {
        assert.ok(error instanceof MissingFxRateError);
        assert.deepEqual([error.currency, error.date], [currency, date]);
        return true;
      };
      const records = (currency: "EUR" | "CHF", fields: RecordField[]) =>
        recordsPage(store, recordsQuery(brandId, { scope, currency, fields }));
      await assert.rejects(records("EUR", ["recordId", "spend"]), missing("CHF", "2021-03-02"));
      // To CHF: g1 lacks its GBP rate ("GBP 2021-02-26"), e1 the CHF rate ("CHF 2021-03-02"); the
      // first in byte order is named.
      await assert.rejects(records("CHF", ["revenue"]), missing("CHF", "2021-03-02"));
      assert.equal((await records("EUR", ["recordId", "impressions"])).totalCount, 3);
      const onlyGbp = scopeOf(brandId, { from: "2021-02-26", to: "2021-02-26", markets: ["GB"] });
      await assert.rejects(
        recordsPage(store, recordsQuery(brandId, { scope: onlyGbp, fields: ["spend"] })),
        missing("GBP", "2021-02-26"),
      );
      assert.deepEqual(
        (
          await recordsPage(
            store,
            recordsQuery(brandId, { scope: onlyGbp, currency: "GBP", fields: ["spend"] }),
          )
        ).rows,
        [{ spend: 1, currency: "GBP" }],
      );
      const aggregate = (page: number, metrics: AggregateQuery["metrics"]) =>
        store.queryAggregate(
          aggregateQuery(brandId, { scope, metrics, groupBy: ["MARKET"], page: { page, pageSize: 100 } }),
        );
      await assert.rejects(aggregate(1, ["SPEND"]), missing("CHF", "2021-03-02"));
      await assert.rejects(aggregate(5, ["REVENUE"]), missing("CHF", "2021-03-02"));
      assert.deepEqual((await aggregate(1, ["IMPRESSIONS"])).rows.length, 3);
    });

    it("changes the data version when a load touches the range, and only then", async () => {
      const brandId = "cf-version";
      const version = async (from: string, to: string) =>
        (await recordsPage(store, recordsQuery(brandId, { scope: scopeOf(brandId, { from, to }) })))
          .dataVersion;
      const aggregateVersion = async (from: string, to: string) =>
        (await store.queryAggregate(aggregateQuery(brandId, { scope: scopeOf(brandId, { from, to }) })))
          .dataVersion;
      const empty = await version("2021-03-01", "2021-03-04");
      await store.replaceRecords(brandId, [record("a", "2021-03-01"), record("b", "2021-03-02")]);
      const loaded = await version("2021-03-01", "2021-03-04");
      assert.notEqual(loaded, empty);
      await store.replaceRecords(brandId, [record("c", "2021-03-10")]);
      await store.replaceRecords("cf-version-other", [record("a", "2021-03-02")]);
      assert.equal(await version("2021-03-01", "2021-03-04"), loaded);
      assert.equal(await aggregateVersion("2021-03-01", "2021-03-04"), loaded);
      await store.replaceRecords(brandId, [record("b", "2021-03-02")]);
      const reloaded = await version("2021-03-01", "2021-03-04");
      assert.notEqual(reloaded, loaded);
      assert.equal(await aggregateVersion("2021-03-02", "2021-03-02"), reloaded);
      assert.notEqual(await version("2021-03-10", "2021-03-10"), reloaded);
    });

    it("keeps the signing key ring in the database when the engine is shared by instances", async () => {
      if (engine.name === "duckdb") {
        // The embedded engine keeps the ring in <dataDir>/signing-keys.json instead.
        assert.equal(keepsKeyRing(store), false);
        assert.equal((store as Partial<KeyRingStore>).readKeyRing, undefined);
        assert.equal((store as Partial<KeyRingStore>).writeKeyRing, undefined);
        return;
      }
      assert.ok(keepsKeyRing(store));
      assert.equal(await store.readKeyRing(), undefined);
      await store.writeKeyRing('{"keys":[1]}');
      assert.equal(await store.readKeyRing(), '{"keys":[1]}');
      await store.writeKeyRing('{"keys":[1,2]}');
      assert.equal(await store.readKeyRing(), '{"keys":[1,2]}');
    });
  });
}
