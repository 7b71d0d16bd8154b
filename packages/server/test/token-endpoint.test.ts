/**
 * The token endpoint over HTTP (CONTRACT §2, spec §4.1 and §7): client authentication with HTTP
 * Basic only (RFC 6749 §2.3.1, RFC 7617), the form body, RFC 6749 §5.2 error bodies, the RFC 9068
 * access token it issues, and the RFC 8414 metadata document.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type RawPost, rawPost, startTestRegion, type TestRegion } from "@mdq/test-support";
import type { LightMyRequestResponse } from "fastify";
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from "jose";
import { hashAppSecret } from "../src/oauth/app-secrets.js";

const FORM = "application/x-www-form-urlencoded";
const GOOD_BODY = "grant_type=client_credentials&scope=api_data%2Fread";
/** A secret with characters that RFC 6749 §2.3.1's form-encoding changes. */
const AWKWARD_SECRET = "a+b/c:d%e";
const AWKWARD_APP = "app-awkward-secret";
const REVOKED_APP = "app-revoked";
const REVOKED_SECRET = "revoked-app-secret-0123456789abcdefghijklmnop";

/** Base64 of the raw bytes `text`, with no form-encoding of its parts. */
function basicOf(text: string | Buffer): string {
  return `Basic ${Buffer.from(text).toString("base64")}`;
}

