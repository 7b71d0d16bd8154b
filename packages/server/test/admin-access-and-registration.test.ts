/**
 * Who reaches the admin API (the admin token, the operator listener only), and registering brands, apps and
 * grants, rotating secrets and keys and revoking apps through it, with their effect on tokens and GraphQL
 * (CONTRACT §2); the status report of every brand.
 */

import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { APP_VIEW_KEYS } from "@mdq/test-support";
import * as harness from "./admin-harness.js";

describe("admin API", () => {
  harness.useAdminRegion();

  describe("authentication and reach", () => {
    const unauthorized = harness.adminError("UNAUTHORIZED", "a valid admin token is required");

    it("refuses a request without the admin token with 401 UNAUTHORIZED", async () => {
      const response = await harness.region.service.adminApp.inject({ method: "GET", url: "/admin/status" });
      assert.deepEqual(harness.expectStatus(response, 401), unauthorized);
    });

    it("refuses a wrong admin token, or the right one under another scheme, with 401 UNAUTHORIZED", async () => {
      for (const authorization of [
        `Bearer ${harness.adminToken.slice(0, -1)}x`,
        `Bearer ${harness.adminToken}x`,
        "Bearer ",
        `Basic ${harness.adminToken}`,
        harness.adminToken,
      ]) {
        const response = await harness.admin("GET", "/admin/status", undefined, authorization);
        assert.deepEqual(harness.expectStatus(response, 401), unauthorized, authorization);
      }
    });

    it("keeps the admin token in <dataDir>/admin-token readable by its owner only", async () => {
      const info = await stat(join(harness.region.dataDir, "admin-token"));
      assert.equal(info.mode & 0o777, 0o600);
      assert.ok(harness.adminToken.length >= 32);
    });

    it("is not routed by the public listener: /admin/status there is 404, even with the admin token", async () => {
      for (const headers of [{}, { authorization: `Bearer ${harness.adminToken}` }]) {
        const response = await harness.region.inject({ method: "GET", url: "/admin/status", headers });
        assert.equal(response.statusCode, 404);
        assert.deepEqual(response.json(), {
          errors: [{ message: "no route GET /admin/status", extensions: { code: "NOT_FOUND" } }],
        });
      }
      const load = await harness.region.inject({
        method: "POST",
        url: "/admin/loads",
        headers: { authorization: `Bearer ${harness.adminToken}`, "content-type": "application/json" },
        payload: "{}",
      });
      assert.equal(load.statusCode, 404);
      assert.deepEqual(load.json(), {
        errors: [{ message: "no route POST /admin/loads", extensions: { code: "NOT_FOUND" } }],
      });
    });

    it("answers an unknown admin path with 404 NOT_FOUND", async () => {
      const response = await harness.admin("GET", "/admin/nothing");
      assert.deepEqual(
        harness.expectStatus(response, 404),
        harness.adminError("NOT_FOUND", "no route GET /admin/nothing"),
      );
    });
  });

  describe("brands", () => {
    it("creates a brand with 201 and lists it", async () => {
      const started = Date.now();
      const body = harness.expectStatus<{ brand: { brandId: string; name: string; createdAt: string } }>(
        await harness.admin("POST", "/admin/brands", { brandId: "brand-new", name: "  New Brand " }),
        201,
      );
      assert.deepEqual(Object.keys(body.brand).sort(), ["brandId", "createdAt", "name"]);
      assert.equal(body.brand.brandId, "brand-new");
      assert.equal(body.brand.name, "New Brand");
      assert.match(body.brand.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.ok(Date.parse(body.brand.createdAt) >= started - 1000);
      const list = harness.expectStatus<{ brands: unknown[] }>(
        await harness.admin("GET", "/admin/brands"),
        200,
      );
      assert.deepEqual(
        list.brands.find((brand) => (brand as { brandId: string }).brandId === "brand-new"),
        body.brand,
      );
    });

    it("derives the brand id from the name when none is given", async () => {
      const body = harness.expectStatus<{ brand: { brandId: string; name: string } }>(
        await harness.admin("POST", "/admin/brands", { name: "Zeta & Sons, Ltd." }),
        201,
      );
      assert.equal(body.brand.brandId, "zeta-sons-ltd");
      assert.equal(body.brand.name, "Zeta & Sons, Ltd.");
    });

    it("refuses an existing brand id with 409 CONFLICT", async () => {
      harness.expectStatus(
        await harness.admin("POST", "/admin/brands", { brandId: "brand-twice", name: "Twice" }),
        201,
      );
      const response = await harness.admin("POST", "/admin/brands", {
        brandId: "brand-twice",
        name: "Again",
      });
      assert.deepEqual(
        harness.expectStatus(response, 409),
        harness.adminError("CONFLICT", "brand brand-twice exists"),
      );
    });

    it("refuses a malformed brand id with 400 BAD_INPUT and creates nothing", async () => {
      for (const brandId of ["A-brand", "x", "-dash", "has space", "brand_underscore", "a".repeat(64), 42]) {
        const response = await harness.admin("POST", "/admin/brands", { brandId, name: "Bad" });
        assert.deepEqual(
          harness.expectStatus(response, 400),
          harness.adminError(
            "BAD_INPUT",
            `brandId must match ^[a-z0-9][a-z0-9-]{1,62}$; got ${JSON.stringify(brandId)}`,
          ),
        );
      }
      const list = harness.expectStatus<{ brands: { name: string }[] }>(
        await harness.admin("GET", "/admin/brands"),
        200,
      );
      assert.equal(
        list.brands.some((brand) => brand.name === "Bad"),
        false,
      );
    });

    it("refuses a missing name, or a body that is not a JSON object, with 400 BAD_INPUT", async () => {
      assert.deepEqual(
        harness.expectStatus(await harness.admin("POST", "/admin/brands", { brandId: "no-name" }), 400),
        harness.adminError("BAD_INPUT", "name must be a non-empty string of at most 200 characters"),
      );
      assert.deepEqual(
        harness.expectStatus(await harness.admin("POST", "/admin/brands", ["brand"]), 400),
        harness.adminError("BAD_INPUT", "the body must be a JSON object"),
      );
    });

    it("refuses a JSON scalar body as it is sent, never coerced to an empty body", async () => {
      for (const body of [false, 0, "", "brand"]) {
        assert.deepEqual(
          harness.expectStatus(await harness.admin("POST", "/admin/grants", body), 400),
          harness.adminError("BAD_INPUT", "the body must be a JSON object"),
          JSON.stringify(body),
        );
      }
    });
  });

  describe("apps", () => {
    it("creates an app whose secret works at the token endpoint and never appears in listings", async () => {
      harness.expectStatus(
        await harness.admin("POST", "/admin/brands", { brandId: "brand-apps", name: "Apps" }),
        201,
      );
      const created = harness.expectStatus<{ app: Record<string, unknown>; appClientSecret: string }>(
        await harness.admin("POST", "/admin/apps", {
          brandId: "brand-apps",
          name: "Reporting",
          markets: ["GB", "GB"],
        }),
        201,
      );
      const { app, appClientSecret } = created;
      assert.deepEqual(Object.keys(created).sort(), ["app", "appClientSecret"]);
      assert.deepEqual(Object.keys(app).sort(), APP_VIEW_KEYS);
      assert.equal(app["brandId"], "brand-apps");
      assert.equal(app["name"], "Reporting");
      assert.deepEqual(app["markets"], ["GB"]);
      assert.equal(app["dataSources"], null);
      assert.equal(app["revokedAt"], null);
      assert.equal(app["previousSecretExpiresAt"], null);
      // ≥ 256 bits of secret (CONTRACT §2).
      assert.ok(Buffer.from(appClientSecret, "base64url").length >= 32, appClientSecret);

      const token = harness.expectStatus<Record<string, unknown>>(
        await harness.tokenRequest(String(app["appClientId"]), appClientSecret),
        200,
      );
      assert.equal(token["token_type"], "Bearer");
      assert.equal(harness.decodeJwt(String(token["access_token"])).claims["brand"], "brand-apps");

      const listing = await harness.admin("GET", "/admin/apps?brandId=brand-apps");
      assert.deepEqual(harness.expectStatus(listing, 200), { apps: [app] });
      const everything = await harness.admin("GET", "/admin/apps");
      assert.equal(everything.statusCode, 200);
      assert.equal(everything.body.includes(appClientSecret), false);
      assert.doesNotMatch(everything.body, /secret_?hash|secretHash/i);
    });

    it("refuses an app for an unknown brand with 404 and a bad narrowing with 400", async () => {
      assert.deepEqual(
        harness.expectStatus(
          await harness.admin("POST", "/admin/apps", { brandId: "no-such-brand", name: "X" }),
          404,
        ),
        harness.adminError("NOT_FOUND", 'no brand "no-such-brand"'),
      );
      assert.deepEqual(
        harness.expectStatus(await harness.admin("GET", "/admin/apps?brandId=no-such-brand"), 404),
        harness.adminError("NOT_FOUND", 'no brand "no-such-brand"'),
      );
      harness.expectStatus(
        await harness.admin("POST", "/admin/brands", { brandId: "brand-narrow", name: "N" }),
        201,
      );
      assert.deepEqual(
        harness.expectStatus(
          await harness.admin("POST", "/admin/apps", { brandId: "brand-narrow", name: "X", markets: ["UK"] }),
          400,
        ),
        harness.adminError("BAD_INPUT", 'markets must be a list of valid codes; got ["UK"]'),
      );
    });
  });

  describe("grants", () => {
    it("adds, lists and removes grants, sorted and without duplicates", async () => {
      harness.expectStatus(
        await harness.admin("POST", "/admin/brands", { brandId: "brand-grants", name: "G" }),
        201,
      );
      assert.deepEqual(
        harness.expectStatus(await harness.admin("GET", "/admin/grants?brandId=brand-grants"), 200),
        {
          brandId: "brand-grants",
          markets: [],
          dataSources: [],
        },
      );
      const added = await harness.admin("POST", "/admin/grants", {
        brandId: "brand-grants",
        markets: ["GB", "DE", "GB"],
        dataSources: ["meta_ads", "google_ads"],
      });
      const expected = {
        brandId: "brand-grants",
        markets: ["DE", "GB"],
        dataSources: ["google_ads", "meta_ads"],
      };
      assert.deepEqual(harness.expectStatus(added, 200), expected);
      // Adding what is there changes nothing.
      assert.deepEqual(
        harness.expectStatus(
          await harness.admin("POST", "/admin/grants", { brandId: "brand-grants", markets: ["DE"] }),
          200,
        ),
        expected,
      );
      assert.deepEqual(
        harness.expectStatus(await harness.admin("GET", "/admin/grants?brandId=brand-grants"), 200),
        expected,
      );
      const removed = await harness.admin("POST", "/admin/grants/remove", {
        brandId: "brand-grants",
        markets: ["DE"],
        dataSources: ["meta_ads"],
      });
      assert.deepEqual(harness.expectStatus(removed, 200), {
        brandId: "brand-grants",
        markets: ["GB"],
        dataSources: ["google_ads"],
      });
    });

    it("refuses a market that is not an ISO 3166-1 code, or an empty change, with 400", async () => {
      harness.expectStatus(
        await harness.admin("POST", "/admin/brands", { brandId: "brand-grants-bad", name: "G" }),
        201,
      );
      assert.deepEqual(
        harness.expectStatus(
          await harness.admin("POST", "/admin/grants", {
            brandId: "brand-grants-bad",
            markets: ["GB", "UK"],
          }),
          400,
        ),
        harness.adminError("BAD_INPUT", 'markets must be a list of valid codes; got ["GB","UK"]'),
      );
      assert.deepEqual(
        harness.expectStatus(
          await harness.admin("POST", "/admin/grants", { brandId: "brand-grants-bad" }),
          400,
        ),
        harness.adminError("BAD_INPUT", "name at least one market or data source"),
      );
      assert.deepEqual(
        harness.expectStatus(await harness.admin("GET", "/admin/grants?brandId=brand-grants-bad"), 200),
        {
          brandId: "brand-grants-bad",
          markets: [],
          dataSources: [],
        },
      );
    });

    it("a removed market leaves the next unfiltered query, a filter naming it gets 403, and adding it back restores it", async () => {
      const brand = await harness.newBrand("brand-grant-effect");
      const records = harness.days(1, 2);
      harness.expectStatus(
        await harness.load(brand.brandId, await harness.writeRecords("grant-effect.csv", records)),
        200,
      );
      assert.deepEqual(await harness.readAll(brand.brandId, brand.token), harness.byRecordId(records));
      const askFR = () =>
        harness.region.graphql(
          harness.RECORDS,
          { c: brand.brandId, r: harness.RANGE, f: { markets: ["FR"] } },
          brand.token,
        );
      const filtered = await askFR();
      assert.equal(filtered.status, 200);

      harness.expectStatus(
        await harness.admin("POST", "/admin/grants/remove", { brandId: brand.brandId, markets: ["FR"] }),
        200,
      );
      // The same token, the next request: no waiting for the app cache (this process cleared it).
      assert.deepEqual(
        await harness.readAll(brand.brandId, brand.token),
        harness.byRecordId(records.filter((record) => record.market !== "FR")),
      );
      const forbidden = await askFR();
      assert.equal(forbidden.status, 403);
      assert.deepEqual(
        forbidden.body.errors?.map((error) => error.extensions.code),
        ["FORBIDDEN"],
      );
      assert.equal(forbidden.body.data, null);

      harness.expectStatus(
        await harness.admin("POST", "/admin/grants", { brandId: brand.brandId, markets: ["FR"] }),
        200,
      );
      assert.deepEqual(await harness.readAll(brand.brandId, brand.token), harness.byRecordId(records));
    });
  });

  describe("secret rotation", () => {
    it("with a grace period, both the old and the new secret obtain tokens", async () => {
      const brand = await harness.newBrand("brand-rotate-grace");
      const started = Date.now();
      const rotated = harness.expectStatus<{
        app: { previousSecretExpiresAt: string };
        appClientSecret: string;
      }>(
        await harness.admin("POST", `/admin/apps/${brand.appClientId}/rotate-secret`, { graceSeconds: 3600 }),
        200,
      );
      assert.notEqual(rotated.appClientSecret, brand.secret);
      const expires = Date.parse(rotated.app.previousSecretExpiresAt);
      assert.ok(expires >= started + 3_600_000 - 1000 && expires <= Date.now() + 3_600_000 + 1000);
      harness.expectStatus(await harness.tokenRequest(brand.appClientId, brand.secret), 200);
      harness.expectStatus(await harness.tokenRequest(brand.appClientId, rotated.appClientSecret), 200);
    });

    it("with graceSeconds 0, the old secret is refused at once with invalid_client", async () => {
      const brand = await harness.newBrand("brand-rotate-now");
      // The app is in this process's cache: the rotation must clear it.
      harness.expectStatus(await harness.tokenRequest(brand.appClientId, brand.secret), 200);
      const rotated = harness.expectStatus<{
        app: { previousSecretExpiresAt: string | null };
        appClientSecret: string;
      }>(
        await harness.admin("POST", `/admin/apps/${brand.appClientId}/rotate-secret`, { graceSeconds: 0 }),
        200,
      );
      assert.equal(rotated.app.previousSecretExpiresAt, null);
      assert.deepEqual(
        harness.expectStatus(await harness.tokenRequest(brand.appClientId, brand.secret), 400),
        {
          error: "invalid_client",
          error_description: "client authentication failed",
        },
      );
      harness.expectStatus(await harness.tokenRequest(brand.appClientId, rotated.appClientSecret), 200);
      // A token issued before the rotation stays valid: rotation changes the secret, not the tokens.
      assert.equal((await harness.readinessOf(brand)).status, 200);
    });

    it("refuses graceSeconds outside 0–2592000, and an unknown app, without rotating", async () => {
      const brand = await harness.newBrand("brand-rotate-bad");
      for (const graceSeconds of [-1, 2_592_001, 1.5, "60"]) {
        assert.deepEqual(
          harness.expectStatus(
            await harness.admin("POST", `/admin/apps/${brand.appClientId}/rotate-secret`, { graceSeconds }),
            400,
          ),
          harness.adminError("BAD_INPUT", "graceSeconds must be a whole number from 0 to 2592000"),
        );
      }
      harness.expectStatus(await harness.tokenRequest(brand.appClientId, brand.secret), 200);
      assert.deepEqual(
        harness.expectStatus(await harness.admin("POST", "/admin/apps/app_nope/rotate-secret", {}), 404),
        harness.adminError("NOT_FOUND", 'no app "app_nope"'),
      );
    });
  });

  describe("revocation", () => {
    it("an existing token gets 401 on the next request, and the token endpoint refuses the app", async () => {
      const brand = await harness.newBrand("brand-revoke");
      // Served once, so the app sits in this process's cache.
      assert.equal((await harness.readinessOf(brand)).status, 200);
      const started = Date.now();
      const revoked = harness.expectStatus<{ app: { revokedAt: string } }>(
        await harness.admin("POST", `/admin/apps/${brand.appClientId}/revoke`),
        200,
      );
      assert.ok(Date.parse(revoked.app.revokedAt) >= started - 1000);
      const refused = await harness.readinessOf(brand);
      assert.equal(refused.status, 401);
      assert.deepEqual(refused.body, {
        errors: [
          { message: "the access token's app has been revoked", extensions: { code: "UNAUTHENTICATED" } },
        ],
      });
      assert.match(String(refused.headers["www-authenticate"]), /^Bearer error="invalid_token"/);
      assert.deepEqual(
        harness.expectStatus(await harness.tokenRequest(brand.appClientId, brand.secret), 400),
        {
          error: "invalid_client",
          error_description: "client authentication failed",
        },
      );
      assert.deepEqual(
        harness.expectStatus(await harness.admin("POST", `/admin/apps/${brand.appClientId}/revoke`), 409),
        harness.adminError("CONFLICT", `app ${brand.appClientId} is already revoked`),
      );
      assert.deepEqual(
        harness.expectStatus(
          await harness.admin("POST", `/admin/apps/${brand.appClientId}/rotate-secret`, {}),
          409,
        ),
        harness.adminError("CONFLICT", `app ${brand.appClientId} is revoked`),
      );
    });
  });

  describe("key rotation", () => {
    it("keeps earlier tokens valid, lists both kids in JWKS, and signs new tokens with the new kid", async () => {
      const brand = await harness.newBrand("brand-keys");
      const oldKid = String(harness.decodeJwt(brand.token).header["kid"]);
      const before = harness.expectStatus<{ keys: { kid: string; active: boolean }[] }>(
        await harness.admin("GET", "/admin/keys"),
        200,
      );
      assert.deepEqual(
        before.keys.filter((key) => key.active).map((key) => key.kid),
        [oldKid],
      );

      const rotated = harness.expectStatus<{ key: Record<string, unknown> }>(
        await harness.admin("POST", "/admin/keys/rotate"),
        200,
      );
      const newKid = String(rotated.key["kid"]);
      assert.notEqual(newKid, oldKid);
      assert.deepEqual(
        { ...rotated.key, kid: "", createdAt: "" },
        {
          kid: "",
          alg: "EdDSA",
          createdAt: "",
          retiredAt: null,
          active: true,
        },
      );

      assert.equal((await harness.readinessOf(brand)).status, 200);
      const jwks = await harness.region.inject({ method: "GET", url: "/.well-known/jwks.json" });
      const kids = (jwks.json() as { keys: { kid: string }[] }).keys.map((key) => key.kid);
      assert.ok(kids.includes(oldKid) && kids.includes(newKid), JSON.stringify(kids));
      const fresh = await harness.region.token(brand.appClientId, brand.secret);
      assert.equal(harness.decodeJwt(fresh).header["kid"], newKid);
      assert.equal(
        (await harness.region.graphql(harness.READINESS, { c: brand.brandId }, fresh)).status,
        200,
      );

      const after = harness.expectStatus<{
        keys: { kid: string; active: boolean; retiredAt: string | null }[];
      }>(await harness.admin("GET", "/admin/keys"), 200);
      assert.deepEqual(after.keys.map((key) => [key.kid, key.active]).slice(0, 2), [
        [newKid, true],
        [oldKid, false],
      ]);
      assert.match(String(after.keys[1]!.retiredAt), /^\d{4}-\d\d-\d\dT/);
    });
  });

  describe("status", () => {
    it("lists each brand with grants, app counts, rows, day span, last publish and readyToday", async () => {
      const brand = await harness.newBrand("brand-status");
      const second = harness.expectStatus<{ app: { appClientId: string } }>(
        await harness.admin("POST", "/admin/apps", { brandId: brand.brandId, name: "second" }),
        201,
      );
      harness.expectStatus(await harness.admin("POST", `/admin/apps/${second.app.appClientId}/revoke`), 200);
      harness.expectStatus(
        await harness.admin("POST", "/admin/brands", { brandId: "brand-status-empty", name: "Empty" }),
        201,
      );
      harness.expectStatus(
        await harness.load(brand.brandId, await harness.writeRecords("status.csv", harness.days(2, 3))),
        200,
      );
      const published = harness.expectStatus<{ publishedAt: string }>(
        await harness.admin("POST", "/admin/publishes", { brandId: brand.brandId }),
        200,
      );

      const status = harness.expectStatus<{ region: string; today: string; brands: { brandId: string }[] }>(
        await harness.admin("GET", "/admin/status"),
        200,
      );
      assert.equal(status.region, "uk");
      assert.equal(status.today, harness.region.today);
      assert.deepEqual(
        status.brands.find((entry) => entry.brandId === brand.brandId),
        {
          brandId: "brand-status",
          name: "Brand brand-status",
          grants: harness.GRANTS,
          apps: 2,
          activeApps: 1,
          rows: 36,
          firstDay: "2020-03-02",
          lastDay: "2020-03-04",
          lastPublishedAt: published.publishedAt,
          lastPublishedDate: harness.region.today,
          readyToday: true,
          unreadableDays: [],
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
          unreadableDays: [],
        },
      );
      // The demo brands, seeded and published today, are listed too, in brand id order.
      const ids = status.brands.map((entry) => entry.brandId);
      assert.deepEqual(ids, [...ids].sort());
      for (const app of harness.region.credentials.apps) assert.ok(ids.includes(app.brandClientId));
    });
  });
});
