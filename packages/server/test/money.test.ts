/**
 * Money (CONTRACT §3 rule 7), against values worked out by hand: conversion with the rate of the
 * record's day (else the latest earlier one), half-even rounding to the currency's minor unit,
 * JPY's zero minor units, UNSUPPORTED_CURRENCY, same-currency output without a rate, EUR as the
 * default, and aggregates that convert each row, then sum, then round.
 *
 * A brand of its own is set up through the store, with FX rates in January 2020 (long before
 * the demo's rates, so the demo cannot interfere); every assertion goes through HTTP.
 *
 * Units: amounts are stored in ten-thousandths (e4); rates are units per 1 EUR in millionths
 * (e6). A record's amount in target T, in T's minor units, is
 *   a_e4 × rate(T) ÷ (rate(source) × 10^(4 − minorUnits(T))), rounded half to even,
 * and an aggregate sums a_e4 × rate(T) × 10⁴ ÷ rate(source) per row (10⁻⁸ units, half-even),
 * then rounds the sum half-even to T's minor unit (`src/store/reads/`).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type GraphQLResponse, startTestRegion, type TestRegion } from "@mdq/test-support";
import type { FxRate, StoredRecord } from "../src/store/model/store.js";

const BRAND = "brand-money";
const APP = "app-money";
/** Monday 2020-01-06 to Monday 2020-01-13: every day here has a rate on or before it. */
const WEEK = { from: "2020-01-06", to: "2020-01-13" };

/**
 * GBP: Mon 06 0.85, Tue 07 0.80, (Wed 08, Thu 09: none), Fri 10 0.90, (Sat 11, Sun 12: none),
 * Mon 13 0.86. JPY: 120 from Mon 06. Nothing before 2020-01-06; CHF has no rate in 2020 at all.
 */
const RATES: FxRate[] = [
  { currency: "GBP", date: "2020-01-06", rateE6: 850_000n },
  { currency: "GBP", date: "2020-01-07", rateE6: 800_000n },
  { currency: "GBP", date: "2020-01-10", rateE6: 900_000n },
  { currency: "GBP", date: "2020-01-13", rateE6: 860_000n },
  { currency: "JPY", date: "2020-01-06", rateE6: 120_000_000n },
];

function record(
  recordId: string,
  date: string,
  currency: StoredRecord["currency"],
  campaignId: string,
  spendE4: bigint,
  revenueE4: bigint,
): StoredRecord {
  const market = { EUR: "DE", GBP: "GB", JPY: "JP", CHF: "CH" }[currency as string] ?? "DE";
  return {
    recordId,
    date,
    market,
    dataSource: "google_ads",
    channel: "search",
    campaignId,
    campaignName: campaignId,
    impressions: 1000,
    clicks: 10,
    spendE4,
    conversionsE4: 10_000n,
    revenueE4,
    currency,
  };
}

