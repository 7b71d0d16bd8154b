/**
 * Tenancy (CONTRACT §3 rule 1, spec §5.5): no query, filter or clientId lets one brand read
 * another brand's rows, or an app read a market or data source outside its effective grants.
 * The demo brand `brand-acme` stores markets ES, IT, NL and sources amazon_ads, microsoft_ads
 * that it is not granted; these tests prove they never come back.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { addDays, type GraphQLResponse, startTestRegion, type TestRegion } from "@mdq/test-support";
import type { StoredRecord } from "../src/store/model/store.js";
import { appTokens, seededDemo } from "./seeded-demo.js";

const DAYS = 120;
const UNGRANTED_ACME_MARKETS = ["ES", "IT", "NL"];
const UNGRANTED_ACME_SOURCES = ["amazon_ads", "microsoft_ads"];

// The queried field starts on line 2, column 3 of each query, where `locations` point.
const RECORDS = `query Records($c: ID!, $r: DateRangeInput!, $p: PaginationInput, $f: MarketingFilterInput) {
  marketingRecords(clientId: $c, dateRange: $r, pagination: $p, filter: $f) {
    recordId date market dataSource campaignId impressions
  }
}`;
const AGGREGATE = `query Aggregate($c: ID!, $r: DateRangeInput!, $g: [Dimension!], $f: MarketingFilterInput) {
  marketingAggregate(clientId: $c, dateRange: $r, metrics: [IMPRESSIONS, CLICKS], groupBy: $g, filter: $f,
    pagination: {pageSize: 5000}) { MARKET DATA_SOURCE CAMPAIGN_ID TOTAL_IMPRESSIONS TOTAL_CLICKS }
}`;
const READINESS = `query Readiness($c: ID!) {
  marketingDataReadiness(clientId: $c) { status availableThrough }
}`;

interface Row {
  recordId: string;
  date: string;
  market: string;
  dataSource: string;
  campaignId: string;
  impressions: number;
}

type AggregateRow = {
  MARKET: string | null;
  DATA_SOURCE: string | null;
  CAMPAIGN_ID: string | null;
  TOTAL_IMPRESSIONS: number;
  TOTAL_CLICKS: number;
};

function forbidden(field: string, message: string) {
  return {
    data: null,
    errors: [
      { message, extensions: { code: "FORBIDDEN" }, locations: [{ line: 2, column: 3 }], path: [field] },
    ],
  };
}

function assertForbidden(response: GraphQLResponse, field: string, message: string): void {
  assert.equal(response.status, 403);
  assert.deepEqual(response.body, forbidden(field, message));
}

/** The answer of a paged field that has nothing to show: an empty first page, not an error. */
function emptyPage(field: string, pageSize: number, dataVersion: string) {
  return {
    data: { [field]: [] },
    extensions: {
      pageInfo: { [field]: { page: 1, pageSize, totalCount: 0, hasNextPage: false, dataVersion } },
    },
  };
}

