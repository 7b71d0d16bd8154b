import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CLIENT_ENV, clientConfigFromEnv, MdqClient, MdqClientError } from "../src/index.js";

const env = {
  MDQ_APP_CLIENT_ID: "app-acme-analytics",
  MDQ_APP_CLIENT_SECRET: "s3cret-value",
  MDQ_BRAND_CLIENT_ID: "brand-acme",
  MDQ_AUTH_URL: "https://auth.uk.example/",
  MDQ_BASE_URL: "https://api.uk.example/v1/",
};

function failure(run: () => unknown): MdqClientError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof MdqClientError);
    return error;
  }
  assert.fail("expected an error");
}

describe("clientConfigFromEnv", () => {
  it("reads the five variables and drops trailing slashes from the URLs", () => {
    assert.deepEqual(clientConfigFromEnv(env), {
      appClientId: "app-acme-analytics",
      appClientSecret: "s3cret-value",
      brandClientId: "brand-acme",
      authUrl: "https://auth.uk.example",
      baseUrl: "https://api.uk.example/v1",
    });
    assert.deepEqual(Object.values(CLIENT_ENV).sort(), Object.keys(env).sort());
  });

  it("defaults both URLs to http://localhost:4000", () => {
    const { MDQ_AUTH_URL: _auth, MDQ_BASE_URL: _base, ...credentials } = env;
    const config = clientConfigFromEnv(credentials);
    assert.equal(config.authUrl, "http://localhost:4000");
    assert.equal(config.baseUrl, "http://localhost:4000");
  });

  it("names a missing variable without showing any value", () => {
    const { MDQ_APP_CLIENT_SECRET: _secret, ...rest } = env;
    const error = failure(() => clientConfigFromEnv(rest));
    assert.equal(error.code, "INVALID_CONFIG");
    assert.equal(error.message, "MDQ_APP_CLIENT_SECRET is not set");
  });

  it("refuses a secret with a stray newline, and never echoes it", () => {
    const error = failure(() => clientConfigFromEnv({ ...env, MDQ_APP_CLIENT_SECRET: "s3cret-value\n" }));
    assert.equal(error.code, "INVALID_CONFIG");
    assert.equal(error.message, "appClientSecret (MDQ_APP_CLIENT_SECRET) contains whitespace");
  });

  it("refuses a URL that is not http(s) or carries credentials", () => {
    assert.equal(
      failure(() => clientConfigFromEnv({ ...env, MDQ_BASE_URL: "ftp://x" })).code,
      "INVALID_CONFIG",
    );
    assert.equal(
      failure(() => clientConfigFromEnv({ ...env, MDQ_AUTH_URL: "https://user:pw@auth.example" })).message,
      "authUrl (MDQ_AUTH_URL) must not carry credentials, a query or a fragment",
    );
    assert.equal(
      failure(() => clientConfigFromEnv({ ...env, MDQ_AUTH_URL: "not a url" })).code,
      "INVALID_CONFIG",
    );
  });

  it("checks the constructor's options the same way", () => {
    const config = clientConfigFromEnv(env);
    assert.equal(failure(() => new MdqClient({ ...config, brandClientId: "" })).code, "INVALID_CONFIG");
    assert.equal(failure(() => new MdqClient({ ...config, timeoutMs: 0 })).code, "INVALID_CONFIG");
    assert.equal(failure(() => new MdqClient({ ...config, rateLimitMargin: 1.5 })).code, "INVALID_CONFIG");
    assert.equal(new MdqClient(config).config.baseUrl, "https://api.uk.example/v1");
  });
});