const RECORDS: StoredRecord[] = [
  record("t1", "2020-01-06", "EUR", "cmp-tie", 1_000n, 3_000n), // EUR 0.1000 / 0.3000
  record("t2", "2020-01-06", "EUR", "cmp-tie", 1_001n, 0n), // EUR 0.1001
  record("g1", "2020-01-07", "GBP", "cmp-gbp", 1_000n, 1_080n), // GBP 0.1000 / 0.1080
  record("j1", "2020-01-06", "EUR", "cmp-jpy", 104_125n, 104_375n), // EUR 10.4125 / 10.4375
  record("j2", "2020-01-06", "JPY", "cmp-jpy", 10_000_000n, 0n), // JPY 1000
  record("w1", "2020-01-09", "EUR", "cmp-weekend", 100_000n, 0n), // EUR 10 on Thursday
  record("w2", "2020-01-11", "EUR", "cmp-weekend", 100_000n, 0n), // EUR 10 on Saturday
  record("w3", "2020-01-12", "EUR", "cmp-weekend", 100_000n, 0n), // EUR 10 on Sunday
  record("w4", "2020-01-13", "EUR", "cmp-weekend", 100_000n, 0n), // EUR 10 on Monday
  record("a1", "2020-01-06", "EUR", "cmp-agg-eur", 1_000n, 500n), // EUR 0.1000 / 0.0500
  record("a2", "2020-01-06", "EUR", "cmp-agg-eur", 1_000n, 500n),
  record("a3", "2020-01-07", "EUR", "cmp-agg-eur", 1_000n, 500n),
  record("b1", "2020-01-06", "GBP", "cmp-agg-gbp", 10_000n, 0n), // GBP 1.0000
  record("b2", "2020-01-06", "GBP", "cmp-agg-gbp", 10_000n, 0n),
  record("b3", "2020-01-06", "GBP", "cmp-agg-gbp", 10_000n, 0n),
  record("y1", "2020-01-06", "EUR", "cmp-agg-jpy", 125n, 0n), // EUR 0.0125
  record("y2", "2020-01-06", "EUR", "cmp-agg-jpy", 125n, 0n),
  // Refunds: negative amounts round half-even by magnitude too.
  record("n1", "2020-01-06", "EUR", "cmp-refund", -1_001n, -3_000n), // EUR -0.1001 / -0.3000
  record("n2", "2020-01-06", "EUR", "cmp-refund", -1_060n, 2_000n), // EUR -0.1060 / 0.2000
  // Before the first GBP rate (2020-01-06).
  record("e1", "2020-01-03", "GBP", "cmp-early-gbp", 12_350n, 12_250n), // GBP 1.2350 / 1.2250
  record("e2", "2020-01-03", "EUR", "cmp-early-eur", 10_000n, 0n), // EUR 1.0000
  // CHF never has a rate in 2020.
  record("c1", "2020-01-02", "CHF", "cmp-chf", 123_450n, 123_550n), // CHF 12.3450 / 12.3550
  // A week after the last GBP rate (Mon 13, 0.86): days that carry it forward.
  record("l1", "2020-01-20", "GBP", "cmp-late-gbp", 10_000n, 20_000n), // GBP 1.0000 / 2.0000
];

