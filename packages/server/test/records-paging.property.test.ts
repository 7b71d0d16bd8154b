/**
 * Property-based tests of what `marketingRecords` and `marketingAggregate` return (CONTRACT §3
 * rules 1, 3, 4, 6 and 7): for random apps, filters, sorts, page sizes, currencies and date
 * ranges, walking every page over HTTP returns each permitted row exactly once, in the requested
 * order, and aggregates equal the sums of the same records.
 *
 * Two oracles, one independent of the other: an unfiltered walk of the same range (pageSize
 * 5000) is the expected set of a filtered walk; and that walk is itself checked, field by field,
 * against the demo generator's rows restricted to the app's grants, with money converted in
 * BigInt from the generator's FX rates.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  DIMENSIONS,
  type Dimension,
  type MarketingRecord,
  METRICS,
  type Metric,
  RECORD_FIELDS,
  RECORD_SORT_FIELDS,
  type RecordSortField,
} from "@mdq/contract";
import { addDays, type GraphQLResponse, startTestRegion, type TestRegion } from "@mdq/test-support";
import fc from "fast-check";
import type { FxRate, StoredRecord } from "../src/store/model/store.js";
import { appTokens, seededDemo } from "./seeded-demo.js";

const DAYS = 120;
const RECORD_RUNS = 40;
const AGGREGATE_RUNS = 30;

/** ISO 4217 exponents of the currencies these properties request. */
const MINOR_UNITS = { EUR: 2, GBP: 2, USD: 2, JPY: 0 } as const;
type Currency = keyof typeof MINOR_UNITS;
const CURRENCIES = Object.keys(MINOR_UNITS) as Currency[];

/** Every channel the demo uses, plus one it never uses (a filter may match nothing). */
const CHANNELS = ["search", "shopping", "social", "display", "video", "audio"];

interface Filter {
  markets?: string[];
  dataSources?: string[];
  channels?: string[];
}

interface SortEntry {
  field: RecordSortField;
  direction: "ASC" | "DESC";
}

const RECORDS_QUERY = `query Records($c: ID!, $r: DateRangeInput!, $cur: Currency, $p: PaginationInput,
  $s: [RecordSortInput!], $f: MarketingFilterInput) {
  marketingRecords(clientId: $c, dateRange: $r, currency: $cur, pagination: $p, sort: $s, filter: $f) {
    ${RECORD_FIELDS.join(" ")}
  }
}`;

const SORT_KEY: Record<RecordSortField, (row: MarketingRecord) => string | number> = {
  DATE_DAY: (row) => row.date,
  MARKET: (row) => row.market,
  DATA_SOURCE: (row) => row.dataSource,
  CHANNEL: (row) => row.channel,
  CAMPAIGN_ID: (row) => row.campaignId,
  IMPRESSIONS: (row) => row.impressions,
  CLICKS: (row) => row.clicks,
  SPEND: (row) => row.spend,
  CONVERSIONS: (row) => row.conversions,
  REVENUE: (row) => row.revenue,
};

/** Monday of the ISO week of `date` (ISO weeks start on Monday; Sunday belongs to the week before). */
function isoWeekMonday(date: string): string {
  const weekday = new Date(`${date}T00:00:00Z`).getUTCDay();
  return addDays(date, -((weekday + 6) % 7));
}

/** n ÷ d rounded half to even, for n ≥ 0 and d > 0. */
function divHalfEven(n: bigint, d: bigint): bigint {
  const quotient = n / d;
  const twiceRemainder = 2n * (n % d);
  if (twiceRemainder > d || (twiceRemainder === d && quotient % 2n === 1n)) return quotient + 1n;
  return quotient;
}

/** Reference rates as the contract reads them: the day's rate, else the latest earlier one. */
class RateBook {
  private readonly byCurrency = new Map<string, FxRate[]>();
  private readonly cache = new Map<string, bigint>();

  constructor(rates: readonly FxRate[]) {
    for (const rate of rates) {
      const list = this.byCurrency.get(rate.currency) ?? [];
      list.push(rate);
      this.byCurrency.set(rate.currency, list);
    }
    for (const list of this.byCurrency.values()) list.sort((a, b) => (a.date < b.date ? -1 : 1));
  }

