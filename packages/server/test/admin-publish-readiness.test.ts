/**
 * Publishing a processing date drives readiness (CONTRACT §3 rule 8).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as harness from "./admin-harness.js";

/** The readiness status of `brand` for `date`. */
async function statusOf(brand: { brandId: string; token: string }, date: string): Promise<string> {
  const readiness = (await harness.readinessOf(brand, date)).body.data?.["marketingDataReadiness"];
  return (readiness as { status: string }).status;
}

describe("admin API", () => {
  harness.useAdminRegion();

  describe("publishes and readiness", () => {
    it("refuses to publish a processing date with no load of that date with 409, and readiness stays NOT_READY", async () => {
      const brand = await harness.newBrand("brand-publish-early");
      const refused = await harness.admin("POST", "/admin/publishes", {
        brandId: brand.brandId,
        processingDate: "2020-03-10",
      });
      assert.deepEqual(
        harness.expectStatus(refused, 409),
        harness.adminError(
          "CONFLICT",
          "no load for processing date 2020-03-10 of brand-publish-early; run mdq load first",
        ),
      );
      // A load of another processing date does not make this one publishable.
      harness.expectStatus(
        await harness.load(brand.brandId, await harness.writeRecords("early.csv", harness.days(1, 1)), {
          processingDate: "2020-03-09",
        }),
        200,
      );
      assert.equal(
        (
          await harness.admin("POST", "/admin/publishes", {
            brandId: brand.brandId,
            processingDate: "2020-03-10",
          })
        ).statusCode,
        409,
      );
      const readiness = await harness.readinessOf(brand, "2020-03-10");
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
      const brand = await harness.newBrand("brand-publish");
      harness.expectStatus(
        await harness.load(brand.brandId, await harness.writeRecords("p1.csv", harness.days(1, 3)), {
          processingDate: "2020-03-04",
        }),
        200,
      );
      const first = harness.expectStatus<{ brandId: string; processingDate: string; publishedAt: string }>(
        await harness.admin("POST", "/admin/publishes", {
          brandId: brand.brandId,
          processingDate: "2020-03-04",
        }),
        200,
      );
      assert.deepEqual(Object.keys(first).sort(), ["brandId", "processingDate", "publishedAt"]);
      assert.equal(first.brandId, brand.brandId);
      assert.equal(first.processingDate, "2020-03-04");
      assert.deepEqual((await harness.readinessOf(brand, "2020-03-04")).body, {
        data: {
          marketingDataReadiness: {
            status: "READY",
            date: "2020-03-04",
            lastProcessedAt: first.publishedAt,
            availableThrough: "2020-03-03",
          },
        },
      });

      await new Promise((resolve) => setTimeout(resolve, 5));
      harness.expectStatus(
        await harness.load(brand.brandId, await harness.writeRecords("p2.csv", harness.days(4, 1)), {
          processingDate: "2020-03-05",
        }),
        200,
      );
      const before = await harness.readinessOf(brand, "2020-03-05");
      assert.deepEqual(before.body.data?.["marketingDataReadiness"], {
        status: "NOT_READY",
        date: "2020-03-05",
        lastProcessedAt: first.publishedAt,
        availableThrough: "2020-03-04",
      });
      const second = harness.expectStatus<{ publishedAt: string }>(
        await harness.admin("POST", "/admin/publishes", {
          brandId: brand.brandId,
          processingDate: "2020-03-05",
        }),
        200,
      );
      assert.ok(Date.parse(second.publishedAt) > Date.parse(first.publishedAt));
      assert.deepEqual((await harness.readinessOf(brand, "2020-03-05")).body, {
        data: {
          marketingDataReadiness: {
            status: "READY",
            date: "2020-03-05",
            lastProcessedAt: second.publishedAt,
            availableThrough: "2020-03-04",
          },
        },
      });
    });

    it("a load is readable by the brand at once; a publish changes readiness only (docs/cli.md)", async () => {
      const brand = await harness.newBrand("brand-visible-at-once");
      const loaded = harness.days(1, 2);
      harness.expectStatus(
        await harness.load(brand.brandId, await harness.writeRecords("visible.csv", loaded), {
          processingDate: "2020-03-03",
        }),
        200,
      );
      const beforePublish = await harness.readAll(brand.brandId, brand.token);
      assert.deepEqual(beforePublish, harness.byRecordId(loaded));
      assert.equal(await statusOf(brand, "2020-03-03"), "NOT_READY");
      harness.expectStatus(
        await harness.admin("POST", "/admin/publishes", {
          brandId: brand.brandId,
          processingDate: "2020-03-03",
        }),
        200,
      );
      assert.equal(await statusOf(brand, "2020-03-03"), "READY");
      assert.deepEqual(await harness.readAll(brand.brandId, brand.token), beforePublish);
    });

    it("publishes today by default, after a load of today's processing date", async () => {
      const brand = await harness.newBrand("brand-publish-today");
      harness.expectStatus(
        await harness.load(brand.brandId, await harness.writeRecords("today.csv", harness.days(1, 1))),
        200,
      );
      const published = harness.expectStatus<{ processingDate: string; publishedAt: string }>(
        await harness.admin("POST", "/admin/publishes", { brandId: brand.brandId }),
        200,
      );
      assert.equal(published.processingDate, harness.region.today);
      const readiness = await harness.readinessOf(brand);
      assert.deepEqual(readiness.body.data?.["marketingDataReadiness"], {
        status: "READY",
        date: harness.region.today,
        lastProcessedAt: published.publishedAt,
        availableThrough: "2020-03-01",
      });
    });
  });
});