/** [spend, revenue] of each record of WEEK in each output currency, by hand. */
const EXPECTED_WEEK: Record<string, Record<"EUR" | "GBP" | "JPY", [number, number]>> = {
  t1: {
    EUR: [0.1, 0.3], // 1000 ÷ 100 = 10 cents; 3000 ÷ 100 = 30 cents
    GBP: [0.08, 0.26], // 1000 × 850000 ÷ (1000000 × 100) = 8.5 → 8 (even); 3000 × … = 25.5 → 26 (even)
    JPY: [12, 36], // 1000 × 120000000 ÷ (1000000 × 10000) = 12; 3000 × … = 36
  },
  t2: {
    EUR: [0.1, 0], // 1001 ÷ 100 = 10.01 → 10
    GBP: [0.09, 0], // 1001 × 850000 ÷ 100000000 = 8.5085 → 9 (above the tie)
    JPY: [12, 0], // 1001 × 120 ÷ 10000 = 12.012 → 12
  },
  g1: {
    EUR: [0.12, 0.14], // 1000 × 1000000 ÷ (800000 × 100) = 12.5 → 12 (even); 1080 × … = 13.5 → 14 (even)
    GBP: [0.1, 0.11], // same currency: 1000 ÷ 100 = 10; 1080 ÷ 100 = 10.8 → 11
    JPY: [15, 16], // 1000 × 120000000 ÷ (800000 × 10000) = 15; 1080 × … = 16.2 → 16
  },
  j1: {
    EUR: [10.41, 10.44], // 104125 ÷ 100 = 1041.25 → 1041; 104375 ÷ 100 = 1043.75 → 1044
    GBP: [8.85, 8.87], // 104125 × 0.85 ÷ 100 = 885.0625 → 885; 104375 × 0.85 ÷ 100 = 887.1875 → 887
    JPY: [1250, 1252], // 104125 × 120 ÷ 10000 = 1249.5 → 1250 (even); 104375 × 120 ÷ 10000 = 1252.5 → 1252 (even)
  },
  j2: {
    EUR: [8.33, 0], // 10000000 × 1000000 ÷ (120000000 × 100) = 833.33… → 833
    GBP: [7.08, 0], // cross rate: 10000000 × 850000 ÷ (120000000 × 100) = 708.33… → 708
    JPY: [1000, 0], // same currency: 10000000 ÷ 10000 = 1000
  },
  w1: { EUR: [10, 0], GBP: [8, 0], JPY: [1200, 0] }, // Thursday: Tuesday's 0.80 (no Wed/Thu rate)
  w2: { EUR: [10, 0], GBP: [9, 0], JPY: [1200, 0] }, // Saturday: Friday's 0.90
  w3: { EUR: [10, 0], GBP: [9, 0], JPY: [1200, 0] }, // Sunday: Friday's 0.90
  w4: { EUR: [10, 0], GBP: [8.6, 0], JPY: [1200, 0] }, // Monday: its own 0.86
  a1: {
    EUR: [0.1, 0.05],
    GBP: [0.08, 0.04], // 1000 × 0.85 ÷ 100 = 8.5 → 8; 500 × 0.85 ÷ 100 = 4.25 → 4
    JPY: [12, 6], // 1000 × 120 ÷ 10000 = 12; 500 × 120 ÷ 10000 = 6
  },
  a2: { EUR: [0.1, 0.05], GBP: [0.08, 0.04], JPY: [12, 6] },
  a3: {
    EUR: [0.1, 0.05],
    GBP: [0.08, 0.04], // Tuesday, 0.80: 1000 × 0.8 ÷ 100 = 8; 500 × 0.8 ÷ 100 = 4
    JPY: [12, 6],
  },
  b1: {
    EUR: [1.18, 0], // 10000 × 1000000 ÷ (850000 × 100) = 117.647… → 118
    GBP: [1, 0],
    JPY: [141, 0], // 10000 × 120000000 ÷ (850000 × 10000) = 141.176… → 141
  },
  b2: { EUR: [1.18, 0], GBP: [1, 0], JPY: [141, 0] },
  b3: { EUR: [1.18, 0], GBP: [1, 0], JPY: [141, 0] },
  y1: {
    EUR: [0.01, 0], // 125 ÷ 100 = 1.25 → 1
    GBP: [0.01, 0], // 125 × 0.85 ÷ 100 = 1.0625 → 1
    JPY: [2, 0], // 125 × 120 ÷ 10000 = 1.5 → 2 (even)
  },
  y2: { EUR: [0.01, 0], GBP: [0.01, 0], JPY: [2, 0] },
  n1: {
    EUR: [-0.1, -0.3], // -1001 ÷ 100 = -10.01 → -10
    GBP: [-0.09, -0.26], // -1001 × 0.85 ÷ 100 = -8.5085 → -9; -3000 × 0.85 ÷ 100 = -25.5 → -26 (even)
    JPY: [-12, -36], // -1001 × 120 ÷ 10000 = -12.012 → -12; -3000 × 120 ÷ 10000 = -36
  },
  n2: {
    EUR: [-0.11, 0.2], // -1060 ÷ 100 = -10.6 → -11
    GBP: [-0.09, 0.17], // -1060 × 0.85 ÷ 100 = -9.01 → -9; 2000 × 0.85 ÷ 100 = 17
    JPY: [-13, 24], // -1060 × 120 ÷ 10000 = -12.72 → -13; 2000 × 120 ÷ 10000 = 24
  },
};

