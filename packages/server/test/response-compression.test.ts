/**
 * Compressed answers (CONTRACT §8, issue 55 point 3, docs/api.md "Compression"): a records page,
 * error bodies and the explorer's page and assets in the coding `Accept-Encoding` prefers (RFC 9110
 * §12.5.3), decoded to the very bytes of the uncompressed answer; small answers, HEAD and
 * `identity` sent as they are; `Vary: Accept-Encoding` on each; curl `--compressed` decodes them
 * from a listening service.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, describe, it } from "node:test";
import * as zlib from "node:zlib";
import { RECORD_FIELDS } from "@mdq/contract";
import { addDays, startTestRegion, type TestRegion } from "@mdq/test-support";
import type { LightMyRequestResponse } from "fastify";
import { loadConfig } from "../src/config.js";
import { CONTENT_CODINGS, negotiateContentCoding } from "../src/plugins/content-codings.js";

const RECORDS = `query($c: ID!, $from: Date!, $to: Date!) {
  marketingRecords(clientId: $c, dateRange: {from: $from, to: $to}, currency: GBP, pagination: {page: 1, pageSize: 5000}) {
    ${RECORD_FIELDS.join(" ")}
  }
}`;
const READINESS = "query($c: ID!) { marketingDataReadiness(clientId: $c) { status date } }";
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/** The body of `response` decoded from its `Content-Encoding`. */
function decoded(response: LightMyRequestResponse): Buffer {
  const coding = response.headers["content-encoding"];
  if (coding === undefined) return response.rawPayload;
  if (coding === "gzip") return zlib.gunzipSync(response.rawPayload);
  if (coding === "br") return zlib.brotliDecompressSync(response.rawPayload);
  // Node 22.15 and later only, as is the zstd the service offers (content-codings.ts).
  const zstd = (zlib as { zstdDecompressSync?: (data: Buffer) => Buffer }).zstdDecompressSync;
  if (coding === "zstd" && zstd) return zstd(response.rawPayload);
  throw new Error(`unexpected content-encoding ${String(coding)}`);
}

/** Whether `Vary` names accept-encoding. */
function variesOnAcceptEncoding(response: LightMyRequestResponse): boolean {
  return String(response.headers["vary"] ?? "")
    .split(",")
    .some((name) => name.trim().toLowerCase() === "accept-encoding");
}

