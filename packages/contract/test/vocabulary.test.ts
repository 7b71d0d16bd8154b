import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  AGGREGATE_SORT_FIELDS,
  CURRENCY_CODES,
  isCurrencyCode,
  isDateDimension,
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