describe("tenancy: brands and grants", () => {
  let region: TestRegion;
  let range: { from: string; to: string };
  let stored: Map<string, StoredRecord[]>;
  let tokens: Map<string, string>;
  type App = TestRegion["credentials"]["apps"][number];

  before(async () => {
    region = await startTestRegion({ days: DAYS });
    stored = seededDemo(region, DAYS).stored;
    tokens = await appTokens(region);
    range = { from: addDays(region.today, -90), to: addDays(region.today, -1) };
  });
  after(() => region.close());

  function appNamed(appClientId: string): App {
    const app = region.credentials.apps.find((entry) => entry.appClientId === appClientId);
    assert.ok(app, appClientId);
    return app;
  }

  function records(app: App, filter?: Record<string, string[]>, clientId = app.brandClientId) {
    return region.graphql(
      RECORDS,
      { c: clientId, r: range, p: { pageSize: 5000 }, f: filter },
      tokens.get(app.appClientId),
    );
  }

  function aggregate(
    app: App,
    groupBy: string[],
    filter?: Record<string, string[]>,
    clientId = app.brandClientId,
  ) {
    return region.graphql(
      AGGREGATE,
      { c: clientId, r: range, g: groupBy, f: filter },
      tokens.get(app.appClientId),
    );
  }

  /** Every row `app` may read in the range (one page of 5000 holds them all at scale 1). */
  async function allRows(app: App, filter?: Record<string, string[]>): Promise<Row[]> {
    const response = await records(app, filter);
    assert.equal(response.status, 200, JSON.stringify(response.body.errors));
    const rows = response.body.data?.["marketingRecords"] as Row[];
    const pageInfo = response.body.extensions?.pageInfo?.["marketingRecords"];
    assert.equal(pageInfo?.hasNextPage, false);
    assert.equal(pageInfo?.totalCount, rows.length);
    return rows;
  }

  async function aggregateRows(app: App, groupBy: string[], filter?: Record<string, string[]>) {
    const response = await aggregate(app, groupBy, filter);
    assert.equal(response.status, 200, JSON.stringify(response.body.errors));
    assert.equal(response.body.extensions?.pageInfo?.["marketingAggregate"]?.hasNextPage, false);
    return response.body.data?.["marketingAggregate"] as AggregateRow[];
  }

  /** What the generator stored for the app's brand in the range, restricted to the app's grants. */
  function grantedStored(app: App): StoredRecord[] {
    return (stored.get(app.brandClientId) ?? []).filter(
      (record) =>
        record.date >= range.from &&
        record.date <= range.to &&
        app.markets.includes(record.market) &&
        app.dataSources.includes(record.dataSource),
    );
  }

  it("returns to every app, unfiltered over 90 days, exactly the rows of its granted markets and sources", async () => {
    for (const app of region.credentials.apps) {
      const rows = await allRows(app);
      for (const row of rows) {
        assert.ok(
          app.markets.includes(row.market),
          `${app.appClientId} got ${row.recordId} in ${row.market}`,
        );
        assert.ok(
          app.dataSources.includes(row.dataSource),
          `${app.appClientId} got ${row.recordId} from ${row.dataSource}`,
        );
      }
      const expected = grantedStored(app).map((record) => record.recordId);
      assert.ok(expected.length > 0);
      assert.deepEqual(rows.map((row) => row.recordId).sort(), expected.sort(), app.appClientId);
      const pairs = new Set(rows.map((row) => `${row.market}/${row.dataSource}`));
      assert.deepEqual(
        [...pairs].sort(),
        app.markets.flatMap((market) => app.dataSources.map((source) => `${market}/${source}`)).sort(),
        `${app.appClientId} sees every granted market × source`,
      );
    }
  });

  it("groups aggregates by MARKET and DATA_SOURCE into granted values only, totalled over granted rows", async () => {
    for (const app of region.credentials.apps) {
      const rows = await aggregateRows(app, ["MARKET", "DATA_SOURCE"]);
      const expected = new Map<string, { impressions: number; clicks: number }>();
      for (const record of grantedStored(app)) {
        const key = `${record.market}/${record.dataSource}`;
        const totals = expected.get(key) ?? { impressions: 0, clicks: 0 };
        totals.impressions += record.impressions;
        totals.clicks += record.clicks;
        expected.set(key, totals);
      }
      assert.deepEqual(
        new Map(
          rows.map((row) => [
            `${row.MARKET}/${row.DATA_SOURCE}`,
            { impressions: row.TOTAL_IMPRESSIONS, clicks: row.TOTAL_CLICKS },
          ]),
        ),
        expected,
        app.appClientId,
      );
      for (const dimension of ["MARKET", "DATA_SOURCE"]) {
        const values = (await aggregateRows(app, [dimension])).map((row) =>
          dimension === "MARKET" ? row.MARKET : row.DATA_SOURCE,
        );
        assert.deepEqual(values.sort(), [...(dimension === "MARKET" ? app.markets : app.dataSources)].sort());
      }
      const [grand] = await aggregateRows(app, []);
      assert.equal(
        grand?.TOTAL_IMPRESSIONS,
        grantedStored(app).reduce((sum, record) => sum + record.impressions, 0),
      );
    }
  });

  it("never returns acme's stored but ungranted markets and sources, whatever the query", async () => {
    // Precondition, read from the store itself: the rows exist, so their absence below means something.
    const inStore = await region.service.store.queryAggregate({
      scope: {
        brandId: "brand-acme",
        ...range,
        markets: ["DE", "ES", "FR", "GB", "IT", "NL", "SE", "US"],
        dataSources: ["amazon_ads", "google_ads", "meta_ads", "microsoft_ads", "tiktok_ads"],
        channels: null,
        campaignIds: null,
      },
      currency: "EUR",
      metrics: ["IMPRESSIONS"],
      groupBy: ["MARKET", "DATA_SOURCE", "CAMPAIGN_ID"],
      sort: [],
      page: { page: 1, pageSize: 5000 },
    });
    const ungrantedCampaigns = inStore.rows
      .filter(
        (row) =>
          UNGRANTED_ACME_MARKETS.includes(String(row["MARKET"])) ||
          UNGRANTED_ACME_SOURCES.includes(String(row["DATA_SOURCE"])),
      )
      .map((row) => String(row["CAMPAIGN_ID"]));
    assert.ok(
      ungrantedCampaigns.length >= 20,
      `acme stores ungranted campaigns: ${ungrantedCampaigns.length}`,
    );

    for (const app of [appNamed("app-acme-analytics"), appNamed("app-acme-uk")]) {
      const rows = await allRows(app);
      assert.ok(rows.length > 0);
      for (const row of rows) {
        assert.ok(!UNGRANTED_ACME_MARKETS.includes(row.market), row.recordId);
        assert.ok(!UNGRANTED_ACME_SOURCES.includes(row.dataSource), row.recordId);
      }
      const byCampaign = await aggregateRows(app, ["CAMPAIGN_ID"]);
      for (const row of byCampaign)
        assert.ok(!ungrantedCampaigns.includes(row.CAMPAIGN_ID!), row.CAMPAIGN_ID!);
      // Naming ungranted campaigns (or channels only they use) filters to nothing: no leak by id.
      assert.deepEqual(await allRows(app, { campaignIds: ungrantedCampaigns }), []);
      assert.deepEqual(await aggregateRows(app, [], { campaignIds: ungrantedCampaigns }), [
        { MARKET: null, DATA_SOURCE: null, CAMPAIGN_ID: null, TOTAL_IMPRESSIONS: 0, TOTAL_CLICKS: 0 },
      ]);
      assert.deepEqual(await aggregateRows(app, ["MARKET"], { campaignIds: ungrantedCampaigns }), []);
    }
  });

  it("answers 403 FORBIDDEN when clientId is another brand's, for records, aggregates and readiness", async () => {
    const brands = [...new Set(region.credentials.apps.map((app) => app.brandClientId))];
    assert.equal(brands.length, 3);
    const message = "clientId is not the brand these credentials belong to";
    for (const app of region.credentials.apps) {
      for (const other of [...brands.filter((brand) => brand !== app.brandClientId), "brand-unknown"]) {
        assertForbidden(await records(app, undefined, other), "marketingRecords", message);
        assertForbidden(await aggregate(app, ["MARKET"], undefined, other), "marketingAggregate", message);
        assertForbidden(
          await region.graphql(READINESS, { c: other }, tokens.get(app.appClientId)),
          "marketingDataReadiness",
          message,
        );
      }
    }
  });

  it("answers 403 FORBIDDEN to a filter naming a market or data source outside the app's grants", async () => {
    const cases: [string, Record<string, string[]>, string][] = [
      ["app-acme-analytics", { markets: ["ES"] }, "filter.markets names ES, outside this app's grants"],
      [
        "app-acme-analytics",
        { markets: ["NL", "GB", "IT"] },
        "filter.markets names IT, NL, outside this app's grants",
      ],
      ["app-acme-analytics", { markets: ["JP"] }, "filter.markets names JP, outside this app's grants"],
      [
        "app-acme-analytics",
        { dataSources: ["google_ads", "amazon_ads"] },
        "filter.dataSources names amazon_ads, outside this app's grants",
      ],
      [
        "app-acme-analytics",
        { dataSources: ["microsoft_ads"] },
        "filter.dataSources names microsoft_ads, outside this app's grants",
      ],
      // Granted to the brand but narrowed away from this app.
      ["app-acme-uk", { markets: ["GB", "DE"] }, "filter.markets names DE, outside this app's grants"],
      [
        "app-acme-uk",
        { dataSources: ["tiktok_ads"] },
        "filter.dataSources names tiktok_ads, outside this app's grants",
      ],
      [
        "app-initech-search",
        { dataSources: ["meta_ads"] },
        "filter.dataSources names meta_ads, outside this app's grants",
      ],
      ["app-globex-bi", { markets: ["FR"] }, "filter.markets names FR, outside this app's grants"],
      [
        "app-acme-analytics",
        { markets: ["UK"] },
        'filter.markets names UK, outside this app\'s grants (the United Kingdom is "GB" in ISO 3166-1, not "UK")',
      ],
    ];
    for (const [appClientId, filter, message] of cases) {
      const app = appNamed(appClientId);
      assertForbidden(await records(app, filter), "marketingRecords", message);
      assertForbidden(await aggregate(app, ["MARKET"], filter), "marketingAggregate", message);
    }
  });

  it("gives the narrowed app-acme-uk strictly fewer rows than app-acme-analytics, all of them shared", async () => {
    const narrowed = await allRows(appNamed("app-acme-uk"));
    const full = await allRows(appNamed("app-acme-analytics"));
    const fullIds = new Set(full.map((row) => row.recordId));
    assert.ok(narrowed.length > 0);
    assert.ok(narrowed.length < full.length, `${narrowed.length} < ${full.length}`);
    for (const row of narrowed) assert.ok(fullIds.has(row.recordId), row.recordId);
    assert.deepEqual(new Set(narrowed.map((row) => row.market)), new Set(["GB"]));
    assert.deepEqual(new Set(narrowed.map((row) => row.dataSource)), new Set(["google_ads", "meta_ads"]));
  });

  it("filters by campaign id or channel within the grants only: another brand's campaigns match nothing", async () => {
    const uk = appNamed("app-acme-uk");
    const foreign = [
      ...new Set(
        [...(stored.get("brand-globex") ?? []), ...(stored.get("brand-acme") ?? [])]
          .filter((record) => record.campaignId.startsWith("cmp-globex-") || record.market === "DE")
          .map((record) => record.campaignId),
      ),
    ];
    assert.ok(foreign.some((id) => id.startsWith("cmp-acme-de-")));
    assert.deepEqual(await allRows(uk, { campaignIds: foreign }), []);
    const everyChannel = await allRows(uk, {
      channels: ["shopping", "display", "video", "social", "search"],
    });
    assert.equal(everyChannel.length, grantedStored(uk).length);
    for (const row of everyChannel)
      assert.ok(row.market === "GB" && row.dataSource !== "tiktok_ads", row.recordId);
  });

  it("reads nothing, without an error, for a brand with no grants or an app narrowed outside them", async () => {
    const store = region.service.store;
    const now = new Date();
    await store.createBrand({ brandId: "brand-ungranted", name: "Ungranted", createdAt: now });
    await store.createBrand({ brandId: "brand-narrow", name: "Narrow", createdAt: now });
    await store.addGrants("brand-narrow", { markets: ["GB"], dataSources: ["google_ads"] });
    const sample = (stored.get("brand-acme") ?? []).filter((record) => record.date === range.to).slice(0, 5);
    for (const brandId of ["brand-ungranted", "brand-narrow"]) {
      assert.equal((await store.replaceRecords(brandId, sample)).rows, 5);
    }
    const apps = [
      { appClientId: "app-ungranted", brandId: "brand-ungranted", markets: null, dataSources: null },
      // Narrowed to a market its brand is not granted: the effective grants are empty.
      { appClientId: "app-narrow-fr", brandId: "brand-narrow", markets: ["FR"], dataSources: null },
    ];
    for (const entry of apps) {
      const token = await region.newAppToken({ ...entry, name: entry.appClientId, createdAt: now });
      const variables = { c: entry.brandId, r: range, p: { pageSize: 1000 } };
      const readiness = await region.graphql(
        "query($c: ID!) { marketingDataReadiness(clientId: $c) { dataVersion } }",
        { c: entry.brandId },
        token,
      );
      // pageInfo speaks the version readiness reports (CONTRACT §6 rule 1).
      const readinessAnswer = readiness.body.data?.["marketingDataReadiness"] as
        | { dataVersion: string }
        | undefined;
      assert.ok(readinessAnswer, JSON.stringify(readiness.body));
      const { dataVersion } = readinessAnswer;
      const recordsResponse = await region.graphql(RECORDS, variables, token);
      assert.equal(recordsResponse.status, 200);
      assert.deepEqual(recordsResponse.body, emptyPage("marketingRecords", 1000, dataVersion));
      const aggregateResponse = await region.graphql(
        AGGREGATE,
        { c: entry.brandId, r: range, g: ["MARKET"] },
        token,
      );
      assert.equal(aggregateResponse.status, 200);
      assert.deepEqual(aggregateResponse.body, emptyPage("marketingAggregate", 5000, dataVersion));
      assertForbidden(
        await region.graphql(RECORDS, { ...variables, f: { markets: ["GB"] } }, token),
        "marketingRecords",
        "filter.markets names GB, outside this app's grants",
      );
    }
  });
});