describe("POST /oauth2/token", () => {
  let region: TestRegion;
  const responses: LightMyRequestResponse[] = [];
  let appClientId: string;
  let appSecret: string;

  before(async () => {
    region = await startTestRegion({ days: 3 });
    const first = region.credentials.apps[0]!;
    appClientId = first.appClientId;
    appSecret = first.appClientSecret;
    const template = {
      brandId: first.brandClientId,
      previousSecretHash: null,
      previousSecretExpiresAt: null,
      markets: null,
      dataSources: null,
      createdAt: new Date(),
    };
    await region.service.store.createApp({
      ...template,
      appClientId: AWKWARD_APP,
      name: "Awkward secret",
      secretHash: hashAppSecret(AWKWARD_SECRET),
      revokedAt: null,
    });
    await region.service.store.createApp({
      ...template,
      appClientId: REVOKED_APP,
      name: "Revoked",
      secretHash: hashAppSecret(REVOKED_SECRET),
      revokedAt: new Date(Date.now() - 60_000),
    });
  });
  after(() => region.close());

  async function post(options: RawPost): Promise<LightMyRequestResponse> {
    const response = await rawPost(region.service, "/oauth2/token", options, {
      contentType: FORM,
      payload: GOOD_BODY,
    });
    responses.push(response);
    return response;
  }

  /** Asserts an RFC 6749 §5.2 error response, with the no-cache headers. */
  function assertOAuthError(response: LightMyRequestResponse, status: number, error: string): void {
    assert.equal(response.statusCode, status, response.body);
    assert.match(String(response.headers["content-type"]), /^application\/json/);
    assert.equal(response.headers["cache-control"], "no-store");
    assert.equal(response.headers["pragma"], "no-cache");
    const body = response.json() as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ["error", "error_description"]);
    assert.equal(body["error"], error);
    assert.equal(typeof body["error_description"], "string");
    assert.notEqual(body["error_description"], "");
  }

  /** Asserts that the token endpoint answers `authorization` with 400 invalid_client. */
  async function assertInvalidClient(authorization: string): Promise<void> {
    assertOAuthError(await post({ authorization }), 400, "invalid_client");
  }

  /** Asserts a successful token response and returns the access token. */
  function assertTokenResponse(response: LightMyRequestResponse): string {
    assert.equal(response.statusCode, 200, response.body);
    assert.match(String(response.headers["content-type"]), /^application\/json/);
    assert.equal(response.headers["cache-control"], "no-store");
    assert.equal(response.headers["pragma"], "no-cache");
    const body = response.json() as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ["access_token", "expires_in", "scope", "token_type"]);
    assert.equal(body["token_type"], "Bearer");
    assert.equal(body["expires_in"], 3600);
    assert.equal(body["scope"], "api_data/read");
    assert.equal(typeof body["access_token"], "string");
    return body["access_token"] as string;
  }

  describe("success", () => {
    it("issues a Bearer token for 3600 s with scope api_data/read, no refresh token, not cacheable", async () => {
      assertTokenResponse(await post({ authorization: region.basic() }));
    });

    it("accepts the Basic scheme name in any case (RFC 7617: the scheme is case-insensitive)", async () => {
      const credentials = Buffer.from(`${appClientId}:${appSecret}`).toString("base64");
      assertTokenResponse(await post({ authorization: `basic ${credentials}` }));
      assertTokenResponse(await post({ authorization: `BASIC ${credentials}` }));
    });

    it("accepts a matching client_id in the body next to HTTP Basic", async () => {
      const payload = `${GOOD_BODY}&client_id=${encodeURIComponent(appClientId)}`;
      assertTokenResponse(await post({ authorization: region.basic(), payload }));
    });

    it("accepts a Content-Type with a charset parameter", async () => {
      const response = await post({ authorization: region.basic(), contentType: `${FORM}; charset=UTF-8` });
      assertTokenResponse(response);
    });
  });

  describe("the access token (RFC 9068)", () => {
    it("is an at+jwt signed with EdDSA under a kid published in the JWKS", async () => {
      const token = assertTokenResponse(await post({ authorization: region.basic() }));
      const header = decodeProtectedHeader(token);
      assert.equal(header.typ, "at+jwt");
      assert.equal(header.alg, "EdDSA");
      assert.equal(typeof header.kid, "string");
      const jwks = await region.inject({ method: "GET", url: "/.well-known/jwks.json" });
      assert.equal(jwks.statusCode, 200);
      const keySet = jwks.json() as JSONWebKeySet;
      assert.ok(keySet.keys.some((key) => key.kid === header.kid));
      for (const key of keySet.keys) {
        assert.equal(key["d"], undefined, "the JWKS must not publish private key material");
      }
    });

    it("carries iss, aud, sub, client_id, brand, scope, region, iat, exp = iat + 3600 and jti", async () => {
      const before = Math.floor(Date.now() / 1000);
      const token = assertTokenResponse(await post({ authorization: region.basic() }));
      const afterIssue = Math.ceil(Date.now() / 1000);
      const claims = decodeJwt(token);
      const { authUrl, baseUrl } = region.service.config;
      assert.equal(claims.iss, authUrl);
      assert.equal(claims.aud, baseUrl);
      assert.equal(claims.sub, appClientId);
      assert.equal(claims["client_id"], appClientId);
      assert.equal(claims["brand"], region.credentials.apps[0]!.brandClientId);
      assert.equal(claims["scope"], "api_data/read");
      assert.equal(claims["region"], "uk");
      assert.equal(typeof claims.iat, "number");
      assert.ok(claims.iat! >= before && claims.iat! <= afterIssue, `iat ${claims.iat}`);
      assert.equal(claims.exp, claims.iat! + 3600);
      assert.equal(typeof claims.jti, "string");
      assert.notEqual(claims.jti, "");
    });

    it("has a signature that verifies against the published JWKS, and a fresh jti each time", async () => {
      const jwks = await region.inject({ method: "GET", url: "/.well-known/jwks.json" });
      const keySet = createLocalJWKSet(jwks.json() as JSONWebKeySet);
      const first = assertTokenResponse(await post({ authorization: region.basic() }));
      const second = assertTokenResponse(await post({ authorization: region.basic() }));
      const { authUrl, baseUrl } = region.service.config;
      const options = { algorithms: ["EdDSA"], typ: "at+jwt", issuer: authUrl, audience: baseUrl };
      const verifiedFirst = await jwtVerify(first, keySet, options);
      const verifiedSecond = await jwtVerify(second, keySet, options);
      assert.notEqual(verifiedFirst.payload.jti, verifiedSecond.payload.jti);
    });
  });

  describe("client authentication: invalid_client (400)", () => {
    it("refuses a wrong secret", async () => {
      await assertInvalidClient(region.basic(undefined, `${appSecret}x`));
    });

    it("refuses an unknown client id", async () => {
      await assertInvalidClient(basicOf(`app-unknown:${appSecret}`));
    });

    it("refuses a request with no Authorization header", async () => {
      assertOAuthError(await post({}), 400, "invalid_client");
    });

    it("refuses credentials sent as client_id and client_secret form parameters", async () => {
      const payload = `${GOOD_BODY}&client_id=${encodeURIComponent(appClientId)}&client_secret=${encodeURIComponent(appSecret)}`;
      assertOAuthError(await post({ payload }), 400, "invalid_client");
    });

    it("refuses a client_secret in the body even next to valid HTTP Basic (one method only, RFC 6749 §2.3)", async () => {
      const payload = `${GOOD_BODY}&client_secret=${encodeURIComponent(appSecret)}`;
      assertOAuthError(await post({ authorization: region.basic(), payload }), 400, "invalid_client");
    });

    it("refuses a body client_id that differs from the HTTP Basic user", async () => {
      const payload = `${GOOD_BODY}&client_id=app-someone-else`;
      assertOAuthError(await post({ authorization: region.basic(), payload }), 400, "invalid_client");
    });

    it("refuses a revoked app with its correct secret", async () => {
      await assertInvalidClient(basicOf(`${REVOKED_APP}:${REVOKED_SECRET}`));
    });

    it("refuses a Bearer header instead of Basic", async () => {
      await assertInvalidClient(`Bearer ${appSecret}`);
    });

    const encoded = () => Buffer.from(`${appClientId}:${appSecret}`).toString("base64");
    const malformed: [string, () => string][] = [
      ["no space after the scheme", () => `Basic${encoded()}`],
      ["two spaces after the scheme", () => `Basic  ${encoded()}`],
      ["a tab after the scheme", () => `Basic\t${encoded()}`],
      ["a leading space", () => ` Basic ${encoded()}`],
      ["a trailing space", () => `Basic ${encoded()} `],
      ["a trailing newline", () => `Basic ${encoded()}\n`],
      ["a trailing CRLF", () => `Basic ${encoded()}\r\n`],
      ["the scheme alone", () => "Basic"],
      ["the scheme and a space", () => "Basic "],
      ["base64 with characters outside the alphabet", () => "Basic !!!!"],
      ["base64url characters instead of base64", () => "Basic YW_j"],
      [
        "base64 without its padding (RFC 4648 §4)",
        () => {
          assert.match(encoded(), /=$/, "the demo credentials' base64 should end in padding");
          return `Basic ${encoded().replace(/=+$/, "")}`;
        },
      ],
      ["padding in the middle", () => `Basic YW=Jj${encoded()}`],
      ["no colon between id and secret", () => basicOf(`${appClientId}${appSecret}`)],
      ["an empty client id", () => basicOf(`:${appSecret}`)],
      ["an empty secret", () => basicOf(`${appClientId}:`)],
      ["a space inside the client id", () => basicOf(`app acme:${appSecret}`)],
      ["a form-encoded space ('+') inside the client id", () => basicOf(`app+acme:${appSecret}`)],
      ["a trailing space in the secret", () => basicOf(`${appClientId}:${appSecret} `)],
      ["a trailing newline in the secret", () => basicOf(`${appClientId}:${appSecret}\n`)],
      ["a %-encoded newline in the secret", () => basicOf(`${appClientId}:${appSecret}%0A`)],
      ["a leading tab in the client id", () => basicOf(`\t${appClientId}:${appSecret}`)],
      ["a malformed %-escape", () => basicOf(`${appClientId}:${appSecret}%zz`)],
      ["a truncated %-escape", () => basicOf(`${appClientId}:${appSecret}%4`)],
      ["credentials that are not UTF-8", () => basicOf(Buffer.from([0x61, 0x3a, 0xff, 0xfe]))],
    ];
    for (const [name, header] of malformed) {
      it(`refuses a Basic header with ${name}`, async () => {
        await assertInvalidClient(header());
      });
    }
  });

  describe("RFC 6749 §2.3.1 form-encoding of the id and secret", () => {
    it("accepts a secret with '+', '/', ':' and '%' when each part is form-encoded", async () => {
      const pair = `${encodeURIComponent(AWKWARD_APP)}:${encodeURIComponent(AWKWARD_SECRET)}`;
      assert.equal(pair, `${AWKWARD_APP}:a%2Bb%2Fc%3Ad%25e`);
      assertTokenResponse(await post({ authorization: basicOf(pair) }));
    });

    it("refuses the same secret sent raw, without form-encoding", async () => {
      await assertInvalidClient(basicOf(`${AWKWARD_APP}:${AWKWARD_SECRET}`));
    });

    it("refuses the raw form of a secret whose '+' decodes to a space", async () => {
      await assertInvalidClient(basicOf(`${AWKWARD_APP}:a+b%2Fc%3Ad%25e`));
    });

    it("accepts a generated secret sent raw, since form-encoding leaves base64url unchanged", async () => {
      assert.match(appSecret, /^[A-Za-z0-9_-]{43}$/);
      assertTokenResponse(await post({ authorization: basicOf(`${appClientId}:${appSecret}`) }));
    });
  });

  describe("the form body", () => {
    it("refuses a JSON body with invalid_request", async () => {
      const payload = JSON.stringify({ grant_type: "client_credentials", scope: "api_data/read" });
      const response = await post({
        authorization: region.basic(),
        contentType: "application/json",
        payload,
      });
      assertOAuthError(response, 400, "invalid_request");
    });

    it("refuses a form body without a Content-Type with invalid_request", async () => {
      assertOAuthError(
        await post({ authorization: region.basic(), contentType: null }),
        400,
        "invalid_request",
      );
    });

    it("refuses a form body sent as text/plain with invalid_request", async () => {
      const response = await post({ authorization: region.basic(), contentType: "text/plain" });
      assertOAuthError(response, 400, "invalid_request");
    });

    it("refuses an empty body with invalid_request", async () => {
      assertOAuthError(await post({ authorization: region.basic(), payload: "" }), 400, "invalid_request");
    });

    it("refuses a missing grant_type with invalid_request", async () => {
      const response = await post({ authorization: region.basic(), payload: "scope=api_data%2Fread" });
      assertOAuthError(response, 400, "invalid_request");
    });

    it("refuses an empty grant_type with invalid_request", async () => {
      const response = await post({
        authorization: region.basic(),
        payload: "grant_type=&scope=api_data%2Fread",
      });
      assertOAuthError(response, 400, "invalid_request");
    });

    it("refuses a missing scope with invalid_request", async () => {
      const response = await post({
        authorization: region.basic(),
        payload: "grant_type=client_credentials",
      });
      assertOAuthError(response, 400, "invalid_request");
    });

    it("refuses another grant type with unsupported_grant_type", async () => {
      const payload = "grant_type=password&scope=api_data%2Fread&username=a&password=b";
      assertOAuthError(await post({ authorization: region.basic(), payload }), 400, "unsupported_grant_type");
    });

    it("refuses another scope with invalid_scope", async () => {
      const payload = "grant_type=client_credentials&scope=api_data%2Fwrite";
      assertOAuthError(await post({ authorization: region.basic(), payload }), 400, "invalid_scope");
    });

    it("refuses an extra scope next to api_data/read with invalid_scope", async () => {
      const payload = "grant_type=client_credentials&scope=api_data%2Fread+admin";
      assertOAuthError(await post({ authorization: region.basic(), payload }), 400, "invalid_scope");
    });

    it("refuses a repeated parameter with invalid_request (RFC 6749 §3.2)", async () => {
      const payload = `${GOOD_BODY}&grant_type=client_credentials`;
      assertOAuthError(await post({ authorization: region.basic(), payload }), 400, "invalid_request");
    });

    it("refuses a body that is not UTF-8 with invalid_request", async () => {
      const payload = Buffer.concat([Buffer.from(`${GOOD_BODY}&x=`), Buffer.from([0xff, 0xfe])]);
      assertOAuthError(await post({ authorization: region.basic(), payload }), 400, "invalid_request");
    });
  });

  describe("routing", () => {
    for (const method of ["GET", "PUT", "DELETE"] as const) {
      it(`answers ${method} with 405 and Allow: POST`, async () => {
        const response = await region.inject({ method, url: "/oauth2/token" });
        responses.push(response);
        assertOAuthError(response, 405, "invalid_request");
        assert.equal(response.headers["allow"], "POST");
      });
    }

    it("answers an unknown path under /oauth2/ with 404 in RFC 6749 shape", async () => {
      const response = await region.inject({
        method: "POST",
        url: "/oauth2/authorize",
        headers: { authorization: region.basic(), "content-type": FORM },
        payload: GOOD_BODY,
      });
      responses.push(response);
      assertOAuthError(response, 404, "not_found");
    });
  });

  describe("RFC 8414 metadata", () => {
    it("publishes issuer, token_endpoint, jwks_uri, the client_credentials grant and client_secret_basic", async () => {
      const response = await region.inject({ method: "GET", url: "/.well-known/oauth-authorization-server" });
      assert.equal(response.statusCode, 200);
      const metadata = response.json() as Record<string, unknown>;
      const { authUrl } = region.service.config;
      assert.equal(metadata["issuer"], authUrl);
      assert.equal(metadata["token_endpoint"], `${authUrl}/oauth2/token`);
      assert.equal(metadata["jwks_uri"], `${authUrl}/.well-known/jwks.json`);
      assert.deepEqual(metadata["grant_types_supported"], ["client_credentials"]);
      assert.deepEqual(metadata["token_endpoint_auth_methods_supported"], ["client_secret_basic"]);
      assert.deepEqual(metadata["scopes_supported"], ["api_data/read"]);
    });
  });

  describe("every answer", () => {
    it("is never a 500 and never carries a stack trace", () => {
      assert.ok(responses.length >= 50, `only ${responses.length} responses were recorded`);
      for (const response of responses) {
        assert.ok(response.statusCode < 500, `${response.statusCode} ${response.body}`);
        assert.doesNotMatch(response.body, /\bat [^\s]+ \(|\bat (file|node):|\.[cm]?[jt]s:\d+:\d+|"stack"/);
      }
    });
  });

  describe("secrets", () => {
    it("never appear in a response body, whether the request succeeds or fails", async () => {
      await post({ authorization: region.basic() });
      await post({ authorization: region.basic(undefined, `${appSecret}x`) });
      await post({ payload: `${GOOD_BODY}&client_id=${appClientId}&client_secret=${appSecret}` });
      await post({ authorization: basicOf(`${appClientId}:${appSecret}%zz`) });
      await post({ authorization: basicOf(`${appClientId}:${appSecret}\n`) });
      await post({ authorization: basicOf(`${AWKWARD_APP}:${AWKWARD_SECRET}`) });
      const secrets = [
        ...region.credentials.apps.map((app) => app.appClientSecret),
        AWKWARD_SECRET,
        REVOKED_SECRET,
        ...region.credentials.apps.map((app) => hashAppSecret(app.appClientSecret)),
      ];
      assert.ok(responses.length >= 6);
      for (const response of responses) {
        for (const secret of secrets) {
          assert.ok(!response.body.includes(secret), `a response body contains a secret: ${response.body}`);
        }
      }
    });
  });
});
