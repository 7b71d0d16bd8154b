import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  AGGREGATE_SORT_FIELDS,
  CURRENCY_CODES,
  isBrandId,
  isChannel,
  isCurrencyCode,
  isDataSource,
  isDateDimension,
  isMarket,
  isRegion,
  MARKET_CODES,
  RECORD_COLUMNS,
  RECORD_FIELDS,
  RECORD_SORT_FIELDS,
  TOTAL_FIELDS,
} from "../src/index.js";

describe("the contract's names", () => {
  it("lays a records file out as the record fields in snake_case", () => {
    const column = (field: string) => RECORD_COLUMNS[RECORD_FIELDS.indexOf(field as never)];
    assert.equal(column("recordId"), "record_id");
    assert.equal(column("dataSource"), "data_source");
    assert.equal(column("campaignName"), "campaign_name");
    assert.equal(column("spend"), "spend");
    assert.ok(RECORD_COLUMNS.every((name) => /^[a-z]+(_[a-z]+)*$/.test(name)));
    assert.equal(RECORD_COLUMNS.length, RECORD_FIELDS.length);
  });

  it("sorts aggregates by the dimensions and the TOTAL_ fields, records by the CONTRACT's fields", () => {
    assert.deepEqual(TOTAL_FIELDS, [
      "TOTAL_IMPRESSIONS",
      "TOTAL_CLICKS",
      "TOTAL_SPEND",
      "TOTAL_CONVERSIONS",
      "TOTAL_REVENUE",
    ]);
    assert.equal(AGGREGATE_SORT_FIELDS.length, 12);
    assert.deepEqual(RECORD_SORT_FIELDS.slice(0, 5), [
      "DATE_DAY",
      "MARKET",
      "DATA_SOURCE",
      "CHANNEL",
      "CAMPAIGN_ID",
    ]);
    assert.ok(Object.isFrozen(RECORD_FIELDS) && Object.isFrozen(AGGREGATE_SORT_FIELDS));
  });

  it("knows the date dimensions", () => {
    assert.deepEqual(["DATE_DAY", "DATE_WEEK", "DATE_MONTH", "MARKET"].map(isDateDimension), [
      true,
      true,
      true,
      false,
    ]);
  });

  it("puts EUR first among the currencies", () => {
    assert.equal(CURRENCY_CODES[0], "EUR");
    assert.equal(isCurrencyCode("GBP"), true);
    assert.equal(isCurrencyCode("XXX"), false);
    assert.equal(isCurrencyCode("toString"), false);
  });
});

describe("the contract's id shapes", () => {
  it("takes markets as upper-case ISO 3166-1 alpha-2 codes", () => {
    assert.equal(isMarket("GB"), true);
    for (const text of ["gb", "GBR", "G", "G1", ""]) assert.equal(isMarket(text), false, text);
    assert.equal(MARKET_CODES.size, 249);
    assert.equal(MARKET_CODES.has("GB") && !MARKET_CODES.has("UK"), true);
  });

  it("takes data sources and channels as lower-case ids of at most 64 characters", () => {
    for (const id of ["google_ads", "meta.ads", "tiktok-ads", "9x"]) assert.equal(isDataSource(id), true, id);
    for (const id of ["Google_ads", "_ads", "-ads", "a b", "", "a".repeat(65)]) {
      assert.equal(isDataSource(id), false, id);
    }
    assert.equal(isDataSource("a".repeat(64)), true);
    assert.equal(isChannel("search"), true);
    assert.equal(isChannel("Search"), false);
  });

  it("takes brand ids of 2 to 63 lower-case letters, digits and dashes", () => {
    assert.equal(isBrandId("brand-acme"), true);
    for (const id of ["b", "-brand", "brand_acme", "Brand", "b".repeat(64)])
      assert.equal(isBrandId(id), false, id);
  });

  it("takes regions of 2 to 8 lower-case letters", () => {
    assert.equal(isRegion("uk"), true);
    for (const code of ["u", "UK", "u1", "abcdefghi"]) assert.equal(isRegion(code), false, code);
  });
});
