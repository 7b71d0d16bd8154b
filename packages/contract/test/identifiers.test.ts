import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isBrandId, isChannel, isDataSource, isMarket, isRegion, MARKET_CODES } from "../src/index.js";

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
