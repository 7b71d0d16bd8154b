/**
 * The HTTP transport of `POST /graphql` (CONTRACT §3 transport table, spec §4.2 and §7): bearer
 * authentication with RFC 6750 §3 challenges, 403 for data outside the grants, and the
 * GraphQL-over-HTTP answers to requests that are not a JSON query (405, 413, 415, 400).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type RawPost, rawPost, startTestRegion, type TestRegion } from "@mdq/test-support";
import type { LightMyRequestResponse } from "fastify";
import { SignJWT } from "jose";
import { issueAccessToken } from "../src/oauth/access-token.js";
import { hashAppSecret } from "../src/oauth/app-secrets.js";

const READINESS = "query($c: ID!) { marketingDataReadiness(clientId: $c) { status date } }";
const RECORDS = `query($c: ID!, $from: Date!, $to: Date!, $filter: MarketingFilterInput) {
  marketingRecords(clientId: $c, dateRange: {from: $from, to: $to}, filter: $filter) { recordId market dataSource }
}`;
const REVOKED_APP = "app-revoked-after-issue";

describe("POST /graphql transport", () => {
  let region: TestRegion;
  let token: string;
  let brandId: string;
  /** Every response to a request the service must refuse, for the no-500/no-stack-trace check. */
  const refused: LightMyRequestResponse[] = [];

  before(async () => {
    region = await startTestRegion({ days: 5 });
    token = await region.token();
    brandId = region.credentials.apps[0]!.brandClientId;
  });
  after(() => region.close());

  const settings = () => ({
    authUrl: region.service.config.authUrl,
    baseUrl: region.service.config.baseUrl,
    region: region.service.config.region,
  });

  function post(options: RawPost): Promise<LightMyRequestResponse> {
    return rawPost(region.service, "/graphql", options, {
      contentType: "application/json",
      payload: JSON.stringify({ query: READINESS, variables: { c: brandId } }),
    });
  }

  /** Asserts `{"errors":[{"message","extensions":{"code"}}]}` with exactly one error. */
  function assertError(response: LightMyRequestResponse, status: number, code: string): void {
    refused.push(response);
    assert.equal(response.statusCode, status, response.body);
    assert.match(String(response.headers["content-type"]), /^application\/json/);
    const body = response.json() as { errors: { message: unknown; extensions: unknown }[] };
    assert.deepEqual(Object.keys(body), ["errors"]);
    assert.equal(body.errors.length, 1);
    assert.deepEqual(Object.keys(body.errors[0]!).sort(), ["extensions", "message"]);
    assert.deepEqual(body.errors[0]!.extensions, { code });
    assert.equal(typeof body.errors[0]!.message, "string");
    assert.notEqual(body.errors[0]!.message, "");
  }

  /** A 401 whose challenge carries `error="invalid_token"` (RFC 6750 §3.1). */
  function assertInvalidToken(response: LightMyRequestResponse): void {
    assertError(response, 401, "UNAUTHENTICATED");
    const challenge = String(response.headers["www-authenticate"]);
    assert.match(
      challenge,
      /^Bearer error="invalid_token"(, error_description="[\x20\x21\x23-\x5B\x5D-\x7E]*")?$/,
    );
  }

  /** Signs a token with the region's own active key; `claims` and `header` override the defaults. */
  async function signed(
    claims: Record<string, unknown> = {},
    header: Record<string, unknown> = {},
    options: { iat?: number; exp?: number } = {},
  ): Promise<string> {
    const { kid, privateKey } = region.service.keys.activeKey();
    const app = region.credentials.apps[0]!;
    const now = Math.floor(Date.now() / 1000);
    const iat = options.iat ?? now;
    return new SignJWT({
      iss: region.service.config.authUrl,
      aud: region.service.config.baseUrl,
      sub: app.appClientId,
      client_id: app.appClientId,
      brand: app.brandClientId,
      scope: "api_data/read",
      region: "uk",
      jti: `jti-${Math.random()}`,
      iat,
      exp: options.exp ?? iat + 3600,
      ...claims,
    })
      .setProtectedHeader({ alg: "EdDSA", typ: "at+jwt", kid, ...header })
      .sign(privateKey);
  }

  describe("authentication (401)", () => {
    it("accepts a valid token: 200 with data", async () => {
      const response = await post({ authorization: `Bearer ${token}` });
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json() as { data: { marketingDataReadiness: { status: string } } };
      assert.equal(body.data.marketingDataReadiness.status, "READY");
    });

    it("accepts a self-signed token with the right claims, so the refusals below are about the one claim changed", async () => {
      const response = await post({ authorization: `Bearer ${await signed()}` });
      assert.equal(response.statusCode, 200, response.body);
    });

    it("accepts the Bearer scheme name in any case (RFC 7235 §2.1)", async () => {
      const response = await post({ authorization: `bearer ${token}` });
      assert.equal(response.statusCode, 200, response.body);
    });

    it("answers a request with no Authorization header with 401 and exactly `WWW-Authenticate: Bearer`", async () => {
      const response = await post({});
      assertError(response, 401, "UNAUTHENTICATED");
      assert.equal(response.headers["www-authenticate"], "Bearer");
    });

    it("answers Basic credentials instead of a bearer token with a plain Bearer challenge (RFC 6750 §3.1: no error code for another scheme)", async () => {
      const response = await post({ authorization: region.basic() });
      assertError(response, 401, "UNAUTHENTICATED");
      assert.equal(response.headers["www-authenticate"], "Bearer");
    });

    const malformed: [string, () => string][] = [
      ["a token that is not a JWT", () => "Bearer not-a-jwt"],
      ["a token of two segments", () => `Bearer ${token.split(".").slice(0, 2).join(".")}`],
      ["the scheme without a token", () => "Bearer "],
      ["two spaces before the token", () => `Bearer  ${token}`],
      ["a token followed by another word", () => `Bearer ${token} extra`],
      ["characters outside the b64token syntax", () => `Bearer ${token}!`],
    ];
    for (const [name, header] of malformed) {
      it(`answers ${name} with 401 invalid_token`, async () => {
        assertInvalidToken(await post({ authorization: header() }));
      });
    }

    it("answers a token whose signature has one character changed with 401 invalid_token", async () => {
      const [head, payload, signature] = token.split(".") as [string, string, string];
      const index = Math.floor(signature.length / 2);
      const flipped = signature[index] === "A" ? "B" : "A";
      const tampered = `${head}.${payload}.${signature.slice(0, index)}${flipped}${signature.slice(index + 1)}`;
      assertInvalidToken(await post({ authorization: `Bearer ${tampered}` }));
    });

    it("answers a token whose payload was altered (another brand) with 401 invalid_token", async () => {
      const [head, payload, signature] = token.split(".") as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as Record<string, unknown>;
      claims["brand"] = "brand-globex";
      const altered = Buffer.from(JSON.stringify(claims)).toString("base64url");
      assertInvalidToken(await post({ authorization: `Bearer ${head}.${altered}.${signature}` }));
    });

    it("answers a token from another issuer with 401 invalid_token", async () => {
      const other = await signed({ iss: "http://evil.auth.test" });
      assertInvalidToken(await post({ authorization: `Bearer ${other}` }));
    });

    it("answers a token for another audience with 401 invalid_token", async () => {
      const other = await signed({ aud: "http://us.api.test" });
      assertInvalidToken(await post({ authorization: `Bearer ${other}` }));
    });

    it("answers a token for another region with 401 invalid_token", async () => {
      const other = await signed({ region: "us" });
      assertInvalidToken(await post({ authorization: `Bearer ${other}` }));
    });

    it("answers an expired token (issued two hours ago) with 401 invalid_token", async () => {
      const app = region.credentials.apps[0]!;
      const expired = await issueAccessToken(
        region.service.keys,
        settings(),
        { appClientId: app.appClientId, brandId: app.brandClientId },
        Date.now() - 2 * 3600 * 1000,
      );
      assertInvalidToken(await post({ authorization: `Bearer ${expired}` }));
    });

    it("answers a token that is not yet valid (nbf in the future) with 401 invalid_token", async () => {
      const early = await signed({ nbf: Math.floor(Date.now() / 1000) + 600 });
      assertInvalidToken(await post({ authorization: `Bearer ${early}` }));
    });

    it("answers a token with typ JWT instead of at+jwt with 401 invalid_token", async () => {
      const other = await signed({}, { typ: "JWT" });
      assertInvalidToken(await post({ authorization: `Bearer ${other}` }));
    });

    it("answers a token without a kid with 401 invalid_token", async () => {
      const other = await signed({}, { kid: undefined });
      assertInvalidToken(await post({ authorization: `Bearer ${other}` }));
    });

    it("answers an unsigned token (alg none) with 401 invalid_token", async () => {
      const { kid } = region.service.keys.activeKey();
      const [, payload] = token.split(".") as [string, string];
      const head = Buffer.from(JSON.stringify({ alg: "none", typ: "at+jwt", kid })).toString("base64url");
      assertInvalidToken(await post({ authorization: `Bearer ${head}.${payload}.` }));
    });

    it("answers a token without scope api_data/read with 401 invalid_token", async () => {
      const other = await signed({ scope: "api_data/write" });
      assertInvalidToken(await post({ authorization: `Bearer ${other}` }));
    });

    it("answers a token of an unknown app with 401 invalid_token", async () => {
      const other = await signed({ sub: "app-ghost", client_id: "app-ghost" });
      assertInvalidToken(await post({ authorization: `Bearer ${other}` }));
    });

    it("answers a correctly signed token of a revoked app with 401 invalid_token", async () => {
      await region.service.store.createApp({
        appClientId: REVOKED_APP,
        brandId,
        name: "Revoked after issue",
        secretHash: hashAppSecret("never-used-secret-0123456789abcdefghijklmno"),
        previousSecretHash: null,
        previousSecretExpiresAt: null,
        markets: null,
        dataSources: null,
        revokedAt: new Date(),
        createdAt: new Date(Date.now() - 3600_000),
      });
      // A token the token endpoint signed before the revocation looks exactly like this one.
      const issued = await issueAccessToken(region.service.keys, settings(), {
        appClientId: REVOKED_APP,
        brandId,
      });
      assertInvalidToken(await post({ authorization: `Bearer ${issued}` }));
    });

    it("does not echo a refused token in the 401 body", async () => {
      const response = await post({ authorization: "Bearer x.y.z" });
      assertInvalidToken(response);
      assert.ok(!response.body.includes("x.y.z"), "the token is not echoed");
    });
  });

  describe("authorization (403)", () => {
    it("answers a clientId of another brand with 403 FORBIDDEN", async () => {
      const other = region.credentials.apps.find((app) => app.brandClientId !== brandId)!;
      const response = await post({
        authorization: `Bearer ${token}`,
        payload: JSON.stringify({ query: READINESS, variables: { c: other.brandClientId } }),
      });
      refused.push(response);
      assert.equal(response.statusCode, 403, response.body);
      const body = response.json() as { errors: { extensions: { code: string } }[] };
      assert.deepEqual(
        body.errors.map((error) => error.extensions.code),
        ["FORBIDDEN"],
      );
    });

    const outside: [string, Record<string, string[]>][] = [
      ["a market outside the brand's grants", { markets: ["GB", "ES"] }],
      ["a data source outside the brand's grants", { dataSources: ["amazon_ads"] }],
    ];
    for (const [name, filter] of outside) {
      it(`answers a filter naming ${name} with 403 FORBIDDEN`, async () => {
        const app = region.credentials.apps[0]!;
        for (const values of Object.values(filter)) {
          assert.ok(values.some((value) => !app.markets.includes(value) && !app.dataSources.includes(value)));
        }
        const response = await post({
          authorization: `Bearer ${token}`,
          payload: JSON.stringify({
            query: RECORDS,
            variables: { c: brandId, from: region.today, to: region.today, filter },
          }),
        });
        refused.push(response);
        assert.equal(response.statusCode, 403, response.body);
        const body = response.json() as { data: unknown; errors: { extensions: { code: string } }[] };
        assert.deepEqual(
          body.errors.map((error) => error.extensions.code),
          ["FORBIDDEN"],
        );
        assert.equal(body.data, null);
      });
    }

    it("answers a filter naming a market the brand has but the app was narrowed away from with 403", async () => {
      const narrowed = region.credentials.apps.find(
        (app) => app.brandClientId === brandId && app.markets.length === 1,
      )!;
      const response = await post({
        authorization: `Bearer ${await region.token(narrowed.appClientId)}`,
        payload: JSON.stringify({
          query: RECORDS,
          variables: { c: brandId, from: region.today, to: region.today, filter: { markets: ["DE"] } },
        }),
      });
      refused.push(response);
      assert.equal(response.statusCode, 403, response.body);
    });

    it("answers a filter inside the grants with 200", async () => {
      const response = await post({
        authorization: `Bearer ${token}`,
        payload: JSON.stringify({
          query: RECORDS,
          variables: { c: brandId, from: region.today, to: region.today, filter: { markets: ["GB"] } },
        }),
      });
      assert.equal(response.statusCode, 200, response.body);
    });
  });

  describe("requests that are not a JSON GraphQL POST", () => {
    for (const method of ["GET", "PUT", "DELETE", "PATCH"] as const) {
      it(`answers ${method} with 405, Allow: POST and BAD_REQUEST`, async () => {
        const response = await region.inject({
          method,
          url: `/graphql?query=${encodeURIComponent("{ __typename }")}`,
          headers: { authorization: `Bearer ${token}` },
        });
        assertError(response, 405, "BAD_REQUEST");
        assert.equal(response.headers["allow"], "POST");
      });
    }

    const unsupportedTypes: [string, string | null][] = [
      ["text/plain", "text/plain"],
      ["a form content type", "application/x-www-form-urlencoded"],
      ["application/graphql", "application/graphql"],
      ["JSON in a charset other than UTF-8", "application/json; charset=iso-8859-1"],
      ["no content type", null],
    ];
    for (const [name, contentType] of unsupportedTypes) {
      it(`answers ${name} with 415 BAD_REQUEST`, async () => {
        assertError(await post({ authorization: `Bearer ${token}`, contentType }), 415, "BAD_REQUEST");
      });
    }

    it("accepts application/json with charset=utf-8", async () => {
      const response = await post({
        authorization: `Bearer ${token}`,
        contentType: "application/json; charset=utf-8",
      });
      assert.equal(response.statusCode, 200, response.body);
    });

    const badBodies: [string, string | Buffer][] = [
      ["invalid JSON", '{"query": '],
      ["an empty body", ""],
      ["a JSON array (batching is not offered)", JSON.stringify([{ query: "{ __typename }" }])],
      ["a JSON string", JSON.stringify("{ __typename }")],
      ["JSON null", "null"],
      ["an object without a query", JSON.stringify({ variables: {} })],
      ["an empty query", JSON.stringify({ query: "" })],
      ["a blank query", JSON.stringify({ query: "   \n " })],
      ["a query that is not a string", JSON.stringify({ query: 42 })],
      ["variables that are an array", JSON.stringify({ query: READINESS, variables: ["brand-acme"] })],
      ["variables that are a string", JSON.stringify({ query: READINESS, variables: '{"c":"brand-acme"}' })],
      ["an operationName that is not a string", JSON.stringify({ query: READINESS, operationName: 7 })],
      ["body bytes that are not UTF-8", Buffer.from([0x7b, 0x22, 0x71, 0xff, 0xfe, 0x22, 0x7d])],
    ];
    for (const [name, payload] of badBodies) {
      it(`answers ${name} with 400 BAD_REQUEST`, async () => {
        assertError(await post({ authorization: `Bearer ${token}`, payload }), 400, "BAD_REQUEST");
      });
    }

    it("answers a body over the 64 KiB limit with 413 BAD_REQUEST", async () => {
      assert.equal(region.service.config.maxBodyBytes, 65_536);
      const padding = "#".repeat(65_536);
      const payload = JSON.stringify({ query: `${padding}\n{ __typename }` });
      assertError(await post({ authorization: `Bearer ${token}`, payload }), 413, "BAD_REQUEST");
    });

    it("accepts a body just under the limit (the 413 is about size alone)", async () => {
      const query = `query($c: ID!) { marketingDataReadiness(clientId: $c) { status } }`;
      const overhead = JSON.stringify({ query: "", variables: { c: brandId } }).length + 1;
      const payload = JSON.stringify({
        query: `${"#".repeat(65_536 - overhead - query.length - 8)}\n${query}`,
        variables: { c: brandId },
      });
      assert.ok(payload.length <= 65_536 && payload.length > 65_000, `${payload.length}`);
      const response = await post({ authorization: `Bearer ${token}`, payload });
      assert.notEqual(response.statusCode, 413, response.body);
    });

    it("checks the body before the token: a bad body without a token is 400, not 401", async () => {
      assertError(await post({ payload: "{" }), 400, "BAD_REQUEST");
    });
  });

  describe("every refusal", () => {
    it("is never a 500 and never carries a stack trace", () => {
      assert.ok(refused.length >= 40, `only ${refused.length} refused requests were recorded`);
      for (const response of refused) {
        assert.ok(
          response.statusCode >= 400 && response.statusCode < 500,
          `${response.statusCode} ${response.body}`,
        );
        assert.doesNotMatch(response.body, /\bat [^\s]+ \(|\bat (file|node):|\.[cm]?[jt]s:\d+:\d+/);
        assert.doesNotMatch(response.body, /"stack"/);
      }
    });
  });
});