const RECORDS_QUERY = `query Records($c: ID!, $r: DateRangeInput!, $cur: Currency, $f: MarketingFilterInput) {
  marketingRecords(clientId: $c, dateRange: $r, currency: $cur, filter: $f) { recordId spend revenue currency }
}`;
const RECORDS_DEFAULT_CURRENCY = `query Records($c: ID!, $r: DateRangeInput!) {
  marketingRecords(clientId: $c, dateRange: $r) { recordId spend revenue currency }
}`;
const AGGREGATE_QUERY = `query Aggregate($c: ID!, $r: DateRangeInput!, $cur: Currency, $g: [Dimension!], $f: MarketingFilterInput) {
  marketingAggregate(clientId: $c, dateRange: $r, currency: $cur, metrics: [SPEND, REVENUE], groupBy: $g, filter: $f) {
    DATE_DAY TOTAL_SPEND TOTAL_REVENUE currency
  }
}`;

interface MoneyRow {
  recordId: string;
  spend: number;
  revenue: number;
  currency: string;
}

describe("money: conversion and half-even rounding", () => {
  let region: TestRegion;
  let token: string;

  before(async () => {
    region = await startTestRegion({ days: 1 });
    const store = region.service.store;
    const now = new Date();
    await store.createBrand({ brandId: BRAND, name: "Money", createdAt: now });
    await store.addGrants(BRAND, { markets: ["CH", "DE", "GB", "JP"], dataSources: ["google_ads"] });
    await store.upsertFxRates(RATES);
    assert.equal((await store.replaceRecords(BRAND, RECORDS)).rows, RECORDS.length);
    await store.publish(BRAND, region.today, now);
    token = await region.newAppToken({ appClientId: APP, brandId: BRAND, name: "Money", createdAt: now });
  });
  after(() => region.close());

  async function recordsIn(
    range: { from: string; to: string },
    currency: string,
    campaignIds?: string[],
  ): Promise<GraphQLResponse> {
    return region.graphql(
      RECORDS_QUERY,
      { c: BRAND, r: range, cur: currency, f: campaignIds ? { campaignIds } : undefined },
      token,
    );
  }

  function rowsOf(response: GraphQLResponse, field: string): unknown[] {
    assert.equal(response.status, 200, JSON.stringify(response.body.errors));
    assert.equal(response.body.errors, undefined);
    return response.body.data?.[field] as unknown[];
  }

  async function aggregate(
    range: { from: string; to: string },
    currency: string,
    campaignIds: string[],
    groupBy: string[] = [],
  ) {
    return rowsOf(
      await region.graphql(
        AGGREGATE_QUERY,
        { c: BRAND, r: range, cur: currency, g: groupBy, f: { campaignIds } },
        token,
      ),
      "marketingAggregate",
    );
  }

  function unsupported(field: string, message: string) {
    return {
      data: null,
      errors: [
        {
          message,
          extensions: { code: "UNSUPPORTED_CURRENCY" },
          locations: [{ line: 2, column: 3 }],
          path: [field],
        },
      ],
    };
  }

  for (const currency of ["EUR", "GBP", "JPY"] as const) {
    it(`converts every record to ${currency} with its day's rate (else the latest earlier) and rounds half-even`, async () => {
      const rows = rowsOf(await recordsIn(WEEK, currency), "marketingRecords") as MoneyRow[];
      const actual = Object.fromEntries(rows.map((row) => [row.recordId, row]));
      const expected = Object.fromEntries(
        Object.entries(EXPECTED_WEEK).map(([recordId, byCurrency]) => [
          recordId,
          { recordId, spend: byCurrency[currency][0], revenue: byCurrency[currency][1], currency },
        ]),
      );
      assert.deepEqual(actual, expected);
      assert.equal(rows.length, Object.keys(EXPECTED_WEEK).length);
    });
  }

  it("carries the latest rate from long before a range into it: records, aggregates read from the records, and the export", async () => {
    // 10000 × 1000000 ÷ (860000 × 100) = 116.27… → 116; 20000 × … = 232.55… → 233.
    const range = { from: "2020-01-20", to: "2020-01-21" };
    assert.deepEqual(rowsOf(await recordsIn(range, "EUR"), "marketingRecords"), [
      { recordId: "l1", spend: 1.16, revenue: 2.33, currency: "EUR" },
    ]);
    assert.deepEqual(await aggregate(range, "EUR", ["cmp-late-gbp"], ["DATE_DAY"]), [
      { DATE_DAY: "2020-01-20", TOTAL_SPEND: 1.16, TOTAL_REVENUE: 2.33, currency: "EUR" },
    ]);
    const exported = await region.inject({
      method: "GET",
      url: `/export/marketing-records?clientId=${BRAND}&from=${range.from}&to=${range.to}&currency=EUR`,
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(exported.statusCode, 200, exported.body);
    const line = JSON.parse(exported.body.trim()) as MoneyRow;
    assert.deepEqual([line.recordId, line.spend, line.revenue, line.currency], ["l1", 1.16, 2.33, "EUR"]);
  });

  it("answers in EUR when no currency is given", async () => {
    const response = await region.graphql(RECORDS_DEFAULT_CURRENCY, { c: BRAND, r: WEEK }, token);
    const rows = rowsOf(response, "marketingRecords") as MoneyRow[];
    assert.equal(rows.length, Object.keys(EXPECTED_WEEK).length);
    for (const row of rows) {
      const expected = EXPECTED_WEEK[row.recordId]!.EUR;
      assert.deepEqual(row, {
        recordId: row.recordId,
        spend: expected[0],
        revenue: expected[1],
        currency: "EUR",
      });
    }
    const [total] = rowsOf(
      await region.graphql(
        `query($c: ID!, $r: DateRangeInput!) {
  marketingAggregate(clientId: $c, dateRange: $r, metrics: [SPEND], groupBy: [], filter: {campaignIds: ["cmp-gbp"]}) { TOTAL_SPEND currency }
}`,
        { c: BRAND, r: WEEK },
        token,
      ),
      "marketingAggregate",
    );
    assert.deepEqual(total, { TOTAL_SPEND: 0.12, currency: "EUR" }); // GBP 0.1000 ÷ 0.80 = EUR 0.125 → 0.12
  });

  it("sums aggregates after converting each row, then rounds the sum half-even once", async () => {
    // a1, a2 (0.85) and a3 (0.80) to GBP, in 10⁻⁸ GBP: spend 1000 × 850000 × 10⁴ ÷ 10⁶ = 8500000 twice,
    // plus 8000000: 25000000 → 0.25 exactly, where the rounded records sum to 0.08 × 3 = 0.24.
    // Revenue: 4250000 × 2 + 4000000 = 12500000 → 12.5 cents → 12 (even), not 13.
    assert.deepEqual(await aggregate(WEEK, "GBP", ["cmp-agg-eur"]), [
      { DATE_DAY: null, TOTAL_SPEND: 0.25, TOTAL_REVENUE: 0.12, currency: "GBP" },
    ]);
    // Per day: Monday 8500000 × 2 = 17000000 → 0.17 (records: 0.08 + 0.08); revenue 8500000 → 8.5 → 8.
    assert.deepEqual(await aggregate(WEEK, "GBP", ["cmp-agg-eur"], ["DATE_DAY"]), [
      { DATE_DAY: "2020-01-07", TOTAL_SPEND: 0.08, TOTAL_REVENUE: 0.04, currency: "GBP" },
      { DATE_DAY: "2020-01-06", TOTAL_SPEND: 0.17, TOTAL_REVENUE: 0.08, currency: "GBP" },
    ]);
    // b1..b3, GBP 1.0000 each at 0.85 to EUR: 10000 × 10⁶ × 10⁴ ÷ 850000 = 117647058.82… → 117647059 per row;
    // × 3 = 352941177 → 352.941177 cents → 3.53, where the rounded records sum to 1.18 × 3 = 3.54.
    assert.deepEqual(await aggregate(WEEK, "EUR", ["cmp-agg-gbp"]), [
      { DATE_DAY: null, TOTAL_SPEND: 3.53, TOTAL_REVENUE: 0, currency: "EUR" },
    ]);
    // y1, y2, EUR 0.0125 each to JPY: 125 × 120000000 × 10⁴ ÷ 10⁶ = 150000000 (¥1.5) per row;
    // sum 300000000 → ¥3, where the rounded records are ¥2 each (¥4).
    assert.deepEqual(await aggregate(WEEK, "JPY", ["cmp-agg-jpy"]), [
      { DATE_DAY: null, TOTAL_SPEND: 3, TOTAL_REVENUE: 0, currency: "JPY" },
    ]);
    // And in EUR: 1250000 × 2 = 2500000 → 2.5 cents → 2 (even).
    assert.deepEqual(await aggregate(WEEK, "EUR", ["cmp-agg-jpy"]), [
      { DATE_DAY: null, TOTAL_SPEND: 0.02, TOTAL_REVENUE: 0, currency: "EUR" },
    ]);
  });

  it("sums refunds with their sign: negative totals round half-even by magnitude", async () => {
    // n1 + n2 to GBP in 10⁻⁸: spend -1001 × 850000 × 10⁴ ÷ 10⁶ = -8508500, -1060 × … = -9010000;
    // sum -17518500 → -17.5185 pence → -18 (not -17, truncation toward zero).
    // Revenue -3000 × … = -25500000, 2000 × … = 17000000; sum -8500000 → -8.5 → -8 (even, not -9).
    assert.deepEqual(await aggregate(WEEK, "GBP", ["cmp-refund"]), [
      { DATE_DAY: null, TOTAL_SPEND: -0.18, TOTAL_REVENUE: -0.08, currency: "GBP" },
    ]);
    // In EUR, the records' own currency: spend -2061 e4 → -20.61 cents → -21; revenue -1000 → -10.
    assert.deepEqual(await aggregate(WEEK, "EUR", ["cmp-refund"]), [
      { DATE_DAY: null, TOTAL_SPEND: -0.21, TOTAL_REVENUE: -0.1, currency: "EUR" },
    ]);
    // To JPY in 10⁻⁸: -1201200000 - 1272000000 = -2473200000 → ¥-24.732 → ¥-25; revenue -36 + 24 = ¥-12.
    assert.deepEqual(await aggregate(WEEK, "JPY", ["cmp-refund"]), [
      { DATE_DAY: null, TOTAL_SPEND: -25, TOTAL_REVENUE: -12, currency: "JPY" },
    ]);
  });

  it("converts each aggregated day with that day's rate, weekends with Friday's", async () => {
    // EUR 10 each: Thu 09 × 0.80 = 8.00, Sat 11 and Sun 12 × 0.90 (Friday's) = 9.00, Mon 13 × 0.86 = 8.60.
    assert.deepEqual(await aggregate(WEEK, "GBP", ["cmp-weekend"], ["DATE_DAY"]), [
      { DATE_DAY: "2020-01-13", TOTAL_SPEND: 8.6, TOTAL_REVENUE: 0, currency: "GBP" },
      { DATE_DAY: "2020-01-12", TOTAL_SPEND: 9, TOTAL_REVENUE: 0, currency: "GBP" },
      { DATE_DAY: "2020-01-11", TOTAL_SPEND: 9, TOTAL_REVENUE: 0, currency: "GBP" },
      { DATE_DAY: "2020-01-09", TOTAL_SPEND: 8, TOTAL_REVENUE: 0, currency: "GBP" },
    ]);
    assert.deepEqual(await aggregate(WEEK, "GBP", ["cmp-weekend"]), [
      { DATE_DAY: null, TOTAL_SPEND: 34.6, TOTAL_REVENUE: 0, currency: "GBP" },
    ]);
  });

  /** What an UNSUPPORTED_CURRENCY message adds: who can help (issue 57). */
  const ASKED_FOR =
    ", the currency asked for: ask for another currency (EUR needs no rate of its own) or leave out the money fields";
  const STORED =
    ", the currency of the brand's stored records: only the region's operator can load the missing rates; contact them";

  it("answers UNSUPPORTED_CURRENCY (HTTP 200, data null) when a record's day precedes every rate it needs", async () => {
    const early = { from: "2020-01-03", to: "2020-01-03" };
    const missingGbp = "cannot convert: there is no GBP reference rate on or before 2020-01-03";
    // To EUR, e1's source currency GBP has no rate yet (only the operator can help); to GBP, e2
    // needs the GBP rate as target (the caller can ask for another currency).
    for (const currency of ["EUR", "GBP"]) {
      const gbpMessage = currency === "GBP" ? `${missingGbp}${ASKED_FOR}` : `${missingGbp}${STORED}`;
      const response = await recordsIn(early, currency);
      assert.equal(response.status, 200);
      assert.deepEqual(response.body, unsupported("marketingRecords", gbpMessage));
      const aggregated = await region.graphql(
        AGGREGATE_QUERY,
        { c: BRAND, r: early, cur: currency, g: [] },
        token,
      );
      assert.equal(aggregated.status, 200);
      assert.deepEqual(aggregated.body, unsupported("marketingAggregate", gbpMessage));
    }
    const chf = { from: "2020-01-02", to: "2020-01-02" };
    const chfMessage = `cannot convert: there is no CHF reference rate on or before 2020-01-02${STORED}`;
    assert.deepEqual((await recordsIn(chf, "EUR")).body, unsupported("marketingRecords", chfMessage));
    assert.deepEqual(
      (await region.graphql(AGGREGATE_QUERY, { c: BRAND, r: chf, cur: "EUR", g: ["DATE_DAY"] }, token)).body,
      unsupported("marketingAggregate", chfMessage),
    );
    // A page past the end asks for the same impossible conversion: the same answer, not [].
    for (const [field, selection] of [
      [
        "marketingAggregate",
        "marketingAggregate(clientId: $c, dateRange: $r, metrics: [SPEND], pagination: {page: 2}) { TOTAL_SPEND }",
      ],
      ["marketingRecords", "marketingRecords(clientId: $c, dateRange: $r, pagination: {page: 2}) { spend }"],
    ] as const) {
      const pastEnd = await region.graphql(
        `query($c: ID!, $r: DateRangeInput!) {\n  ${selection}\n}`,
        { c: BRAND, r: chf },
        token,
      );
      assert.equal(pastEnd.status, 200);
      assert.deepEqual(pastEnd.body, unsupported(field, chfMessage));
    }
  });

  it("needs no rate to answer in a record's own currency, and still rounds it half-even", async () => {
    const early = { from: "2020-01-03", to: "2020-01-03" };
    // e1 in GBP: 12350 ÷ 100 = 123.5 → 124 (even); 12250 ÷ 100 = 122.5 → 122 (even).
    assert.deepEqual(rowsOf(await recordsIn(early, "GBP", ["cmp-early-gbp"]), "marketingRecords"), [
      { recordId: "e1", spend: 1.24, revenue: 1.22, currency: "GBP" },
    ]);
    assert.deepEqual(await aggregate(early, "GBP", ["cmp-early-gbp"]), [
      { DATE_DAY: null, TOTAL_SPEND: 1.24, TOTAL_REVENUE: 1.22, currency: "GBP" },
    ]);
    // e2 in EUR, its own currency, though no GBP rate exists yet.
    assert.deepEqual(rowsOf(await recordsIn(early, "EUR", ["cmp-early-eur"]), "marketingRecords"), [
      { recordId: "e2", spend: 1, revenue: 0, currency: "EUR" },
    ]);
    // CHF has no rate at all: 123450 ÷ 100 = 1234.5 → 1234 (even); 123550 ÷ 100 = 1235.5 → 1236 (even).
    const chf = { from: "2020-01-02", to: "2020-01-02" };
    assert.deepEqual(rowsOf(await recordsIn(chf, "CHF"), "marketingRecords"), [
      { recordId: "c1", spend: 12.34, revenue: 12.36, currency: "CHF" },
    ]);
    assert.deepEqual(await aggregate(chf, "CHF", ["cmp-chf"]), [
      { DATE_DAY: null, TOTAL_SPEND: 12.34, TOTAL_REVENUE: 12.36, currency: "CHF" },
    ]);
  });
});
