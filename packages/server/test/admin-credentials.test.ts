/**
 * Secret rotation, revocation and key rotation through the admin API (CONTRACT §2).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  admin,
  adminError,
  decodeJwt,
  expectStatus,
  newBrand,
  READINESS,
  region,
  tokenRequest,
  useAdminRegion,
} from "./admin-harness.js";

describe("admin API", () => {
  useAdminRegion();

  describe("secret rotation", () => {
    it("with a grace period, both the old and the new secret obtain tokens", async () => {
      const brand = await newBrand("brand-rotate-grace");
      const started = Date.now();
      const rotated = expectStatus<{ app: { previousSecretExpiresAt: string }; appClientSecret: string }>(
        await admin("POST", `/admin/apps/${brand.appClientId}/rotate-secret`, { graceSeconds: 3600 }),
        200,
      );
      assert.notEqual(rotated.appClientSecret, brand.secret);
      const expires = Date.parse(rotated.app.previousSecretExpiresAt);
      assert.ok(expires >= started + 3_600_000 - 1000 && expires <= Date.now() + 3_600_000 + 1000);
      expectStatus(await tokenRequest(brand.appClientId, brand.secret), 200);
      expectStatus(await tokenRequest(brand.appClientId, rotated.appClientSecret), 200);
    });

    it("with graceSeconds 0, the old secret is refused at once with invalid_client", async () => {
      const brand = await newBrand("brand-rotate-now");
      // The app is in this process's cache: the rotation must clear it.
      expectStatus(await tokenRequest(brand.appClientId, brand.secret), 200);
      const rotated = expectStatus<{
        app: { previousSecretExpiresAt: string | null };
        appClientSecret: string;
      }>(await admin("POST", `/admin/apps/${brand.appClientId}/rotate-secret`, { graceSeconds: 0 }), 200);
      assert.equal(rotated.app.previousSecretExpiresAt, null);
      assert.deepEqual(expectStatus(await tokenRequest(brand.appClientId, brand.secret), 400), {
        error: "invalid_client",
        error_description: "client authentication failed",
      });
      expectStatus(await tokenRequest(brand.appClientId, rotated.appClientSecret), 200);
      // A token issued before the rotation stays valid: rotation changes the secret, not the tokens.
      assert.equal((await region.graphql(READINESS, { c: brand.brandId }, brand.token)).status, 200);
    });

    it("refuses graceSeconds outside 0–2592000, and an unknown app, without rotating", async () => {
      const brand = await newBrand("brand-rotate-bad");
      for (const graceSeconds of [-1, 2_592_001, 1.5, "60"]) {
        assert.deepEqual(
          expectStatus(
            await admin("POST", `/admin/apps/${brand.appClientId}/rotate-secret`, { graceSeconds }),
            400,
          ),
          adminError("BAD_INPUT", "graceSeconds must be a whole number from 0 to 2592000"),
        );
      }
      expectStatus(await tokenRequest(brand.appClientId, brand.secret), 200);
      assert.deepEqual(
        expectStatus(await admin("POST", "/admin/apps/app_nope/rotate-secret", {}), 404),
        adminError("NOT_FOUND", 'no app "app_nope"'),
      );
    });
  });

  describe("revocation", () => {
    it("an existing token gets 401 on the next request, and the token endpoint refuses the app", async () => {
      const brand = await newBrand("brand-revoke");
      // Served once, so the app sits in this process's cache.
      assert.equal((await region.graphql(READINESS, { c: brand.brandId }, brand.token)).status, 200);
      const started = Date.now();
      const revoked = expectStatus<{ app: { revokedAt: string } }>(
        await admin("POST", `/admin/apps/${brand.appClientId}/revoke`),
        200,
      );
      assert.ok(Date.parse(revoked.app.revokedAt) >= started - 1000);
      const refused = await region.graphql(READINESS, { c: brand.brandId }, brand.token);
      assert.equal(refused.status, 401);
      assert.deepEqual(refused.body, {
        errors: [
          { message: "the access token's app has been revoked", extensions: { code: "UNAUTHENTICATED" } },
        ],
      });
      assert.match(String(refused.headers["www-authenticate"]), /^Bearer error="invalid_token"/);
      assert.deepEqual(expectStatus(await tokenRequest(brand.appClientId, brand.secret), 400), {
        error: "invalid_client",
        error_description: "client authentication failed",
      });
      assert.deepEqual(
        expectStatus(await admin("POST", `/admin/apps/${brand.appClientId}/revoke`), 409),
        adminError("CONFLICT", `app ${brand.appClientId} is already revoked`),
      );
      assert.deepEqual(
        expectStatus(await admin("POST", `/admin/apps/${brand.appClientId}/rotate-secret`, {}), 409),
        adminError("CONFLICT", `app ${brand.appClientId} is revoked`),
      );
    });
  });

  describe("key rotation", () => {
    it("keeps earlier tokens valid, lists both kids in JWKS, and signs new tokens with the new kid", async () => {
      const brand = await newBrand("brand-keys");
      const oldKid = String(decodeJwt(brand.token).header["kid"]);
      const before = expectStatus<{ keys: { kid: string; active: boolean }[] }>(
        await admin("GET", "/admin/keys"),
        200,
      );
      assert.deepEqual(
        before.keys.filter((key) => key.active).map((key) => key.kid),
        [oldKid],
      );

      const rotated = expectStatus<{ key: Record<string, unknown> }>(
        await admin("POST", "/admin/keys/rotate"),
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

      assert.equal((await region.graphql(READINESS, { c: brand.brandId }, brand.token)).status, 200);
      const jwks = await region.inject({ method: "GET", url: "/.well-known/jwks.json" });
      const kids = (jwks.json() as { keys: { kid: string }[] }).keys.map((key) => key.kid);
      assert.ok(kids.includes(oldKid) && kids.includes(newKid), JSON.stringify(kids));
      const fresh = await region.token(brand.appClientId, brand.secret);
      assert.equal(decodeJwt(fresh).header["kid"], newKid);
      assert.equal((await region.graphql(READINESS, { c: brand.brandId }, fresh)).status, 200);

      const after = expectStatus<{ keys: { kid: string; active: boolean; retiredAt: string | null }[] }>(
        await admin("GET", "/admin/keys"),
        200,
      );
      assert.deepEqual(after.keys.map((key) => [key.kid, key.active]).slice(0, 2), [
        [newKid, true],
        [oldKid, false],
      ]);
      assert.match(String(after.keys[1]!.retiredAt), /^\d{4}-\d\d-\d\dT/);
    });
  });
});
