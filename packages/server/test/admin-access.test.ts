/**
 * Who reaches the admin API: the admin token, the operator listener only (docs/admin-api.md).
 */
import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { admin, adminError, adminToken, expectStatus, region, useAdminRegion } from "./admin-harness.js";

describe("admin API", () => {
  useAdminRegion();

  describe("authentication and reach", () => {
    const unauthorized = adminError("UNAUTHORIZED", "a valid admin token is required");

    it("refuses a request without the admin token with 401 UNAUTHORIZED", async () => {
      const response = await region.service.adminApp.inject({ method: "GET", url: "/admin/status" });
      assert.deepEqual(expectStatus(response, 401), unauthorized);
    });

    it("refuses a wrong admin token, or the right one under another scheme, with 401 UNAUTHORIZED", async () => {
      for (const authorization of [
        `Bearer ${adminToken.slice(0, -1)}x`,
        `Bearer ${adminToken}x`,
        "Bearer ",
        `Basic ${adminToken}`,
        adminToken,
      ]) {
        const response = await admin("GET", "/admin/status", undefined, authorization);
        assert.deepEqual(expectStatus(response, 401), unauthorized, authorization);
      }
    });

    it("keeps the admin token in <dataDir>/admin-token readable by its owner only", async () => {
      const info = await stat(join(region.dataDir, "admin-token"));
      assert.equal(info.mode & 0o777, 0o600);
      assert.ok(adminToken.length >= 32);
    });

    it("is not routed by the public listener: /admin/status there is 404, even with the admin token", async () => {
      for (const headers of [{}, { authorization: `Bearer ${adminToken}` }]) {
        const response = await region.inject({ method: "GET", url: "/admin/status", headers });
        assert.equal(response.statusCode, 404);
        assert.deepEqual(response.json(), {
          errors: [{ message: "no route GET /admin/status", extensions: { code: "NOT_FOUND" } }],
        });
      }
      const load = await region.inject({
        method: "POST",
        url: "/admin/loads",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        payload: "{}",
      });
      assert.equal(load.statusCode, 404);
      assert.deepEqual(load.json(), {
        errors: [{ message: "no route POST /admin/loads", extensions: { code: "NOT_FOUND" } }],
      });
    });

    it("answers an unknown admin path with 404 NOT_FOUND", async () => {
      const response = await admin("GET", "/admin/nothing");
      assert.deepEqual(expectStatus(response, 404), adminError("NOT_FOUND", "no route GET /admin/nothing"));
    });
  });
});
