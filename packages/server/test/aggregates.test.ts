/**
 * `marketingAggregate` (CONTRACT §3 rules 3–6): grand totals, ISO weeks and months, null
 * dimensions, METRIC_NOT_REQUESTED, sorting, the default sort, and pagination of groups.
 *
 * Two data sets: the seeded demo brands (checked against the generator they were seeded from),
 * and a small brand made here with records on chosen calendar days (year end, ISO week 53,
 * Sundays, a month end) whose expected groups are written out by hand.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { addDays, type GraphQLResponse, startTestRegion, type TestRegion } from "@mdq/test-support";
import type { StoredRecord } from "../src/store/model/store.js";
import { seededDemo } from "./seeded-demo.js";

const DAYS = 120;
const DIMENSIONS = "DATE_DAY DATE_WEEK DATE_MONTH MARKET DATA_SOURCE CHANNEL CAMPAIGN_ID";
const ALL_TOTALS = "TOTAL_IMPRESSIONS TOTAL_CLICKS TOTAL_SPEND TOTAL_CONVERSIONS TOTAL_REVENUE";

// The aggregate field starts on line 2, column 3, where error `locations` point.
function aggregateQuery(selection: string): string {
  return `query Aggregate($c: ID!, $r: DateRangeInput!, $m: [Metric!]!, $g: [Dimension!], $s: [AggregateSortInput!], $p: PaginationInput) {
  marketingAggregate(clientId: $c, dateRange: $r, metrics: $m, groupBy: $g, sort: $s, pagination: $p) { ${selection} }
}`;
}

type Group = Record<string, string | number | null>;

const NULL_DIMENSIONS = {
  DATE_DAY: null,
  DATE_WEEK: null,
  DATE_MONTH: null,
  MARKET: null,
  DATA_SOURCE: null,
  CHANNEL: null,
  CAMPAIGN_ID: null,
};

function weekdayOf(date: string): number {
  return new Date(`${date}T00:00:00Z`).getUTCDay();
}

/** Monday of the ISO week of `date`: Sunday (0) belongs to the Monday six days before. */
function isoWeekMonday(date: string): string {
  return addDays(date, -((weekdayOf(date) + 6) % 7));
}

function queryError(code: string, message: string) {
  return {
    data: null,
    errors: [
      { message, extensions: { code }, locations: [{ line: 2, column: 3 }], path: ["marketingAggregate"] },
    ],
  };
}

/**
 * The calendar brand's records (all EUR, so no FX rate is involved). Impressions are distinct
 * powers of ten so that every total spells out which records it summed; record i spends i EUR,
 * converts i × 0.5 and earns i × 10 EUR. `cal-9` is in FR, stored but not granted.
 */
const CALENDAR_RECORDS: [id: string, date: string, market: string, source: string, impressions: number][] = [
  ["cal-1", "2020-12-27", "GB", "google_ads", 1], // Sunday of ISO week 2020-W52 (Monday 2020-12-21)
  ["cal-2", "2020-12-28", "GB", "meta_ads", 10], // Monday of 2020-W53
  ["cal-3", "2020-12-31", "DE", "google_ads", 100], // Thursday of 2020-W53
  ["cal-4", "2021-01-01", "DE", "meta_ads", 1_000], // Friday of 2020-W53, a new month and year
  ["cal-5", "2021-01-03", "GB", "google_ads", 10_000], // Sunday of 2020-W53
  ["cal-6", "2021-01-04", "GB", "google_ads", 100_000], // Monday of 2021-W01
  ["cal-7", "2021-02-28", "DE", "google_ads", 1_000_000], // Sunday of 2021-W08 (Monday 2021-02-22)
  ["cal-8", "2021-03-01", "DE", "google_ads", 10_000_000], // Monday of 2021-W09, a new month
  ["cal-9", "2021-01-01", "FR", "google_ads", 900_000_000], // ungranted market
];
const CALENDAR_RANGE = { from: "2020-12-27", to: "2021-03-01" };

