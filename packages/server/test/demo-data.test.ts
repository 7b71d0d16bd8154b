import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CURRENCIES, CURRENCY_CODES } from "../src/currencies.js";
import { type DemoOptions, demoRecordCount, demoRecords, planDemo } from "../src/demo/demo-data.js";
import type { StoredRecord } from "../src/store/model/store.js";

const OPTIONS: DemoOptions = { today: "2026-03-18", days: 30, scale: 1 };

function weekdayOf(date: string): number {
  return new Date(`${date}T00:00:00Z`).getUTCDay();
}

function take<T>(iterable: Iterable<T>, n: number): T[] {
  const out: T[] = [];
  for (const item of iterable) {
    if (out.length >= n) break;
    out.push(item);
  }
  return out;
}

describe("demo data", () => {
  const plan = planDemo(OPTIONS);

  it("plans at least three brands with apps, one app narrowed", () => {
    assert.ok(plan.brands.length >= 3);
    for (const brand of plan.brands) {
      assert.ok(brand.apps.length >= 1 && brand.apps.length <= 2, brand.brandId);
      for (const market of brand.storedMarkets) assert.match(market, /^[A-Z]{2}$/);
      for (const source of brand.storedDataSources) assert.match(source, /^[a-z_]+$/);
    }
    assert.ok(
      plan.brands.some((brand) => brand.apps.some((app) => app.markets !== null || app.dataSources !== null)),
    );
    assert.equal(plan.firstDay, "2026-02-16");
    assert.equal(plan.lastDay, "2026-03-17");
  });

  it("is deterministic", () => {
    const again = planDemo(OPTIONS);
    assert.deepEqual(again, plan);
    for (const [i, brand] of plan.brands.entries()) {
      const otherBrand = again.brands[i];
      assert.ok(otherBrand);
      const first = take(demoRecords(plan, brand, OPTIONS), 500);
      const second = take(demoRecords(again, otherBrand, OPTIONS), 500);
      assert.equal(first.length, 500);
      assert.deepEqual(second, first);
    }
  });

  it("depends on the seed", () => {
    const brand = plan.brands[0];
    assert.ok(brand);
    const a = take(demoRecords(plan, brand, OPTIONS), 50);
    const b = take(demoRecords(plan, brand, { ...OPTIONS, seed: 7 }), 50);
    assert.notDeepEqual(
      a.map((r) => r.impressions),
      b.map((r) => r.impressions),
    );
  });

  const recordsByBrand = new Map<string, StoredRecord[]>();
  for (const brand of plan.brands) recordsByBrand.set(brand.brandId, [...demoRecords(plan, brand, OPTIONS)]);

  it("yields exactly demoRecordCount records", () => {
    for (const brand of plan.brands) {
      assert.equal(recordsByBrand.get(brand.brandId)?.length, demoRecordCount(plan, brand, OPTIONS));
    }
    const scaled = { ...OPTIONS, days: 3, scale: 3 };
    const scaledPlan = planDemo(scaled);
    for (const brand of scaledPlan.brands) {
      let n = 0;
      for (const _ of demoRecords(scaledPlan, brand, scaled)) n++;
      assert.equal(n, demoRecordCount(scaledPlan, brand, scaled));
    }
  });

  it("gives unique record ids per brand", () => {
    for (const records of recordsByBrand.values()) {
      assert.equal(new Set(records.map((r) => r.recordId)).size, records.length);
    }
  });

  it("produces plausible, non-negative metrics", () => {
    let zeroDays = 0;
    let total = 0;
    for (const [brandId, records] of recordsByBrand) {
      const brand = plan.brands.find((b) => b.brandId === brandId);
      assert.ok(brand);
      for (const r of records) {
        total++;
        assert.ok(Number.isInteger(r.impressions) && r.impressions >= 0 && r.impressions <= 500_000);
        assert.ok(Number.isInteger(r.clicks) && r.clicks >= 0 && r.clicks <= r.impressions, r.recordId);
        assert.ok(r.spendE4 >= 0n && r.conversionsE4 >= 0n && r.revenueE4 >= 0n, r.recordId);
        // At most two decimals.
        assert.equal(r.spendE4 % 100n, 0n);
        assert.equal(r.conversionsE4 % 100n, 0n);
        assert.equal(r.revenueE4 % 100n, 0n);
        if (CURRENCIES[r.currency].minorUnits === 0) {
          assert.equal(r.spendE4 % 10000n, 0n, r.recordId);
          assert.equal(r.revenueE4 % 10000n, 0n, r.recordId);
        }
        assert.equal(r.currency, brand.currencyByMarket[r.market]);
        assert.ok(r.date >= plan.firstDay && r.date <= plan.lastDay, r.date);
        assert.match(r.channel, /^(search|social|display|video|shopping)$/);
        if (r.impressions === 0) {
          zeroDays++;
          assert.equal(r.spendE4, 0n);
        }
      }
    }
    assert.ok(zeroDays > 0 && zeroDays < total * 0.05, `zero days ${zeroDays} of ${total}`);
  });

  it("uses currencies other than EUR, including one without minor units", () => {
    const currencies = new Set([...recordsByBrand.values()].flat().map((r) => r.currency));
    assert.ok(currencies.has("EUR") && currencies.has("GBP") && currencies.has("USD"));
    assert.ok([...currencies].some((c) => CURRENCIES[c].minorUnits === 0));
  });

  it("stores markets and data sources outside some brand's grants", () => {
    const leaky = plan.brands.filter((brand) => {
      const records = recordsByBrand.get(brand.brandId) ?? [];
      const markets = new Set(records.map((r) => r.market));
      const sources = new Set(records.map((r) => r.dataSource));
      for (const m of brand.grants.markets) if (!markets.has(m)) return false;
      for (const s of brand.grants.dataSources) if (!sources.has(s)) return false;
      return (
        [...markets].some((m) => !brand.grants.markets.includes(m)) &&
        [...sources].some((s) => !brand.grants.dataSources.includes(s))
      );
    });
    assert.ok(leaky.length >= 1);
  });

  it("has app narrowings inside the brand's grants", () => {
    for (const brand of plan.brands) {
      for (const app of brand.apps) {
        for (const m of app.markets ?? []) assert.ok(brand.grants.markets.includes(m), app.appClientId);
        for (const s of app.dataSources ?? [])
          assert.ok(brand.grants.dataSources.includes(s), app.appClientId);
      }
    }
  });

  it("has weekday FX rates for every non-EUR currency from before the first day through today", () => {
    const byCurrency = new Map<string, string[]>();
    for (const rate of plan.fxRates) {
      assert.notEqual(rate.currency, "EUR");
      assert.ok(rate.rateE6 > 0n);
      const wd = weekdayOf(rate.date);
      assert.ok(wd !== 0 && wd !== 6, `weekend rate on ${rate.date}`);
      const dates = byCurrency.get(rate.currency) ?? [];
      dates.push(rate.date);
      byCurrency.set(rate.currency, dates);
    }
    for (const code of CURRENCY_CODES) {
      if (code === "EUR") continue;
      const dates = byCurrency.get(code);
      assert.ok(dates && dates.length > 0, code);
      assert.ok((dates[0] ?? "") < plan.firstDay, code);
      assert.ok((dates.at(-1) ?? "") <= OPTIONS.today, code);
    }
    const usd = plan.fxRates.find((r) => r.currency === "USD");
    const jpy = plan.fxRates.find((r) => r.currency === "JPY");
    assert.ok(usd && usd.rateE6 > 950_000n && usd.rateE6 < 1_250_000n);
    assert.ok(jpy && jpy.rateE6 > 130_000_000n && jpy.rateE6 < 190_000_000n);
  });

  it("gives a day the same FX rates whatever day the demo runs and however many days it seeds", () => {
    const rateText = (rates: typeof plan.fxRates) =>
      new Map(rates.map((rate) => [`${rate.currency} ${rate.date}`, rate.rateE6]));
    const early = rateText(plan.fxRates);
    for (const later of [
      planDemo({ ...OPTIONS, today: "2026-03-19" }),
      planDemo({ ...OPTIONS, today: "2026-11-23", days: 400 }),
      planDemo({ ...OPTIONS, today: "2027-02-01", days: 365 }),
    ]) {
      const rates = rateText(later.fxRates);
      let shared = 0;
      for (const [key, rate] of early) {
        if (!rates.has(key)) continue;
        shared += 1;
        assert.equal(rates.get(key), rate, key);
      }
      assert.ok(shared > 20 * 28, `${shared} rates shared`);
    }
  });

  it("rejects bad options", () => {
    assert.throws(() => planDemo({ today: "2026-02-30" }), RangeError);
    assert.throws(() => planDemo({ today: "2026-03-18", days: 0 }), RangeError);
    const brand = plan.brands[0];
    assert.ok(brand);
    assert.throws(() => demoRecordCount(plan, brand, { ...OPTIONS, scale: 1.5 }), RangeError);
  });
});