describe("compressed answers", () => {
  let region: TestRegion;
  let token: string;
  let brandId: string;
  let variables: Record<string, unknown>;

  before(async () => {
    // 90 days at scale 3: a little over 5000 rows, so the page is a full 5000-row one (~1.5 MB).
    region = await startTestRegion({ days: 90, scale: 3, explorer: "on" });
    token = await region.token();
    brandId = region.credentials.apps[0]!.brandClientId;
    variables = { c: brandId, from: addDays(region.today, -90), to: addDays(region.today, -1) };
  });
  after(() => region.close());

  function graphql(
    acceptEncoding: string | undefined,
    query = RECORDS,
    vars: Record<string, unknown> = variables,
  ): Promise<LightMyRequestResponse> {
    return region.inject({
      method: "POST",
      url: "/graphql",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        ...(acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding }),
      },
      payload: JSON.stringify({ query, variables: vars }),
    });
  }

  it("answers a 5000-row records page in gzip and in brotli: decoded, the same bytes; on the wire ≥ 5× fewer", async () => {
    const plain = await graphql(undefined);
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.headers["content-encoding"], undefined);
    assert.ok(variesOnAcceptEncoding(plain), String(plain.headers["vary"]));
    assert.equal(Number(plain.headers["content-length"]), plain.rawPayload.length);
    const records = (plain.json() as { data: { marketingRecords: unknown[] } }).data.marketingRecords;
    assert.equal(records.length, 5000);

    for (const coding of ["gzip", "br"]) {
      const before = await region.service.metrics.value("mdq_compression_bytes_total", {
        encoding: coding,
        stage: "before",
      });
      const response = await graphql(coding);
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers["content-encoding"], coding);
      assert.equal(response.headers["content-type"], "application/json; charset=utf-8");
      assert.equal(response.headers["content-length"], undefined);
      assert.ok(variesOnAcceptEncoding(response));
      assert.ok(decoded(response).equals(plain.rawPayload), `${coding} decodes to the uncompressed answer`);
      const ratio = plain.rawPayload.length / response.rawPayload.length;
      assert.ok(
        ratio >= 5,
        `${coding}: ${plain.rawPayload.length} → ${response.rawPayload.length} bytes (${ratio.toFixed(1)}×)`,
      );
      const counted = await region.service.metrics.value("mdq_compression_bytes_total", {
        encoding: coding,
        stage: "before",
      });
      assert.equal(counted - before, plain.rawPayload.length);
    }
  });

  it("sends the answer as it is for no Accept-Encoding, identity, codings weighed 0, or none it knows", async () => {
    const plain = await graphql(undefined);
    for (const field of ["", "identity", "gzip;q=0, br;q=0", "compress, deflate", "identity;q=0", "*;q=0"]) {
      const response = await graphql(field);
      assert.equal(response.statusCode, 200, field);
      assert.equal(response.headers["content-encoding"], undefined, field);
      assert.ok(variesOnAcceptEncoding(response), field);
      assert.ok(response.rawPayload.equals(plain.rawPayload), field);
    }
  });

  it("picks the coding by q-value (RFC 9110 §12.5.3), ties by MDQ's preference", async () => {
    const cases: [string, string][] = [
      ["gzip;q=0.5, br;q=1", "br"],
      ["gzip, br;q=0.9", "gzip"],
      ["br;q=0, *", CONTENT_CODINGS.find((coding) => coding !== "br")!],
      ["X-GZIP", "gzip"],
      ["gzip, br", "br"],
      ["*", CONTENT_CODINGS[0]!],
    ];
    for (const [field, coding] of cases) {
      const response = await graphql(field);
      assert.equal(response.headers["content-encoding"], coding, field);
    }
    // Identity weighed above every offered coding wins; a malformed element is ignored.
    assert.equal(negotiateContentCoding("gzip;q=0.5, identity", CONTENT_CODINGS), null);
    assert.equal(negotiateContentCoding("gzip;q=2, br;q=0.2", CONTENT_CODINGS), "br");
    assert.equal(negotiateContentCoding(["gzip;q=0", "br"], CONTENT_CODINGS), "br");
    assert.equal(negotiateContentCoding(undefined, CONTENT_CODINGS), null);
  });

  it("sends an answer under MDQ_COMPRESSION_MIN_BYTES (1024 by default) uncompressed, still with Vary", async () => {
    assert.equal(loadConfig({}).compressionMinBytes, 1024);
    assert.equal(loadConfig({}).compression, true);
    const response = await graphql("gzip, br", READINESS, { c: brandId });
    assert.equal(response.statusCode, 200);
    assert.ok(response.rawPayload.length < 1024);
    assert.equal(response.headers["content-encoding"], undefined);
    assert.equal(Number(response.headers["content-length"]), response.rawPayload.length);
    assert.ok(variesOnAcceptEncoding(response));
    assert.equal(
      (response.json() as { data: { marketingDataReadiness: { status: string } } }).data
        .marketingDataReadiness.status,
      "READY",
    );
  });

  it("compresses a large GraphQL error body and leaves a small OAuth error as it is", async () => {
    const unknownFields = Array.from({ length: 40 }, (_, index) => `noSuchField${index}`).join(" ");
    const query = `query($c: ID!) { marketingDataReadiness(clientId: $c) { ${unknownFields} } }`;
    const plain = await graphql(undefined, query, { c: brandId });
    assert.ok(plain.rawPayload.length > 1024, `${plain.rawPayload.length} bytes`);
    const response = await graphql("gzip", query, { c: brandId });
    assert.equal(response.statusCode, plain.statusCode);
    assert.equal(response.headers["content-encoding"], "gzip");
    assert.ok(decoded(response).equals(plain.rawPayload));
    assert.equal(
      (JSON.parse(decoded(response).toString()) as { errors: { extensions: { code: string } }[] }).errors[0]!
        .extensions.code,
      "GRAPHQL_VALIDATION_FAILED",
    );

    const oauth = await region.inject({
      method: "POST",
      url: "/oauth2/token",
      headers: { "content-type": "application/x-www-form-urlencoded", "accept-encoding": "gzip" },
      payload: "grant_type=client_credentials",
    });
    assert.equal(oauth.statusCode, 400, oauth.body);
    assert.equal(oauth.headers["content-encoding"], undefined);
    assert.ok(variesOnAcceptEncoding(oauth));
    assert.equal((oauth.json() as { error: string }).error, "invalid_client");
  });

  it("never encodes a HEAD answer", async () => {
    const response = await region.inject({
      method: "HEAD",
      url: "/livez",
      headers: { "accept-encoding": "gzip" },
    });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers["content-encoding"], undefined);
    assert.equal(response.rawPayload.length, 0);
  });

  it("serves the explorer's page and assets compressed, decoding to the same bytes, once-compressed assets kept", async () => {
    const page = await region.inject({
      method: "GET",
      url: "/graphql",
      headers: { accept: BROWSER_ACCEPT, "accept-encoding": "gzip, deflate, br" },
    });
    assert.equal(page.statusCode, 200);
    assert.equal(page.headers["content-encoding"], "br");
    assert.equal(page.headers["vary"], "accept, accept-encoding");
    const html = decoded(page).toString();
    const script = /<script[^>]*\ssrc="([^"]*graphiql\.min\.js)"/.exec(html)?.[1];
    const style = /<link[^>]*\shref="([^"]*graphiql\.min\.css)"/.exec(html)?.[1];
    assert.ok(script && style, html);

    for (const asset of [script, style]) {
      const url = `/${asset}`;
      const plain = await region.inject({ method: "GET", url });
      assert.equal(plain.statusCode, 200);
      assert.equal(plain.headers["content-encoding"], undefined);
      assert.equal(plain.headers["vary"], "accept-encoding");
      for (const coding of ["gzip", "br"]) {
        const first = await region.inject({ method: "GET", url, headers: { "accept-encoding": coding } });
        assert.equal(first.statusCode, 200);
        assert.equal(first.headers["content-encoding"], coding);
        assert.equal(first.headers["vary"], "accept-encoding");
        assert.equal(first.headers["cache-control"], "public, max-age=31536000, immutable");
        assert.equal(Number(first.headers["content-length"]), first.rawPayload.length);
        assert.ok(decoded(first).equals(plain.rawPayload), `${url} in ${coding}`);
        // The stylesheet is mostly its fonts, embedded as base64 of already compressed WOFF2:
        // only base64's third comes back.
        const ratio = plain.rawPayload.length / first.rawPayload.length;
        assert.ok(ratio >= (asset === script ? 3 : 1.4), `${url} in ${coding}: ${ratio.toFixed(2)}×`);
        const again = await region.inject({ method: "GET", url, headers: { "accept-encoding": coding } });
        assert.ok(again.rawPayload.equals(first.rawPayload));
      }
      const head = await region.inject({ method: "HEAD", url, headers: { "accept-encoding": "gzip" } });
      assert.equal(head.statusCode, 200);
      assert.equal(head.rawPayload.length, 0);
      assert.equal(head.headers["content-encoding"], "gzip");
    }
  });

  it("is decoded by curl --compressed from a listening service", async () => {
    const address = await region.service.app.listen({ host: "127.0.0.1", port: 0 });
    const plain = await graphql(undefined);
    const { status, stdout, stderr } = await curl([
      "--silent",
      "--show-error",
      "--compressed",
      "--write-out",
      "%{stderr}%header{content-encoding}",
      "--header",
      `authorization: Bearer ${token}`,
      "--header",
      "content-type: application/json",
      "--data-binary",
      JSON.stringify({ query: RECORDS, variables }),
      `${address}/graphql`,
    ]);
    assert.equal(status, 0, stderr);
    // curl --compressed asks for every coding its build decodes; the service picks its own first.
    assert.equal(stderr, CONTENT_CODINGS[0]);
    assert.ok(stdout.equals(plain.rawPayload), "curl decodes the answer to the uncompressed bytes");
  });
});

