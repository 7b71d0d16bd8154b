/**
 * Publishing a processing date drives readiness (CONTRACT §3 rule 8).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  admin,
  adminError,
  days,
  expectStatus,
  load,
  newBrand,
  READINESS,
  region,
  useAdminRegion,
  writeRecords,
} from "./admin-harness.js";

describe("admin API", () => {
  useAdminRegion();

  describe("publishes and readiness", () => {
    it("refuses to publish a processing date with no load of that date with 409, and readiness stays NOT_READY", async () => {
      const brand = await newBrand("brand-publish-early");
      const refused = await admin("POST", "/admin/publishes", {
        brandId: brand.brandId,
        processingDate: "2020-03-10",
      });
      assert.deepEqual(
        expectStatus(refused, 409),
        adminError(
          "CONFLICT",
          "no load for processing date 2020-03-10 of brand-publish-early; run mdq load first",
        ),
      );
      // A load of another processing date does not make this one publishable.
      expectStatus(
        await load(brand.brandId, await writeRecords("early.csv", days(1, 1)), {
          processingDate: "2020-03-09",
        }),
        200,
      );
      assert.equal(
        (await admin("POST", "/admin/publishes", { brandId: brand.brandId, processingDate: "2020-03-10" }))
          .statusCode,
        409,
      );
      const readiness = await region.graphql(READINESS, { c: brand.brandId, d: "2020-03-10" }, brand.token);
      assert.deepEqual(readiness.body, {
        data: {
          marketingDataReadiness: {
            status: "NOT_READY",
            date: "2020-03-10",
            lastProcessedAt: null,
            availableThrough: "2020-03-01",
          },
        },
      });
    });

    it("publishing after a load turns readiness READY and moves lastProcessedAt and availableThrough", async () => {
      const brand = await newBrand("brand-publish");
      expectStatus(
        await load(brand.brandId, await writeRecords("p1.csv", days(1, 3)), { processingDate: "2020-03-04" }),
        200,
      );
      const first = expectStatus<{ brandId: string; processingDate: string; publishedAt: string }>(
        await admin("POST", "/admin/publishes", { brandId: brand.brandId, processingDate: "2020-03-04" }),
        200,
      );
      assert.deepEqual(Object.keys(first).sort(), ["brandId", "processingDate", "publishedAt"]);
      assert.equal(first.brandId, brand.brandId);
      assert.equal(first.processingDate, "2020-03-04");
      assert.deepEqual(
        (await region.graphql(READINESS, { c: brand.brandId, d: "2020-03-04" }, brand.token)).body,
        {
          data: {
            marketingDataReadiness: {
              status: "READY",
              date: "2020-03-04",
              lastProcessedAt: first.publishedAt,
              availableThrough: "2020-03-03",
            },
          },
        },
      );

      await new Promise((resolve) => setTimeout(resolve, 5));
      expectStatus(
        await load(brand.brandId, await writeRecords("p2.csv", days(4, 1)), { processingDate: "2020-03-05" }),
        200,
      );
      const before = await region.graphql(READINESS, { c: brand.brandId, d: "2020-03-05" }, brand.token);
      assert.deepEqual(before.body.data?.["marketingDataReadiness"], {
        status: "NOT_READY",
        date: "2020-03-05",
        lastProcessedAt: first.publishedAt,
        availableThrough: "2020-03-04",
      });
      const second = expectStatus<{ publishedAt: string }>(
        await admin("POST", "/admin/publishes", { brandId: brand.brandId, processingDate: "2020-03-05" }),
        200,
      );
      assert.ok(Date.parse(second.publishedAt) > Date.parse(first.publishedAt));
      assert.deepEqual(
        (await region.graphql(READINESS, { c: brand.brandId, d: "2020-03-05" }, brand.token)).body,
        {
          data: {
            marketingDataReadiness: {
              status: "READY",
              date: "2020-03-05",
              lastProcessedAt: second.publishedAt,
              availableThrough: "2020-03-04",
            },
          },
        },
      );
    });

    it("publishes today by default, after a load of today's processing date", async () => {
      const brand = await newBrand("brand-publish-today");
      expectStatus(await load(brand.brandId, await writeRecords("today.csv", days(1, 1))), 200);
      const published = expectStatus<{ processingDate: string; publishedAt: string }>(
        await admin("POST", "/admin/publishes", { brandId: brand.brandId }),
        200,
      );
      assert.equal(published.processingDate, region.today);
      const readiness = await region.graphql(READINESS, { c: brand.brandId }, brand.token);
      assert.deepEqual(readiness.body.data?.["marketingDataReadiness"], {
        status: "READY",
        date: region.today,
        lastProcessedAt: published.publishedAt,
        availableThrough: "2020-03-01",
      });
    });
  });
});
