/**
 * The admin API's status report of every brand.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  admin,
  days,
  expectStatus,
  GRANTS,
  load,
  newBrand,
  region,
  useAdminRegion,
  writeRecords,
} from "./admin-harness.js";

describe("admin API", () => {
  useAdminRegion();

  describe("status", () => {
    it("lists each brand with grants, app counts, rows, day span, last publish and readyToday", async () => {
      const brand = await newBrand("brand-status");
      const second = expectStatus<{ app: { appClientId: string } }>(
        await admin("POST", "/admin/apps", { brandId: brand.brandId, name: "second" }),
        201,
      );
      expectStatus(await admin("POST", `/admin/apps/${second.app.appClientId}/revoke`), 200);
      expectStatus(
        await admin("POST", "/admin/brands", { brandId: "brand-status-empty", name: "Empty" }),
        201,
      );
      expectStatus(await load(brand.brandId, await writeRecords("status.csv", days(2, 3))), 200);
      const published = expectStatus<{ publishedAt: string }>(
        await admin("POST", "/admin/publishes", { brandId: brand.brandId }),
        200,
      );

      const status = expectStatus<{ region: string; today: string; brands: { brandId: string }[] }>(
        await admin("GET", "/admin/status"),
        200,
      );
      assert.equal(status.region, "uk");
      assert.equal(status.today, region.today);
      assert.deepEqual(
        status.brands.find((entry) => entry.brandId === brand.brandId),
        {
          brandId: "brand-status",
          name: "Brand brand-status",
          grants: GRANTS,
          apps: 2,
          activeApps: 1,
          rows: 36,
          firstDay: "2020-03-02",
          lastDay: "2020-03-04",
          lastPublishedAt: published.publishedAt,
          lastPublishedDate: region.today,
          readyToday: true,
        },
      );
      assert.deepEqual(
        status.brands.find((entry) => entry.brandId === "brand-status-empty"),
        {
          brandId: "brand-status-empty",
          name: "Empty",
          grants: { markets: [], dataSources: [] },
          apps: 0,
          activeApps: 0,
          rows: 0,
          firstDay: null,
          lastDay: null,
          lastPublishedAt: null,
          lastPublishedDate: null,
          readyToday: false,
        },
      );
      // The demo brands, seeded and published today, are listed too, in brand id order.
      const ids = status.brands.map((entry) => entry.brandId);
      assert.deepEqual(ids, [...ids].sort());
      for (const app of region.credentials.apps) assert.ok(ids.includes(app.brandClientId));
    });
  });
});