  rateE6(currency: string, date: string): bigint {
    if (currency === "EUR") return 1_000_000n;
    const key = `${currency} ${date}`;
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    let found: bigint | undefined;
    for (const rate of this.byCurrency.get(currency) ?? []) {
      if (rate.date > date) break;
      found = rate.rateE6;
    }
    if (found === undefined) throw new Error(`test oracle: no ${currency} rate on or before ${date}`);
    this.cache.set(key, found);
    return found;
  }

  /** A record's amount (ten-thousandths of its currency) in `target`'s minor units, half-even. */
  minor(amountE4: bigint, source: string, target: Currency, date: string): bigint {
    const perMinor = 10n ** BigInt(4 - MINOR_UNITS[target]);
    if (source === target) return divHalfEven(amountE4, perMinor);
    return divHalfEven(amountE4 * this.rateE6(target, date), this.rateE6(source, date) * perMinor);
  }

  /** The same amount in 10⁻⁸ of `target`, half-even: what an aggregate sums per row. */
  e8(amountE4: bigint, source: string, target: Currency, date: string): bigint {
    if (source === target) return amountE4 * 10_000n;
    return divHalfEven(amountE4 * this.rateE6(target, date) * 10_000n, this.rateE6(source, date));
  }
}

function minorToNumber(minor: bigint, currency: Currency): number {
  return Number(minor) / 10 ** MINOR_UNITS[currency];
}

function within(values: readonly string[] | undefined, value: string): boolean {
  return values === undefined || values.includes(value);
}

/** The rows and pageInfo of a 200 answer without errors for the paged `field`. */
function pageOf<Row>(response: GraphQLResponse, field: string) {
  assert.equal(response.status, 200, JSON.stringify(response.body.errors));
  assert.equal(response.body.errors, undefined);
  const rows = response.body.data?.[field] as Row[];
  const pageInfo = response.body.extensions?.pageInfo?.[field];
  assert.ok(pageInfo, `extensions.pageInfo.${field} is reported`);
  return { rows, pageInfo };
}