function calendarRecords(): StoredRecord[] {
  return CALENDAR_RECORDS.map(([recordId, date, market, dataSource, impressions], index) => {
    const i = BigInt(index + 1);
    return {
      recordId,
      date,
      market,
      dataSource,
      channel: dataSource === "google_ads" ? "search" : "social",
      campaignId: `cmp-cal-${market.toLowerCase()}-${dataSource}`,
      campaignName: `Calendar ${market} ${dataSource}`,
      impressions,
      clicks: index + 1,
      spendE4: i * 10_000n,
      conversionsE4: i * 5_000n,
      revenueE4: i * 100_000n,
      currency: "EUR",
    };
  });
}

describe("marketingAggregate", () => {
  let region: TestRegion;
  let acme: TestRegion["credentials"]["apps"][number];
  let acmeToken: string;
  let calendarToken: string;
  let acmeRecords: StoredRecord[];
  let range: { from: string; to: string };
  /** The brands' data versions as readiness reports them: pageInfo speaks the same (CONTRACT §6 rule 1). */
  let acmeVersion: string;
  let calendarVersion: string;

  before(async () => {
    region = await startTestRegion({ days: DAYS });
    acme = region.credentials.apps.find((app) => app.appClientId === "app-acme-analytics")!;
    acmeToken = await region.token(acme.appClientId);
    range = { from: addDays(region.today, -90), to: addDays(region.today, -1) };
    acmeRecords = seededDemo(region, DAYS)
      .stored.get("brand-acme")!
      .filter(
        (record) =>
          record.date >= range.from &&
          record.date <= range.to &&
          acme.markets.includes(record.market) &&
          acme.dataSources.includes(record.dataSource),
      );

    const store = region.service.store;
    const now = new Date();
    await store.createBrand({ brandId: "brand-calendar", name: "Calendar", createdAt: now });
    await store.addGrants("brand-calendar", {
      markets: ["DE", "GB"],
      dataSources: ["google_ads", "meta_ads"],
    });
    await store.replaceRecords("brand-calendar", calendarRecords());
    calendarToken = await region.newAppToken({
      appClientId: "app-calendar",
      brandId: "brand-calendar",
      name: "Calendar",
      createdAt: now,
    });
    const readinessVersion = async (brandId: string, token: string) => {
      const response = await region.graphql(
        "query($c: ID!) { marketingDataReadiness(clientId: $c) { dataVersion } }",
        { c: brandId },
        token,
      );
      const readiness = response.body.data?.["marketingDataReadiness"] as { dataVersion: string } | undefined;
      assert.ok(readiness, JSON.stringify(response.body));
      return readiness.dataVersion;
    };
    acmeVersion = await readinessVersion(acme.brandClientId, acmeToken);
    calendarVersion = await readinessVersion("brand-calendar", calendarToken);
  });
  after(() => region.close());

  function calendar(variables: Record<string, unknown>, selection = `${DIMENSIONS} ${ALL_TOTALS} currency`) {
    return region.graphql(
      aggregateQuery(selection),
      {
        c: "brand-calendar",
        r: CALENDAR_RANGE,
        m: ["IMPRESSIONS", "CLICKS", "SPEND", "CONVERSIONS", "REVENUE"],
        ...variables,
      },
      calendarToken,
    );
  }

  function demo(variables: Record<string, unknown>, selection: string) {
    return region.graphql(
      aggregateQuery(selection),
      { c: acme.brandClientId, r: range, ...variables },
      acmeToken,
    );
  }

  function groupsOf(response: GraphQLResponse): Group[] {
    assert.equal(response.status, 200, JSON.stringify(response.body.errors));
    assert.equal(response.body.errors, undefined);
    return response.body.data?.["marketingAggregate"] as Group[];
  }

  function pageInfoOf(response: GraphQLResponse) {
    return response.body.extensions?.pageInfo?.["marketingAggregate"];
  }

  it("gives exactly one row of grand totals for groupBy [], every dimension null", async () => {
    const response = await calendar({ g: [] });
    assert.deepEqual(groupsOf(response), [
      {
        ...NULL_DIMENSIONS,
        TOTAL_IMPRESSIONS: 11_111_111, // cal-1..cal-8; cal-9 (FR) is not granted
        TOTAL_CLICKS: 36, // 1 + 2 + … + 8
        TOTAL_SPEND: 36, // (1 + … + 8) EUR
        TOTAL_CONVERSIONS: 18, // 36 × 0.5
        TOTAL_REVENUE: 360, // 36 × 10 EUR
        currency: "EUR",
      },
    ]);
    assert.deepEqual(pageInfoOf(response), {
      page: 1,
      pageSize: 1000,
      totalCount: 1,
      hasNextPage: false,
      dataVersion: calendarVersion,
    });
    const past = await calendar({ g: [], p: { page: 2 } });
    assert.deepEqual(groupsOf(past), []);
    assert.deepEqual(pageInfoOf(past), {
      page: 2,
      pageSize: 1000,
      totalCount: 1,
      hasNextPage: false,
      dataVersion: calendarVersion,
    });

    const demoTotals = groupsOf(
      await demo(
        { m: ["IMPRESSIONS", "CLICKS", "CONVERSIONS"], g: [] },
        `${DIMENSIONS} TOTAL_IMPRESSIONS TOTAL_CLICKS TOTAL_CONVERSIONS`,
      ),
    );
    assert.deepEqual(demoTotals, [
      {
        ...NULL_DIMENSIONS,
        TOTAL_IMPRESSIONS: acmeRecords.reduce((sum, record) => sum + record.impressions, 0),
        TOTAL_CLICKS: acmeRecords.reduce((sum, record) => sum + record.clicks, 0),
        TOTAL_CONVERSIONS:
          Number(acmeRecords.reduce((sum, record) => sum + record.conversionsE4, 0n)) / 10_000,
      },
    ]);
  });

  it("groups DATE_WEEK by the ISO week's Monday and DATE_MONTH by the 1st, across a year end", async () => {
    const weeks = await calendar(
      { g: ["DATE_WEEK"], m: ["IMPRESSIONS"] },
      "DATE_WEEK DATE_DAY TOTAL_IMPRESSIONS",
    );
    // Default sort of a week grouping: the coarsest date grouped, descending.
    assert.deepEqual(groupsOf(weeks), [
      { DATE_WEEK: "2021-03-01", DATE_DAY: null, TOTAL_IMPRESSIONS: 10_000_000 },
      { DATE_WEEK: "2021-02-22", DATE_DAY: null, TOTAL_IMPRESSIONS: 1_000_000 },
      { DATE_WEEK: "2021-01-04", DATE_DAY: null, TOTAL_IMPRESSIONS: 100_000 },
      { DATE_WEEK: "2020-12-28", DATE_DAY: null, TOTAL_IMPRESSIONS: 11_110 }, // cal-2..cal-5
      { DATE_WEEK: "2020-12-21", DATE_DAY: null, TOTAL_IMPRESSIONS: 1 }, // before the range's first day
    ]);
    const months = await calendar({ g: ["DATE_MONTH"], m: ["IMPRESSIONS"] }, "DATE_MONTH TOTAL_IMPRESSIONS");
    assert.deepEqual(groupsOf(months), [
      { DATE_MONTH: "2021-03-01", TOTAL_IMPRESSIONS: 10_000_000 },
      { DATE_MONTH: "2021-02-01", TOTAL_IMPRESSIONS: 1_000_000 },
      { DATE_MONTH: "2021-01-01", TOTAL_IMPRESSIONS: 111_000 },
      { DATE_MONTH: "2020-12-01", TOTAL_IMPRESSIONS: 111 },
    ]);

    // On 90 days of demo data: every week a Monday, every month a 1st, totals per the generator.
    const expectedWeeks = new Map<string, number>();
    const expectedMonths = new Map<string, number>();
    for (const record of acmeRecords) {
      const week = isoWeekMonday(record.date);
      expectedWeeks.set(week, (expectedWeeks.get(week) ?? 0) + record.impressions);
      const month = `${record.date.slice(0, 7)}-01`;
      expectedMonths.set(month, (expectedMonths.get(month) ?? 0) + record.impressions);
    }
    const demoWeeks = groupsOf(
      await demo({ m: ["IMPRESSIONS"], g: ["DATE_WEEK"] }, "DATE_WEEK TOTAL_IMPRESSIONS"),
    );
    assert.ok(demoWeeks.length >= 13);
    for (const group of demoWeeks)
      assert.equal(weekdayOf(String(group["DATE_WEEK"])), 1, `${group["DATE_WEEK"]}`);
    assert.deepEqual(
      new Map(demoWeeks.map((group) => [group["DATE_WEEK"], group["TOTAL_IMPRESSIONS"]])),
      expectedWeeks,
    );
    const demoMonths = groupsOf(
      await demo({ m: ["IMPRESSIONS"], g: ["DATE_MONTH"] }, "DATE_MONTH TOTAL_IMPRESSIONS"),
    );
    assert.ok(demoMonths.length >= 3);
    for (const group of demoMonths) assert.match(String(group["DATE_MONTH"]), /^\d{4}-\d{2}-01$/);
    assert.deepEqual(
      new Map(demoMonths.map((group) => [group["DATE_MONTH"], group["TOTAL_IMPRESSIONS"]])),
      expectedMonths,
    );
  });

  it("sets the grouped dimensions and leaves the others null", async () => {
    const response = await calendar({
      g: ["DATA_SOURCE", "MARKET"],
      s: [{ field: "MARKET", direction: "ASC" }],
    });
    assert.deepEqual(groupsOf(response), [
      {
        ...NULL_DIMENSIONS,
        MARKET: "DE",
        DATA_SOURCE: "google_ads",
        TOTAL_IMPRESSIONS: 11_000_100, // cal-3, cal-7, cal-8
        TOTAL_CLICKS: 18,
        TOTAL_SPEND: 18,
        TOTAL_CONVERSIONS: 9,
        TOTAL_REVENUE: 180,
        currency: "EUR",
      },
      {
        ...NULL_DIMENSIONS,
        MARKET: "DE",
        DATA_SOURCE: "meta_ads",
        TOTAL_IMPRESSIONS: 1_000, // cal-4
        TOTAL_CLICKS: 4,
        TOTAL_SPEND: 4,
        TOTAL_CONVERSIONS: 2,
        TOTAL_REVENUE: 40,
        currency: "EUR",
      },
      {
        ...NULL_DIMENSIONS,
        MARKET: "GB",
        DATA_SOURCE: "google_ads",
        TOTAL_IMPRESSIONS: 110_001, // cal-1, cal-5, cal-6
        TOTAL_CLICKS: 12,
        TOTAL_SPEND: 12,
        TOTAL_CONVERSIONS: 6,
        TOTAL_REVENUE: 120,
        currency: "EUR",
      },
      {
        ...NULL_DIMENSIONS,
        MARKET: "GB",
        DATA_SOURCE: "meta_ads",
        TOTAL_IMPRESSIONS: 10, // cal-2
        TOTAL_CLICKS: 2,
        TOTAL_SPEND: 2,
        TOTAL_CONVERSIONS: 1,
        TOTAL_REVENUE: 20,
        currency: "EUR",
      },
    ]);
    assert.deepEqual(pageInfoOf(response), {
      page: 1,
      pageSize: 1000,
      totalCount: 4,
      hasNextPage: false,
      dataVersion: calendarVersion,
    });
  });

  it("rejects a TOTAL_ field whose metric is not requested with METRIC_NOT_REQUESTED (HTTP 200, data null)", async () => {
    const cases: [string, string][] = [
      [
        "MARKET TOTAL_CLICKS TOTAL_SPEND",
        "TOTAL_SPEND is selected but SPEND is not in metrics; add it to metrics",
      ],
      [
        "MARKET spent: TOTAL_REVENUE",
        "TOTAL_REVENUE is selected but REVENUE is not in metrics; add it to metrics",
      ],
      [
        "MARKET ... on MarketingAggregate { TOTAL_IMPRESSIONS }",
        "TOTAL_IMPRESSIONS is selected but IMPRESSIONS is not in metrics; add it to metrics",
      ],
    ];
    for (const [selection, message] of cases) {
      const response = await calendar({ m: ["CLICKS"], g: ["MARKET"] }, selection);
      assert.equal(response.status, 200);
      assert.deepEqual(response.body, queryError("METRIC_NOT_REQUESTED", message));
    }
    // The same selections are fine once the metric is requested.
    const allowed = await calendar(
      { m: ["CLICKS", "SPEND"], g: ["MARKET"] },
      "MARKET TOTAL_CLICKS TOTAL_SPEND",
    );
    // No date grouped, no sort given: groups in ascending order of their dimensions.
    assert.deepEqual(groupsOf(allowed), [
      { MARKET: "DE", TOTAL_CLICKS: 22, TOTAL_SPEND: 22 }, // cal-3, cal-4, cal-7, cal-8
      { MARKET: "GB", TOTAL_CLICKS: 14, TOTAL_SPEND: 14 }, // cal-1, cal-2, cal-5, cal-6
    ]);
  });

  it("orders rows by TOTAL_SPEND, DESC or ASC, ties broken by the grouped dimensions", async () => {
    for (const direction of ["DESC", "ASC"] as const) {
      const groups = groupsOf(
        await demo(
          { m: ["SPEND", "CLICKS"], g: ["CAMPAIGN_ID"], s: [{ field: "TOTAL_SPEND", direction }] },
          "CAMPAIGN_ID TOTAL_SPEND TOTAL_CLICKS",
        ),
      );
      assert.equal(groups.length, new Set(acmeRecords.map((record) => record.campaignId)).size);
      for (let index = 1; index < groups.length; index += 1) {
        const previous = groups[index - 1]!;
        const current = groups[index]!;
        const a = previous["TOTAL_SPEND"] as number;
        const b = current["TOTAL_SPEND"] as number;
        assert.ok(direction === "DESC" ? a >= b : a <= b, `${direction}: ${a} then ${b}`);
        if (a === b) assert.ok(String(previous["CAMPAIGN_ID"]) < String(current["CAMPAIGN_ID"]));
      }
      assert.ok(groups[0]!["TOTAL_SPEND"] !== groups.at(-1)!["TOTAL_SPEND"]);
    }
    // Two entries: by market, then by spend within each market.
    const twoKeys = groupsOf(
      await demo(
        {
          m: ["SPEND"],
          g: ["MARKET", "CHANNEL"],
          s: [
            { field: "MARKET", direction: "DESC" },
            { field: "TOTAL_SPEND", direction: "DESC" },
          ],
        },
        "MARKET CHANNEL TOTAL_SPEND",
      ),
    );
    assert.ok(twoKeys.length > acme.markets.length);
    for (let index = 1; index < twoKeys.length; index += 1) {
      const previous = twoKeys[index - 1]!;
      const current = twoKeys[index]!;
      const previousMarket = String(previous["MARKET"]);
      const currentMarket = String(current["MARKET"]);
      assert.ok(previousMarket >= currentMarket);
      if (previousMarket === currentMarket)
        assert.ok((previous["TOTAL_SPEND"] as number) >= (current["TOTAL_SPEND"] as number));
    }
  });

  it("checks sort entries: at most two, grouped dimensions and requested totals only", async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [
        {
          g: ["MARKET", "CHANNEL"],
          s: [
            { field: "MARKET", direction: "ASC" },
            { field: "CHANNEL", direction: "ASC" },
            { field: "TOTAL_CLICKS", direction: "DESC" },
          ],
        },
        "TOO_MANY_SORT_ENTRIES",
        "sort has 3 entries; aggregate queries allow at most 2",
      ],
      [
        { g: ["MARKET"], s: [{ field: "CHANNEL", direction: "ASC" }] },
        "INVALID_SORT_FIELD",
        "cannot sort by CHANNEL: it is not in groupBy",
      ],
      [
        { g: ["MARKET"], s: [{ field: "TOTAL_SPEND", direction: "ASC" }] },
        "INVALID_SORT_FIELD",
        "cannot sort by TOTAL_SPEND: its metric is not in metrics",
      ],
    ];
    for (const [variables, code, message] of cases) {
      const response = await calendar({ m: ["CLICKS"], ...variables }, "MARKET TOTAL_CLICKS");
      assert.equal(response.status, 200);
      assert.deepEqual(response.body, queryError(code, message));
    }
  });

  it("sorts groups by DATE_DAY DESC by default when grouped by DATE_DAY, other dimensions ascending", async () => {
    const byDay = groupsOf(await demo({ m: ["CLICKS"] }, "DATE_DAY TOTAL_CLICKS"));
    assert.equal(byDay.length, 90);
    assert.equal(byDay[0]!["DATE_DAY"], range.to);
    assert.equal(byDay.at(-1)!["DATE_DAY"], range.from);
    for (let index = 1; index < byDay.length; index += 1) {
      assert.equal(byDay[index]!["DATE_DAY"], addDays(String(byDay[index - 1]!["DATE_DAY"]), -1));
    }
    const byDayAndMarket = groupsOf(
      await demo({ m: ["CLICKS"], g: ["MARKET", "DATE_DAY"], p: { pageSize: 5000 } }, "DATE_DAY MARKET"),
    );
    const expected = byDay.flatMap((day) =>
      [...acme.markets].sort().map((market) => ({ DATE_DAY: day["DATE_DAY"], MARKET: market })),
    );
    assert.deepEqual(byDayAndMarket, expected);
  });

  it("reports page info under each field's response key when one query pages twice", async () => {
    const response = await region.graphql(
      `query Pages($c: ID!, $r: DateRangeInput!) {
  first: marketingAggregate(clientId: $c, dateRange: $r, metrics: [CLICKS], groupBy: [DATE_DAY, CAMPAIGN_ID]) { DATE_DAY }
  second: marketingAggregate(clientId: $c, dateRange: $r, metrics: [CLICKS], groupBy: [DATE_DAY, CAMPAIGN_ID],
    pagination: {page: 2, pageSize: 1000}) { DATE_DAY }
  days: marketingAggregate(clientId: $c, dateRange: $r, metrics: [CLICKS]) { DATE_DAY }
}`,
      { c: acme.brandClientId, r: range },
      acmeToken,
    );
    assert.equal(response.status, 200);
    const groups = acmeRecords.length; // one (day, campaign) group per record
    assert.deepEqual(response.body.extensions, {
      pageInfo: {
        first: { page: 1, pageSize: 1000, totalCount: groups, hasNextPage: true, dataVersion: acmeVersion },
        second: { page: 2, pageSize: 1000, totalCount: groups, hasNextPage: false, dataVersion: acmeVersion },
        days: { page: 1, pageSize: 1000, totalCount: 90, hasNextPage: false, dataVersion: acmeVersion },
      },
    });
    const second = response.body.data?.["second"] as unknown[];
    assert.equal(second.length, groups - 1000);
  });

  it("reports totalCount as the number of groups and walks them page by page, each once", async () => {
    const variables = { m: ["IMPRESSIONS"], g: ["DATE_DAY", "CAMPAIGN_ID"] };
    const selection = "DATE_DAY CAMPAIGN_ID TOTAL_IMPRESSIONS";
    const groupCount = new Set(acmeRecords.map((record) => `${record.date} ${record.campaignId}`)).size;
    assert.equal(groupCount, acmeRecords.length);
    assert.ok(groupCount > 1000 && groupCount <= 2000, `${groupCount} groups span two pages of 1000`);
    const whole = await demo({ ...variables, p: { pageSize: 5000 } }, selection);
    assert.deepEqual(pageInfoOf(whole), {
      page: 1,
      pageSize: 5000,
      totalCount: groupCount,
      hasNextPage: false,
      dataVersion: acmeVersion,
    });
    const walked: Group[] = [];
    for (const page of [1, 2]) {
      const response = await demo({ ...variables, p: { page } }, selection);
      const groups = groupsOf(response);
      assert.equal(groups.length, page === 1 ? 1000 : groupCount - 1000);
      assert.deepEqual(pageInfoOf(response), {
        page,
        pageSize: 1000,
        totalCount: groupCount,
        hasNextPage: page === 1,
        dataVersion: acmeVersion,
      });
      walked.push(...groups);
    }
    assert.deepEqual(walked, groupsOf(whole));
    assert.equal(
      new Set(walked.map((group) => `${group["DATE_DAY"]} ${group["CAMPAIGN_ID"]}`)).size,
      groupCount,
    );
    // A page size equal to the group count: one full page, and no next one.
    const exact = await demo({ ...variables, p: { pageSize: groupCount } }, selection);
    assert.equal(groupsOf(exact).length, groupCount);
    assert.deepEqual(pageInfoOf(exact), {
      page: 1,
      pageSize: groupCount,
      totalCount: groupCount,
      hasNextPage: false,
      dataVersion: acmeVersion,
    });
    const past = await demo({ ...variables, p: { page: 3 } }, selection);
    assert.deepEqual(groupsOf(past), []);
    assert.deepEqual(pageInfoOf(past), {
      page: 3,
      pageSize: 1000,
      totalCount: groupCount,
      hasNextPage: false,
      dataVersion: acmeVersion,
    });
  });
});