/** Runs curl, collecting its output. */
function curl(args: string[]): Promise<{ status: number | null; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("curl", args, { stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout: Buffer.concat(out), stderr }));
  });
}

describe("MDQ_COMPRESSION=off", () => {
  let region: TestRegion;

  before(async () => {
    region = await startTestRegion({ days: 2, explorer: "on", compression: "off" });
  });
  after(() => region.close());

  it("sends every answer as it is, without Vary, the explorer's assets included", async () => {
    const token = await region.token();
    const unknownFields = Array.from({ length: 40 }, (_, index) => `noSuchField${index}`).join(" ");
    const response = await region.inject({
      method: "POST",
      url: "/graphql",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        "accept-encoding": "gzip, br",
      },
      payload: JSON.stringify({ query: `{ myAccess(clientId: "x") { ${unknownFields} } }` }),
    });
    assert.ok(response.rawPayload.length > 1024);
    assert.equal(response.headers["content-encoding"], undefined);
    assert.equal(response.headers["vary"], undefined);
    assert.equal(
      (response.json() as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code,
      "GRAPHQL_VALIDATION_FAILED",
    );

    const page = await region.inject({ method: "GET", url: "/graphql", headers: { accept: BROWSER_ACCEPT } });
    const script = /<script[^>]*\ssrc="([^"]*graphiql\.min\.js)"/.exec(page.body)?.[1];
    const asset = await region.inject({
      method: "GET",
      url: `/${script}`,
      headers: { "accept-encoding": "br" },
    });
    assert.equal(asset.statusCode, 200);
    assert.equal(asset.headers["content-encoding"], undefined);
    assert.equal(asset.headers["vary"], undefined);
  });

  it("names the key of a bad value", () => {
    assert.throws(
      () => loadConfig({}, { compression: "yes" }),
      /invalid configuration MDQ_COMPRESSION: "yes" is neither on nor off/,
    );
    assert.throws(
      () => loadConfig({}, { compressionMinBytes: "1KiB" }),
      /invalid configuration MDQ_COMPRESSION_MIN_BYTES: "1KiB" is not a whole number/,
    );
    assert.equal(loadConfig({ MDQ_COMPRESSION_MIN_BYTES: "0" }).compressionMinBytes, 0);
  });
});
