/**
 * Requests Node's HTTP parser refuses before Fastify routes them (header fields over its 16 KB
 * limit, HTTP it cannot read) still get the contract's shapes (docs/errors.md, 431 and 400):
 * RFC 6749 with `Cache-Control: no-store` on the token endpoint, `extensions.code` on /graphql.
 * Over a real port.
 */
import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { startTestRegion, type TestRegion } from "./support/test-region.js";

const MESSAGE =
  "the request's header fields are too large: at most 16 KB in all (an access token is about 1 KB)";

describe("header fields over the limit", () => {
  let region: TestRegion;
  let url: string;

  before(async () => {
    region = await startTestRegion({ days: 1 });
    url = await region.service.app.listen({ host: "127.0.0.1", port: 0 });
  });
  after(() => region.close());

  it("a 64 KB bearer token on /graphql: 431 with BAD_REQUEST in extensions.code", async () => {
    const response = await fetch(`${url}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${"a".repeat(65_536)}`, "content-type": "application/json" },
      body: JSON.stringify({ query: "{ __typename }" }),
    });
    assert.equal(response.status, 431);
    assert.equal(response.headers.get("content-type"), "application/json; charset=utf-8");
    assert.deepEqual(await response.json(), {
      errors: [{ message: MESSAGE, extensions: { code: "BAD_REQUEST" } }],
    });
  });

  it("a 64 KB Basic header on the token endpoint: 431 invalid_request, not cached", async () => {
    const response = await fetch(`${url}/oauth2/token`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`app:${"s".repeat(49_152)}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "grant_type=client_credentials&scope=api_data%2Fread",
    });
    assert.equal(response.status, 431);
    assert.equal(response.headers.get("cache-control"), "no-store");
    assert.equal(response.headers.get("pragma"), "no-cache");
    assert.deepEqual(await response.json(), { error: "invalid_request", error_description: MESSAGE });
  });

  it("a header line HTTP cannot parse on the token endpoint: 400 invalid_request, not cached", async () => {
    const { port } = new URL(url);
    const socket = connect(Number(port), "127.0.0.1");
    socket.end("POST /oauth2/token HTTP/1.1\r\nhost: x\r\nno colon here\r\n\r\n");
    let answer = "";
    for await (const chunk of socket) answer += String(chunk);
    const [head, body] = answer.split("\r\n\r\n") as [string, string];
    assert.match(head, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(head, /\r\ncache-control: no-store\r\n/);
    assert.deepEqual(JSON.parse(body), {
      error: "invalid_request",
      error_description: "the request is malformed",
    });
  });

  it("the service still answers on a new connection afterwards", async () => {
    const response = await fetch(`${url}/oauth2/token`, {
      method: "POST",
      headers: { authorization: region.basic(), "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials&scope=api_data%2Fread",
    });
    assert.equal(response.status, 200);
  });
});
