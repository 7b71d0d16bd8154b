/**
 * `myAccess` (CONTRACT §6 rule 3): the caller learns its effective grants — the brand's grants with
 * the app's narrowing applied — its scope, region and token expiry, without probing for 403s.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { type GraphQLResponse, useTestRegion } from "@mdq/test-support";
import { decodeJwt } from "jose";

/** The `markets` of a `myAccess` answer. */
function marketsOf(response: GraphQLResponse): string[] {
  const access = response.body.data?.["myAccess"] as { markets: string[] } | undefined;
  assert.ok(access, JSON.stringify(response.body));
  return access.markets;
}

const MY_ACCESS = `query($c: ID!) {
  myAccess(clientId: $c) { brandId appClientId markets dataSources scope region tokenExpiresAt }
}`;

describe("myAccess", () => {
  const suite = useTestRegion({ days: 3 });

  it("tells an app with no narrowing the brand's grants, sorted, with its token's scope, region and expiry", async () => {
    const token = await suite.region.token("app-acme-analytics");
    const response = await suite.region.graphql(MY_ACCESS, { c: "brand-acme" }, token);
    assert.equal(response.status, 200);
    const expiresAt = new Date(Number(decodeJwt(token).exp) * 1000).toISOString();
    assert.deepEqual(response.body, {
      data: {
        myAccess: {
          brandId: "brand-acme",
          appClientId: "app-acme-analytics",
          markets: ["DE", "FR", "GB", "SE", "US"],
          dataSources: ["google_ads", "meta_ads", "tiktok_ads"],
          scope: "api_data/read",
          region: "uk",
          tokenExpiresAt: expiresAt,
        },
      },
    });
  });

  it("applies the app's narrowing", async () => {
    const token = await suite.region.token("app-acme-uk");
    const response = await suite.region.graphql(MY_ACCESS, { c: "brand-acme" }, token);
    const access = response.body.data?.["myAccess"] as
      | { markets: string[]; dataSources: string[] }
      | undefined;
    assert.deepEqual(access && [access.markets, access.dataSources], [["GB"], ["google_ads", "meta_ads"]]);
  });

  it("follows a grant change made after the token was issued", async () => {
    const token = await suite.region.token("app-globex-bi");
    const before = await suite.region.graphql(MY_ACCESS, { c: "brand-globex" }, token);
    assert.ok(marketsOf(before).includes("JP"));
    const adminToken = (await readFile(join(suite.region.dataDir, "admin-token"), "utf8")).trim();
    const removal = await suite.region.service.adminApp.inject({
      method: "POST",
      url: "/admin/grants/remove",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      payload: JSON.stringify({ brandId: "brand-globex", markets: ["JP"] }),
    });
    assert.equal(removal.statusCode, 200, removal.body);
    const afterRemoval = await suite.region.graphql(MY_ACCESS, { c: "brand-globex" }, token);
    assert.deepEqual(marketsOf(afterRemoval), ["DE", "GB", "KR", "NL", "US"]);
  });

  it("answers 403 FORBIDDEN for another brand's clientId, as every query does", async () => {
    const response = await suite.region.graphql(
      MY_ACCESS,
      { c: "brand-globex" },
      await suite.region.token("app-acme-uk"),
    );
    assert.equal(response.status, 403);
    assert.equal(response.body.data, null);
    assert.deepEqual(
      response.body.errors?.map((error) => error.extensions.code),
      ["FORBIDDEN"],
    );
  });

  it("answers 401 without a token", async () => {
    const response = await suite.region.inject({
      method: "POST",
      url: "/graphql",
      headers: { "content-type": "application/json" },
      payload: { query: MY_ACCESS, variables: { c: "brand-acme" } },
    });
    assert.equal(response.statusCode, 401);
    assert.equal(response.json().errors[0].extensions.code, "UNAUTHENTICATED");
  });
});