describe("marketingRecords and marketingAggregate under random queries", () => {
  let region: TestRegion;
  let rates: RateBook;
  /** Every stored record of each brand (granted or not), from the generator the region was seeded with. */
  let stored: Map<string, StoredRecord[]>;
  let tokens: Map<string, string>;
  let firstDay: string;
  let lastDay: string;

  before(async () => {
    region = await startTestRegion({ days: DAYS });
    const seeded = seededDemo(region, DAYS);
    firstDay = seeded.plan.firstDay;
    lastDay = seeded.plan.lastDay;
    rates = new RateBook(seeded.plan.fxRates);
    stored = seeded.stored;
    tokens = await appTokens(region);
  });
  after(() => region.close());

  type App = TestRegion["credentials"]["apps"][number];

  async function recordsPage(
    app: App,
    variables: {
      from: string;
      to: string;
      currency: Currency;
      page: number;
      pageSize: number;
      sort?: SortEntry[];
      filter?: Filter;
    },
  ) {
    const response = await region.graphql(
      RECORDS_QUERY,
      {
        c: app.brandClientId,
        r: { from: variables.from, to: variables.to },
        cur: variables.currency,
        p: { page: variables.page, pageSize: variables.pageSize },
        s: variables.sort,
        f: variables.filter,
      },
      tokens.get(app.appClientId),
    );
    return pageOf<MarketingRecord>(response, "marketingRecords");
  }

  /**
   * Walks every page and checks the paging contract on the way: full pages until the last,
   * `hasNextPage` false exactly on the last, a steady `totalCount`, and `[]` past the end.
   */
  async function walk(
    app: App,
    query: {
      from: string;
      to: string;
      currency: Currency;
      pageSize: number;
      sort?: SortEntry[];
      filter?: Filter;
    },
  ): Promise<{ rows: MarketingRecord[]; pages: number }> {
    const rows: MarketingRecord[] = [];
    let totalCount: number | undefined;
    let dataVersion: string | undefined;
    let page = 1;
    for (;;) {
      const result = await recordsPage(app, { ...query, page });
      totalCount ??= result.pageInfo.totalCount;
      // Nothing is loaded during the walk, so the data version holds steady.
      dataVersion ??= result.pageInfo.dataVersion;
      const hasNextPage = page * query.pageSize < totalCount;
      assert.deepEqual(result.pageInfo, {
        page,
        pageSize: query.pageSize,
        totalCount,
        hasNextPage,
        dataVersion,
      });
      assert.equal(result.rows.length, Math.max(0, Math.min(query.pageSize, totalCount - rows.length)));
      rows.push(...result.rows);
      if (!hasNextPage) break;
      page += 1;
    }
    const past = await recordsPage(app, { ...query, page: page + 1 });
    assert.deepEqual(past.rows, []);
    assert.deepEqual(past.pageInfo, {
      page: page + 1,
      pageSize: query.pageSize,
      totalCount,
      hasNextPage: false,
      dataVersion,
    });
    assert.equal(rows.length, totalCount);
    assert.equal(new Set(rows.map((row) => row.recordId)).size, rows.length, "recordIds are unique");
    return { rows, pages: page };
  }

  /** The rows `app` may read in [from, to], per the generator, in `currency`. */
  function generatorRows(app: App, from: string, to: string, currency: Currency): MarketingRecord[] {
    return (stored.get(app.brandClientId) ?? [])
      .filter(
        (record) =>
          record.date >= from &&
          record.date <= to &&
          app.markets.includes(record.market) &&
          app.dataSources.includes(record.dataSource),
      )
      .map(({ spendE4, conversionsE4, revenueE4, currency: storedCurrency, ...kept }) => ({
        ...kept,
        spend: minorToNumber(rates.minor(spendE4, storedCurrency, currency, kept.date), currency),
        conversions: Number(conversionsE4) / 10_000,
        revenue: minorToNumber(rates.minor(revenueE4, storedCurrency, currency, kept.date), currency),
        currency,
      }));
  }

  /** The unfiltered walk of a range, checked against the generator: exactly the granted rows. */
  async function oracle(app: App, from: string, to: string, currency: Currency): Promise<MarketingRecord[]> {
    const { rows } = await walk(app, { from, to, currency, pageSize: 5000 });
    for (const row of rows) {
      assert.ok(app.markets.includes(row.market), `${row.recordId}: market ${row.market} is not granted`);
      assert.ok(
        app.dataSources.includes(row.dataSource),
        `${row.recordId}: ${row.dataSource} is not granted`,
      );
      assert.ok(row.date >= from && row.date <= to, `${row.recordId}: ${row.date} is outside ${from}..${to}`);
    }
    const byId = (a: MarketingRecord, b: MarketingRecord) => (a.recordId < b.recordId ? -1 : 1);
    assert.deepEqual([...rows].sort(byId), generatorRows(app, from, to, currency).sort(byId));
    return rows;
  }

  /** Whether `a` may precede `b` under `sort`, then recordId ASC (compared as strings). */
  function inOrder(a: MarketingRecord, b: MarketingRecord, sort: readonly SortEntry[]): boolean {
    for (const { field, direction } of sort) {
      const left = SORT_KEY[field](a);
      const right = SORT_KEY[field](b);
      if (left === right) continue;
      return direction === "ASC" ? left < right : left > right;
    }
    return a.recordId < b.recordId;
  }

  /** Apps of every size: acme 21 rows a day, acme-uk 4 (narrowed), globex 32, initech-search 14. */
  const appArbitrary = fc.constantFrom(
    "app-acme-analytics",
    "app-acme-uk",
    "app-globex-bi",
    "app-initech-search",
  );
  /** 1..90 days from up to 15 days before the data, often long; two branches in three straddle an end. */
  const rangeArbitrary = fc.oneof(
    fc.record({
      start: fc.integer({ min: -15, max: DAYS - 1 }),
      length: fc.oneof(fc.integer({ min: 1, max: 90 }), fc.integer({ min: 60, max: 90 })),
    }),
    // Straddling the first seeded day…
    fc.record({ start: fc.integer({ min: -15, max: -1 }), length: fc.integer({ min: 16, max: 90 }) }),
    // …or the last (offset DAYS - 1): from ≥ 31 days in, a ≤ 90-day range can end past it.
    fc
      .integer({ min: 31, max: DAYS - 1 })
      .chain((start) =>
        fc.record({ start: fc.constant(start), length: fc.integer({ min: DAYS - start + 1, max: 90 }) }),
      ),
  );
  const pageSizeArbitrary = fc.oneof(
    { arbitrary: fc.constant(1000), weight: 2 },
    { arbitrary: fc.integer({ min: 1000, max: 5000 }), weight: 1 },
  );
  const sortArbitrary = fc.uniqueArray(
    fc.record({
      field: fc.constantFrom(...RECORD_SORT_FIELDS),
      direction: fc.constantFrom("ASC" as const, "DESC" as const),
    }),
    { maxLength: 3, selector: (entry) => entry.field },
  );

  /** A page size dividing `count`: half of it when that is allowed, else all of it. */
  function dividingPageSize(count: number, kind: "exact" | "half"): number {
    if (kind === "half" && count % 2 === 0 && count / 2 >= 1000) return count / 2;
    assert.ok(count >= 1000 && count <= 5000, `${count} rows fit one allowed page`);
    return count;
  }

  function rangeOf(range: { start: number; length: number }): { from: string; to: string } {
    const from = addDays(firstDay, range.start);
    return { from, to: addDays(from, range.length - 1) };
  }

  function filterArbitrary(app: App): fc.Arbitrary<Filter> {
    return fc.record(
      {
        markets: fc.subarray(app.markets, { minLength: 1 }),
        dataSources: fc.subarray(app.dataSources, { minLength: 1 }),
        channels: fc.subarray(CHANNELS, { minLength: 1 }),
      },
      { requiredKeys: [] },
    );
  }

  function appNamed(appClientId: string): App {
    const app = region.credentials.apps.find((entry) => entry.appClientId === appClientId);
    assert.ok(app, appClientId);
    return app;
  }

  it("walks every page of a filtered, sorted range and gets each permitted row once, in order", async (t) => {
    let multiPageWalks = 0;
    let exactMultiples = 0;
    let partlyOutside = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          appArbitrary.chain((appClientId) =>
            fc.record({
              appClientId: fc.constant(appClientId),
              filter: filterArbitrary(appNamed(appClientId)),
              sort: sortArbitrary,
              range: rangeArbitrary,
              pageSize: pageSizeArbitrary,
              currency: fc.constantFrom(...CURRENCIES),
            }),
          ),
          // Long walks: an unfiltered 70–90 days inside the data of a big app (acme 21 rows a
          // day, globex 32) at pageSize ≤ 1400 always spans two or three pages; or a pageSize
          // that divides the row count exactly ("exact": one full page, "half": two), where
          // `hasNextPage` must turn false on the last full page.
          fc.record({
            appClientId: fc.constantFrom("app-acme-analytics", "app-globex-bi"),
            filter: fc.constant<Filter>({}),
            sort: sortArbitrary,
            range: fc.record({
              start: fc.integer({ min: 0, max: 29 }),
              length: fc.integer({ min: 70, max: 90 }),
            }),
            pageSize: fc.oneof(
              { arbitrary: fc.integer({ min: 1000, max: 1400 }), weight: 2 },
              { arbitrary: fc.constantFrom("exact" as const, "half" as const), weight: 1 },
            ),
            currency: fc.constantFrom(...CURRENCIES),
          }),
        ),
        async ({ appClientId, filter, sort, range, pageSize, currency }) => {
          const app = appNamed(appClientId);
          const { from, to } = rangeOf(range);
          if (from < firstDay || to > lastDay) partlyOutside += 1;
          const all = await oracle(app, from, to, currency);
          const expected = all.filter(
            (row) =>
              within(filter.markets, row.market) &&
              within(filter.dataSources, row.dataSource) &&
              within(filter.channels, row.channel),
          );
          const size = typeof pageSize === "number" ? pageSize : dividingPageSize(expected.length, pageSize);
          if (expected.length > 0 && expected.length % size === 0) exactMultiples += 1;
          const { rows, pages } = await walk(app, { from, to, currency, pageSize: size, sort, filter });
          if (pages > 1) multiPageWalks += 1;
          const expectedById = new Map(expected.map((row) => [row.recordId, row]));
          assert.equal(rows.length, expected.length);
          for (const row of rows) assert.deepEqual(row, expectedById.get(row.recordId));
          const order = sort.length > 0 ? sort : [{ field: "DATE_DAY", direction: "DESC" } as const];
          for (let index = 1; index < rows.length; index += 1) {
            const previous = rows[index - 1]!;
            const current = rows[index]!;
            assert.ok(
              inOrder(previous, current, order),
              `row ${index - 1} (${previous.recordId}) must precede row ${index} (${current.recordId}) under ${JSON.stringify(order)}`,
            );
          }
        },
      ),
      { numRuns: RECORD_RUNS },
    );
    // The property is only worth something if it walked several pages and crossed the data's ends.
    t.diagnostic(
      `${multiPageWalks} of ${RECORD_RUNS} walks spanned several pages; ${exactMultiples} filled their last page exactly; ${partlyOutside} ranges reached outside the data`,
    );
    assert.ok(multiPageWalks > 0, "some walks spanned several pages");
    assert.ok(partlyOutside > 0, "some ranges reached outside the seeded days");
  });

  it("ends the walk on a full last page when the row count is a multiple of the page size", async () => {
    const globex = appNamed("app-globex-bi");
    // globex reads 32 rows a day: 40 days are 1280 rows (one page of 1280), 64 days 2048 (two of 1024).
    for (const [days, pageSize, pages] of [
      [40, 1280, 1],
      [64, 1024, 2],
    ] as const) {
      const from = addDays(firstDay, 10);
      const to = addDays(from, days - 1);
      const sort: SortEntry[] = [{ field: "CAMPAIGN_ID", direction: "DESC" }];
      const all = await oracle(globex, from, to, "EUR");
      assert.equal(all.length, days * 32);
      const walked = await walk(globex, { from, to, currency: "EUR", pageSize, sort });
      assert.equal(walked.pages, pages);
      assert.deepEqual(
        new Set(walked.rows.map((row) => row.recordId)),
        new Set(all.map((row) => row.recordId)),
      );
    }
  });

  it("totals every aggregate group as the sum of the same records (money: convert each row, sum, round)", async () => {
    await fc.assert(
      fc.asyncProperty(
        appArbitrary.chain((appClientId) =>
          fc.record({
            appClientId: fc.constant(appClientId),
            filter: fc.option(filterArbitrary(appNamed(appClientId)), { nil: undefined }),
            range: rangeArbitrary,
            groupBy: fc.subarray([...DIMENSIONS], { maxLength: 3 }),
            metrics: fc.subarray([...METRICS], { minLength: 1 }),
            currency: fc.constantFrom(...CURRENCIES),
          }),
        ),
        async ({ appClientId, filter, range, groupBy, metrics, currency }) => {
          const app = appNamed(appClientId);
          const { from, to } = rangeOf(range);
          const records = (
            await walk(app, { from, to, currency, pageSize: 5000, ...(filter ? { filter } : {}) })
          ).rows;
          const groups = await aggregateGroups(app, { from, to, currency, groupBy, metrics, filter });
          checkTotals(app, { groupBy, metrics, currency }, records, groups);
        },
      ),
      { numRuns: AGGREGATE_RUNS },
    );
  });

  type AggregateRow = Record<string, string | number | null>;

  async function aggregateGroups(
    app: App,
    query: {
      from: string;
      to: string;
      currency: Currency;
      groupBy: Dimension[];
      metrics: Metric[];
      filter: Filter | undefined;
    },
  ): Promise<AggregateRow[]> {
    const totals = query.metrics.map((metric) => `TOTAL_${metric}`).join(" ");
    const text = `query Aggregate($c: ID!, $r: DateRangeInput!, $cur: Currency, $m: [Metric!]!, $g: [Dimension!],
      $p: PaginationInput, $f: MarketingFilterInput) {
      marketingAggregate(clientId: $c, dateRange: $r, currency: $cur, metrics: $m, groupBy: $g, pagination: $p,
        filter: $f) { ${DIMENSIONS.join(" ")} ${totals} currency }
    }`;
    const rows: AggregateRow[] = [];
    for (let page = 1; ; page += 1) {
      const response = await region.graphql(
        text,
        {
          c: app.brandClientId,
          r: { from: query.from, to: query.to },
          cur: query.currency,
          m: query.metrics,
          g: query.groupBy,
          p: { page, pageSize: 5000 },
          f: query.filter,
        },
        tokens.get(app.appClientId),
      );
      const { rows: pageRows, pageInfo } = pageOf<AggregateRow>(response, "marketingAggregate");
      rows.push(...pageRows);
      if (!pageInfo.hasNextPage) {
        assert.equal(rows.length, pageInfo.totalCount, "totalCount is the number of groups");
        return rows;
      }
    }
  }

  function groupKeyOf(record: MarketingRecord, dimension: Dimension): string {
    switch (dimension) {
      case "DATE_DAY":
        return record.date;
      case "DATE_WEEK":
        return isoWeekMonday(record.date);
      case "DATE_MONTH":
        return `${record.date.slice(0, 7)}-01`;
      case "MARKET":
        return record.market;
      case "DATA_SOURCE":
        return record.dataSource;
      case "CHANNEL":
        return record.channel;
      case "CAMPAIGN_ID":
        return record.campaignId;
    }
  }

  function checkTotals(
    app: App,
    query: { groupBy: Dimension[]; metrics: Metric[]; currency: Currency },
    records: MarketingRecord[],
    groups: AggregateRow[],
  ): void {
    const { groupBy, metrics, currency } = query;
    const storedById = new Map(
      (stored.get(app.brandClientId) ?? []).map((record) => [record.recordId, record]),
    );
    const expected = new Map<string, MarketingRecord[]>();
    for (const record of records) {
      const key = JSON.stringify(groupBy.map((dimension) => groupKeyOf(record, dimension)));
      const members = expected.get(key) ?? [];
      members.push(record);
      expected.set(key, members);
    }
    // groupBy [] is one row of grand totals, even over no rows at all (rule 6).
    if (groupBy.length === 0 && expected.size === 0) expected.set("[]", []);
    assert.equal(groups.length, expected.size, "one row per group");
    const seen = new Set<string>();
    const minorPerUnit = 10 ** MINOR_UNITS[currency];
    for (const group of groups) {
      const key = JSON.stringify(groupBy.map((dimension) => group[dimension]));
      assert.ok(!seen.has(key), `group ${key} appears once`);
      seen.add(key);
      const members = expected.get(key);
      assert.ok(members, `group ${key} has records`);
      assert.equal(group["currency"], currency);
      for (const dimension of DIMENSIONS) {
        if (!groupBy.includes(dimension)) assert.equal(group[dimension], null, `${dimension} is not grouped`);
      }
      for (const metric of METRICS) {
        if (!metrics.includes(metric)) assert.equal(group[`TOTAL_${metric}`], undefined);
      }
      const total = (metric: Metric) => group[`TOTAL_${metric}`] as number;
      if (metrics.includes("IMPRESSIONS"))
        assert.equal(
          total("IMPRESSIONS"),
          members.reduce((sum, record) => sum + record.impressions, 0),
        );
      if (metrics.includes("CLICKS"))
        assert.equal(
          total("CLICKS"),
          members.reduce((sum, record) => sum + record.clicks, 0),
        );
      if (metrics.includes("CONVERSIONS")) {
        const sum = members.reduce((accumulated, record) => accumulated + record.conversions, 0);
        assert.ok(
          Math.abs(total("CONVERSIONS") - sum) <= 1e-6 * Math.max(1, Math.abs(sum)),
          `conversions ${total("CONVERSIONS")} vs ${sum}`,
        );
      }
      for (const metric of ["SPEND", "REVENUE"] as const) {
        if (!metrics.includes(metric)) continue;
        const field = metric === "SPEND" ? "spend" : "revenue";
        // Each record is rounded to the minor unit (off by at most half of one); the aggregate
        // converts each row to 10⁻⁸ (off by at most 0.5e-8 each, far below a minor unit), sums
        // and rounds once (off by at most half a minor unit). So the two differ by at most
        // n × ½ + ½ minor units; one whole minor unit of slack covers the 10⁻⁸ terms and float
        // printing: 0.005 × n + 0.01 in a two-decimal currency.
        const roundedSum = members.reduce((sum, record) => sum + Math.round(record[field] * minorPerUnit), 0);
        const bound = 0.5 * members.length + 1;
        assert.ok(
          Math.abs(roundedSum - total(metric) * minorPerUnit) <= bound,
          `${metric}: Σ rounded ${roundedSum} vs aggregate ${total(metric)} (${members.length} rows)`,
        );
        // And exactly the documented rule, from the stored amounts: rows of one source currency
        // and day share a rate, so their sum is converted (to 10⁻⁸, half-even); sum; round.
        const amountByCurrencyDay = new Map<string, { currency: string; date: string; amount: bigint }>();
        for (const record of members) {
          const source = storedById.get(record.recordId)!;
          const amount = metric === "SPEND" ? source.spendE4 : source.revenueE4;
          const key = `${source.currency} ${source.date}`;
          const partial = amountByCurrencyDay.get(key) ?? {
            currency: source.currency,
            date: source.date,
            amount: 0n,
          };
          partial.amount += amount;
          amountByCurrencyDay.set(key, partial);
        }
        let sumE8 = 0n;
        for (const partial of amountByCurrencyDay.values()) {
          sumE8 += rates.e8(partial.amount, partial.currency, currency, partial.date);
        }
        const exact = minorToNumber(divHalfEven(sumE8, 10n ** BigInt(8 - MINOR_UNITS[currency])), currency);
        assert.equal(total(metric), exact, `${metric} of group ${key}`);
      }
    }
  }
});
