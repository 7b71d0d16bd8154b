/**
 * Loading FX reference rates through the admin API, and their use in GraphQL currency conversion.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as harness from "./admin-harness.js";

describe("admin API", () => {
  harness.useAdminRegion();

  describe("FX reference rates", () => {
    it("rejects a bad FX file changing nothing, then loads ECB wide rates, which convert amounts that had no rate before", async () => {
      const brand = await harness.newBrand("brand-fx");
      const records = [
        harness.rec("2020-03-02", "GB", "google_ads", "c-1"),
        harness.rec("2020-03-04", "GB", "google_ads", "c-1"),
      ];
      harness.expectStatus(
        await harness.load(brand.brandId, await harness.writeRecords("fx-records.csv", records)),
        200,
      );
      const before = await harness.region.graphql(
        harness.RECORDS,
        { c: brand.brandId, r: harness.RANGE, cur: "GBP" },
        brand.token,
      );
      assert.equal(before.status, 200);
      assert.deepEqual(
        before.body.errors?.map((error) => error.extensions.code),
        ["UNSUPPORTED_CURRENCY"],
      );

      // The ECB's own layout: every line ends with a comma; N/A is no rate; BGN is retired here.
      const ecb = [
        "Date,USD,JPY,BGN,GBP,",
        "2020-03-03,1.1156,120.33,1.9558,0.86833,",
        "2020-03-02,1.1139,119.63,1.9558,0.86590,",
        "2020-02-28,1.0977,118.9,N/A,0.8575,",
      ].join("\n");
      const path = await harness.writeFileIn("eurofxref-hist.csv", `${ecb}\n`);
      assert.deepEqual(
        harness.expectStatus(await harness.admin("POST", "/admin/fx", { path }), 422),
        harness.adminError("INVALID_FILE", `1 problem(s) in ${path}; nothing was changed`, [
          { line: 1, column: "BGN", message: '"BGN" is not a supported currency' },
        ]),
      );
      // Good GBP rates beside one bad USD rate: all or nothing, so GBP still has no rate.
      const badRate = await harness.writeFileIn(
        "bad-rate.csv",
        "Date,USD,GBP,\n2020-03-03,1.1156,0.86833,\n2020-03-02,1.1.1,0.86590,\n",
      );
      assert.deepEqual(
        harness.expectStatus(await harness.admin("POST", "/admin/fx", { path: badRate }), 422),
        harness.adminError("INVALID_FILE", `1 problem(s) in ${badRate}; nothing was changed`, [
          {
            line: 3,
            column: "USD",
            message: '"1.1.1" is not a positive decimal (units per 1 EUR, at most 6 decimal places)',
          },
        ]),
      );
      assert.equal(
        (
          await harness.region.graphql(
            harness.RECORDS,
            { c: brand.brandId, r: harness.RANGE, cur: "GBP" },
            brand.token,
          )
        ).body.errors?.[0]?.extensions.code,
        "UNSUPPORTED_CURRENCY",
      );

      const loaded = await harness.admin("POST", "/admin/fx", { path, ignoreUnknownCurrencies: true });
      assert.deepEqual(harness.expectStatus(loaded, 200), {
        rates: 9,
        currencies: ["GBP", "JPY", "USD"],
        ignoredCurrencies: ["BGN"],
        from: "2020-02-28",
        to: "2020-03-03",
      });
      const after = await harness.region.graphql(
        harness.RECORDS,
        { c: brand.brandId, r: harness.RANGE, cur: "GBP" },
        brand.token,
      );
      assert.equal(after.status, 200);
      assert.equal(after.body.errors, undefined);
      const rows = after.body.data?.["marketingRecords"] as harness.Rec[];
      // 2020-03-04 has no rate of its own: the latest earlier one (2020-03-03) converts it.
      assert.deepEqual(rows.map((row) => [row.date, row.spend, row.revenue, row.currency]).sort(), [
        ["2020-03-02", 10.69, 86.81, "GBP"],
        ["2020-03-04", 10.72, 87.05, "GBP"],
      ]);
    });

    it("refuses a relative FX path with 400 BAD_INPUT", async () => {
      assert.deepEqual(
        harness.expectStatus(await harness.admin("POST", "/admin/fx", { path: "rates.csv" }), 400),
        harness.adminError("BAD_INPUT", "path must be an absolute path of a file on the service's machine"),
      );
    });
  });
});
