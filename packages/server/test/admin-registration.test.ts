/**
 * Registering brands, apps and grants through the admin API, and their effect on tokens and GraphQL (CONTRACT §2).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  admin,
  adminError,
  byRecordId,
  days,
  decodeJwt,
  expectStatus,
  load,
  newBrand,
  RANGE,
  RECORDS,
  readAll,
  region,
  tokenRequest,
  useAdminRegion,
  writeRecords,
} from "./admin-harness.js";

describe("admin API", () => {
  useAdminRegion();

  describe("brands", () => {
    it("creates a brand with 201 and lists it", async () => {
      const started = Date.now();
      const body = expectStatus<{ brand: { brandId: string; name: string; createdAt: string } }>(
        await admin("POST", "/admin/brands", { brandId: "brand-new", name: "  New Brand " }),
        201,
      );
      assert.deepEqual(Object.keys(body.brand).sort(), ["brandId", "createdAt", "name"]);
      assert.equal(body.brand.brandId, "brand-new");
      assert.equal(body.brand.name, "New Brand");
      assert.match(body.brand.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.ok(Date.parse(body.brand.createdAt) >= started - 1000);
      const list = expectStatus<{ brands: unknown[] }>(await admin("GET", "/admin/brands"), 200);
      assert.deepEqual(
        list.brands.find((brand) => (brand as { brandId: string }).brandId === "brand-new"),
        body.brand,
      );
    });

    it("derives the brand id from the name when none is given", async () => {
      const body = expectStatus<{ brand: { brandId: string; name: string } }>(
        await admin("POST", "/admin/brands", { name: "Zeta & Sons, Ltd." }),
        201,
      );
      assert.equal(body.brand.brandId, "zeta-sons-ltd");
      assert.equal(body.brand.name, "Zeta & Sons, Ltd.");
    });

    it("refuses an existing brand id with 409 CONFLICT", async () => {
      expectStatus(await admin("POST", "/admin/brands", { brandId: "brand-twice", name: "Twice" }), 201);
      const response = await admin("POST", "/admin/brands", { brandId: "brand-twice", name: "Again" });
      assert.deepEqual(expectStatus(response, 409), adminError("CONFLICT", "brand brand-twice exists"));
    });

    it("refuses a malformed brand id with 400 BAD_INPUT and creates nothing", async () => {
      for (const brandId of ["A-brand", "x", "-dash", "has space", "brand_underscore", "a".repeat(64), 42]) {
        const response = await admin("POST", "/admin/brands", { brandId, name: "Bad" });
        assert.deepEqual(
          expectStatus(response, 400),
          adminError(
            "BAD_INPUT",
            `brandId must match ^[a-z0-9][a-z0-9-]{1,62}$; got ${JSON.stringify(brandId)}`,
          ),
        );
      }
      const list = expectStatus<{ brands: { name: string }[] }>(await admin("GET", "/admin/brands"), 200);
      assert.equal(
        list.brands.some((brand) => brand.name === "Bad"),
        false,
      );
    });

    it("refuses a missing name, or a body that is not a JSON object, with 400 BAD_INPUT", async () => {
      assert.deepEqual(
        expectStatus(await admin("POST", "/admin/brands", { brandId: "no-name" }), 400),
        adminError("BAD_INPUT", "name must be a non-empty string of at most 200 characters"),
      );
      assert.deepEqual(
        expectStatus(await admin("POST", "/admin/brands", ["brand"]), 400),
        adminError("BAD_INPUT", "the body must be a JSON object"),
      );
    });
  });

  describe("apps", () => {
    it("creates an app whose secret works at the token endpoint and never appears in listings", async () => {
      expectStatus(await admin("POST", "/admin/brands", { brandId: "brand-apps", name: "Apps" }), 201);
      const created = expectStatus<{ app: Record<string, unknown>; appClientSecret: string }>(
        await admin("POST", "/admin/apps", {
          brandId: "brand-apps",
          name: "Reporting",
          markets: ["GB", "GB"],
        }),
        201,
      );
      const { app, appClientSecret } = created;
      assert.deepEqual(Object.keys(created).sort(), ["app", "appClientSecret"]);
      assert.deepEqual(Object.keys(app).sort(), [
        "appClientId",
        "brandId",
        "createdAt",
        "dataSources",
        "markets",
        "name",
        "previousSecretExpiresAt",
        "revokedAt",
      ]);
      assert.equal(app["brandId"], "brand-apps");
      assert.equal(app["name"], "Reporting");
      assert.deepEqual(app["markets"], ["GB"]);
      assert.equal(app["dataSources"], null);
      assert.equal(app["revokedAt"], null);
      assert.equal(app["previousSecretExpiresAt"], null);
      // ≥ 256 bits of secret (CONTRACT §2).
      assert.ok(Buffer.from(appClientSecret, "base64url").length >= 32, appClientSecret);

      const token = expectStatus<Record<string, unknown>>(
        await tokenRequest(String(app["appClientId"]), appClientSecret),
        200,
      );
      assert.equal(token["token_type"], "Bearer");
      assert.equal(decodeJwt(String(token["access_token"])).claims["brand"], "brand-apps");

      const listing = await admin("GET", "/admin/apps?brandId=brand-apps");
      assert.deepEqual(expectStatus(listing, 200), { apps: [app] });
      const everything = await admin("GET", "/admin/apps");
      assert.equal(everything.statusCode, 200);
      assert.equal(everything.body.includes(appClientSecret), false);
      assert.doesNotMatch(everything.body, /secret_?hash|secretHash/i);
    });

    it("refuses an app for an unknown brand with 404 and a bad narrowing with 400", async () => {
      assert.deepEqual(
        expectStatus(await admin("POST", "/admin/apps", { brandId: "no-such-brand", name: "X" }), 404),
        adminError("NOT_FOUND", 'no brand "no-such-brand"'),
      );
      assert.deepEqual(
        expectStatus(await admin("GET", "/admin/apps?brandId=no-such-brand"), 404),
        adminError("NOT_FOUND", 'no brand "no-such-brand"'),
      );
      expectStatus(await admin("POST", "/admin/brands", { brandId: "brand-narrow", name: "N" }), 201);
      assert.deepEqual(
        expectStatus(
          await admin("POST", "/admin/apps", { brandId: "brand-narrow", name: "X", markets: ["UK"] }),
          400,
        ),
        adminError("BAD_INPUT", 'markets must be a list of valid codes; got ["UK"]'),
      );
    });
  });

  describe("grants", () => {
    it("adds, lists and removes grants, sorted and without duplicates", async () => {
      expectStatus(await admin("POST", "/admin/brands", { brandId: "brand-grants", name: "G" }), 201);
      assert.deepEqual(expectStatus(await admin("GET", "/admin/grants?brandId=brand-grants"), 200), {
        brandId: "brand-grants",
        markets: [],
        dataSources: [],
      });
      const added = await admin("POST", "/admin/grants", {
        brandId: "brand-grants",
        markets: ["GB", "DE", "GB"],
        dataSources: ["meta_ads", "google_ads"],
      });
      const expected = {
        brandId: "brand-grants",
        markets: ["DE", "GB"],
        dataSources: ["google_ads", "meta_ads"],
      };
      assert.deepEqual(expectStatus(added, 200), expected);
      // Adding what is there changes nothing.
      assert.deepEqual(
        expectStatus(await admin("POST", "/admin/grants", { brandId: "brand-grants", markets: ["DE"] }), 200),
        expected,
      );
      assert.deepEqual(expectStatus(await admin("GET", "/admin/grants?brandId=brand-grants"), 200), expected);
      const removed = await admin("POST", "/admin/grants/remove", {
        brandId: "brand-grants",
        markets: ["DE"],
        dataSources: ["meta_ads"],
      });
      assert.deepEqual(expectStatus(removed, 200), {
        brandId: "brand-grants",
        markets: ["GB"],
        dataSources: ["google_ads"],
      });
    });

    it("refuses a market that is not an ISO 3166-1 code, or an empty change, with 400", async () => {
      expectStatus(await admin("POST", "/admin/brands", { brandId: "brand-grants-bad", name: "G" }), 201);
      assert.deepEqual(
        expectStatus(
          await admin("POST", "/admin/grants", { brandId: "brand-grants-bad", markets: ["GB", "UK"] }),
          400,
        ),
        adminError("BAD_INPUT", 'markets must be a list of valid codes; got ["GB","UK"]'),
      );
      assert.deepEqual(
        expectStatus(await admin("POST", "/admin/grants", { brandId: "brand-grants-bad" }), 400),
        adminError("BAD_INPUT", "name at least one market or data source"),
      );
      assert.deepEqual(expectStatus(await admin("GET", "/admin/grants?brandId=brand-grants-bad"), 200), {
        brandId: "brand-grants-bad",
        markets: [],
        dataSources: [],
      });
    });

    it("a removed market leaves the next unfiltered query, a filter naming it gets 403, and adding it back restores it", async () => {
      const brand = await newBrand("brand-grant-effect");
      const records = days(1, 2);
      expectStatus(await load(brand.brandId, await writeRecords("grant-effect.csv", records)), 200);
      assert.deepEqual(await readAll(brand.brandId, brand.token), byRecordId(records));
      const filtered = await region.graphql(
        RECORDS,
        { c: brand.brandId, r: RANGE, f: { markets: ["FR"] } },
        brand.token,
      );
      assert.equal(filtered.status, 200);

      expectStatus(
        await admin("POST", "/admin/grants/remove", { brandId: brand.brandId, markets: ["FR"] }),
        200,
      );
      // The same token, the next request: no waiting for the app cache (this process cleared it).
      assert.deepEqual(
        await readAll(brand.brandId, brand.token),
        byRecordId(records.filter((record) => record.market !== "FR")),
      );
      const forbidden = await region.graphql(
        RECORDS,
        { c: brand.brandId, r: RANGE, f: { markets: ["FR"] } },
        brand.token,
      );
      assert.equal(forbidden.status, 403);
      assert.deepEqual(
        forbidden.body.errors?.map((error) => error.extensions.code),
        ["FORBIDDEN"],
      );
      assert.equal(forbidden.body.data, null);

      expectStatus(await admin("POST", "/admin/grants", { brandId: brand.brandId, markets: ["FR"] }), 200);
      assert.deepEqual(await readAll(brand.brandId, brand.token), byRecordId(records));
    });
  });
});
