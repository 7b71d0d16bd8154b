/**
 * Regions are separate (CONTRACT §1): each has its own authUrl, baseUrl, signing keys and apps,
 * so a token issued in one region gets 401 in another.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { type TestRegion, useTestRegion } from "@mdq/test-support";
import { decodeJwt, decodeProtectedHeader, type JSONWebKeySet } from "jose";

const READINESS = "query($c: ID!) { marketingDataReadiness(clientId: $c) { status } }";

describe("the uk and us regions side by side", () => {
  const uk = useTestRegion({ region: "uk", days: 3 });
  const us = useTestRegion({ region: "us", days: 3 });
  let ukToken: string;
  let usToken: string;

  before(async () => {
    [ukToken, usToken] = await Promise.all([uk.region.token(), us.region.token()]);
  });

  function readiness(region: TestRegion, token: string) {
    return region.graphql(READINESS, { c: region.credentials.apps[0]!.brandClientId }, token);
  }

  function assertInvalidToken(response: Awaited<ReturnType<typeof readiness>>): void {
    assert.equal(response.status, 401);
    assert.match(String(response.headers["www-authenticate"]), /^Bearer error="invalid_token"/);
    assert.deepEqual(
      response.body.errors?.map((error) => error.extensions.code),
      ["UNAUTHENTICATED"],
    );
    assert.equal(response.body.data, undefined);
  }

  it("serves each region's own token", async () => {
    const [atUk, atUs] = await Promise.all([readiness(uk.region, ukToken), readiness(us.region, usToken)]);
    assert.equal(atUk.status, 200);
    assert.equal(atUs.status, 200);
    assert.deepEqual(atUk.body, { data: { marketingDataReadiness: { status: "READY" } } });
    assert.deepEqual(atUs.body, { data: { marketingDataReadiness: { status: "READY" } } });
  });

  it("issues tokens naming the region, its own issuer and its own audience", () => {
    const ukClaims = decodeJwt(ukToken);
    const usClaims = decodeJwt(usToken);
    assert.deepEqual(
      [ukClaims["region"], ukClaims.iss, ukClaims.aud],
      ["uk", "http://uk.auth.test", "http://uk.api.test"],
    );
    assert.deepEqual(
      [usClaims["region"], usClaims.iss, usClaims.aud],
      ["us", "http://us.auth.test", "http://us.api.test"],
    );
  });

  it("answers a uk token at the us GraphQL endpoint with 401 invalid_token", async () => {
    assertInvalidToken(await readiness(us.region, ukToken));
  });

  it("answers a us token at the uk GraphQL endpoint with 401 invalid_token", async () => {
    assertInvalidToken(await readiness(uk.region, usToken));
  });

  it("signs with separate keys: neither region's JWKS holds the other's signing kid", async () => {
    const [ukKeys, usKeys] = await Promise.all(
      [uk.region, us.region].map(async (region) => {
        const response = await region.inject({ method: "GET", url: "/.well-known/jwks.json" });
        return (response.json() as JSONWebKeySet).keys.map((key) => key.kid);
      }),
    );
    assert.ok(ukKeys!.includes(decodeProtectedHeader(ukToken).kid));
    assert.ok(!ukKeys!.includes(decodeProtectedHeader(usToken).kid));
    assert.ok(usKeys!.includes(decodeProtectedHeader(usToken).kid));
    assert.ok(!usKeys!.includes(decodeProtectedHeader(ukToken).kid));
  });

  it("refuses a uk app's credentials at the us token endpoint with invalid_client", async () => {
    const ukApp = uk.region.credentials.apps[0]!;
    assert.ok(us.region.credentials.apps.some((app) => app.appClientId === ukApp.appClientId));
    const response = await us.region.inject({
      method: "POST",
      url: "/oauth2/token",
      headers: {
        authorization: uk.region.basic(ukApp.appClientId),
        "content-type": "application/x-www-form-urlencoded",
      },
      payload: "grant_type=client_credentials&scope=api_data%2Fread",
    });
    assert.equal(response.statusCode, 400);
    assert.equal((response.json() as { error: string }).error, "invalid_client");
  });
});
