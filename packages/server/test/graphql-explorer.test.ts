/**
 * The GraphiQL explorer's HTTP side (issue 13, docs/api.md §1.3): with `MDQ_EXPLORER=on`, a
 * `GET /graphql` asking for `text/html` gets the page, under a Content-Security-Policy naming no
 * other origin, and every asset it loads is served by MDQ with long cache headers; any other
 * `GET /graphql`, and every one with the explorer off (the default), keeps its 405.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { startTestRegion, useTestRegion } from "@mdq/test-support";
import type { LightMyRequestResponse } from "fastify";
import { ConfigError, loadConfig } from "../src/config.js";
import { dailyFlowTabs, EXAMPLE_BRAND_PLACEHOLDER, type ExplorerTab } from "../src/plugins/explorer-page.js";
import { acceptsHtml, EXPLORER_CONTENT_SECURITY_POLICY } from "../src/plugins/graphql-explorer.js";

const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8";

/** The 405 every non-POST `/graphql` request got before the explorer existed. */
function assertMethodNotAllowed(response: LightMyRequestResponse, method = "GET"): void {
  assert.equal(response.statusCode, 405, response.body);
  assert.equal(response.headers["allow"], "POST");
  assert.match(String(response.headers["content-type"]), /^application\/json/);
  assert.equal(response.headers["content-security-policy"], undefined);
  if (method === "HEAD") return;
  assert.deepEqual(response.json(), {
    errors: [{ message: `${method} is not allowed here; use POST`, extensions: { code: "BAD_REQUEST" } }],
  });
}

/** The addresses of the page's scripts and stylesheets, as written (relative to the page). */
function assetAddresses(html: string): string[] {
  return [...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*\shref)="([^"]+)"/g)]
    .map((match) => match[1]!)
    .filter((address) => address !== "data:,");
}

describe("GET /graphql with MDQ_EXPLORER=on", () => {
  const suite = useTestRegion({ days: 2, explorer: "on" });

  const page = () =>
    suite.region.inject({ method: "GET", url: "/graphql", headers: { accept: BROWSER_ACCEPT } });

  it("answers a browser's Accept with the GraphiQL page: HTML, not cached, under a strict Content-Security-Policy", async () => {
    const response = await page();
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers["content-type"], "text/html; charset=utf-8");
    assert.equal(response.headers["cache-control"], "no-cache");
    assert.equal(response.headers["x-content-type-options"], "nosniff");
    assert.equal(response.headers["vary"], "accept, accept-encoding");
    assert.equal(response.headers["content-security-policy"], EXPLORER_CONTENT_SECURITY_POLICY);
    assert.equal(
      EXPLORER_CONTENT_SECURITY_POLICY,
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self' data:; " +
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    assert.match(response.body, /<title>MDQ explorer · region uk<\/title>/);
    assert.match(response.body, /<input id="mdq-token" name="token" type="password"/);
  });

  it("loads nothing from another origin, and no inline script but its JSON settings", async () => {
    const html = (await page()).body;
    assert.doesNotMatch(html, /(https?:)?\/\/[a-z]/i);
    const scripts = [...html.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)];
    const inline = scripts.filter(([, , body]) => body !== "");
    assert.deepEqual(
      inline.map(([, attributes]) => attributes),
      [' type="application/json" id="mdq-explorer-settings"'],
    );
  });

  it("serves every asset the page names itself, with a year of immutable caching and the right types", async () => {
    const addresses = assetAddresses((await page()).body);
    assert.deepEqual(
      addresses.map((address) => address.split("/").pop()),
      [
        "graphiql.min.css",
        "explorer.css",
        "react.production.min.js",
        "react-dom.production.min.js",
        "graphiql.min.js",
        "explorer.js",
      ],
    );
    for (const address of addresses) {
      assert.match(address, /^graphql\/explorer\/[0-9a-f]{16}\/[a-z.-]+$/, "relative to the page");
      const response = await suite.region.inject({ method: "GET", url: `/${address}` });
      assert.equal(response.statusCode, 200, address);
      assert.equal(response.headers["cache-control"], "public, max-age=31536000, immutable");
      assert.equal(response.headers["x-content-type-options"], "nosniff");
      const type = address.endsWith(".css") ? "text/css" : "text/javascript";
      assert.equal(response.headers["content-type"], `${type}; charset=utf-8`, address);
      assert.ok(response.rawPayload.length > 0);
      assert.doesNotMatch(response.body, /sourceMappingURL=/, "no map MDQ does not serve");
    }
  });

  it("preloads the daily flow as tabs: readiness, a records page, an aggregate", async () => {
    const html = (await page()).body;
    const settings = JSON.parse(/id="mdq-explorer-settings">([^<]*)</.exec(html)![1]!) as {
      tabs: ExplorerTab[];
    };
    assert.deepEqual(settings, { tabs: dailyFlowTabs(EXAMPLE_BRAND_PLACEHOLDER, suite.region.today) });
    const [readiness, records, totals] = settings.tabs as [ExplorerTab, ExplorerTab, ExplorerTab];
    assert.match(readiness.query, /marketingDataReadiness\(clientId: \$clientId\)/);
    assert.match(records.query, /marketingRecords\(/);
    assert.match(totals.query, /marketingAggregate\(/);
  });

  it("runs each preloaded tab as it stands: no errors for the demo brand", async () => {
    const brand = suite.region.credentials.apps[0]!.brandClientId;
    const token = await suite.region.token();
    for (const tab of dailyFlowTabs(brand, suite.region.today)) {
      const { status, body } = await suite.region.graphql(tab.query, JSON.parse(tab.variables), token);
      assert.equal(status, 200);
      assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    }
  });

  const others: [string, Record<string, string>][] = [
    ["no Accept", {}],
    ["Accept: application/json", { accept: "application/json" }],
    ["Accept: */* (curl)", { accept: "*/*" }],
    ["text/html refused with q=0", { accept: "application/json, text/html;q=0" }],
  ];
  for (const [name, headers] of others) {
    it(`keeps the 405 for a GET with ${name}`, async () => {
      assertMethodNotAllowed(await suite.region.inject({ method: "GET", url: "/graphql", headers }));
    });
  }

  it("keeps the 405 for HEAD, even from a browser", async () => {
    const response = await suite.region.inject({
      method: "HEAD",
      url: "/graphql",
      headers: { accept: BROWSER_ACCEPT },
    });
    assertMethodNotAllowed(response, "HEAD");
  });

  it("answers an asset address of another version with 404", async () => {
    const response = await suite.region.inject({
      method: "GET",
      url: "/graphql/explorer/0000000000000000/explorer.js",
    });
    assert.equal(response.statusCode, 404);
  });
});

describe("GET /graphql with the explorer off (the default)", () => {
  const suite = useTestRegion({ days: 2 });

  it("answers a browser with today's 405, and serves no explorer asset", async () => {
    assert.equal(suite.region.service.config.explorer, false);
    assertMethodNotAllowed(
      await suite.region.inject({ method: "GET", url: "/graphql", headers: { accept: BROWSER_ACCEPT } }),
    );
    const explorer = await startTestRegion({ days: 1, explorer: "on" });
    try {
      const html = (
        await explorer.inject({ method: "GET", url: "/graphql", headers: { accept: BROWSER_ACCEPT } })
      ).body;
      for (const address of assetAddresses(html)) {
        const response = await suite.region.inject({ method: "GET", url: `/${address}` });
        assert.equal(response.statusCode, 404, address);
      }
    } finally {
      await explorer.close();
    }
  });
});

describe("MDQ_EXPLORER", () => {
  it("is off by default, on with on, and names itself for anything else", () => {
    assert.equal(loadConfig({}).explorer, false);
    assert.equal(loadConfig({ MDQ_EXPLORER: "on" }).explorer, true);
    assert.equal(loadConfig({ MDQ_EXPLORER: "off" }).explorer, false);
    for (const value of ["yes", "ON", "1", "true"]) {
      assert.throws(
        () => loadConfig({ MDQ_EXPLORER: value }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.key === "MDQ_EXPLORER" &&
          error.message === `invalid configuration MDQ_EXPLORER: "${value}" is neither on nor off`,
      );
    }
  });
});

describe("MDQ_EXPLORER's documentation", () => {
  it("is a row of docs/configuration.md: default off, on or off", async () => {
    const docs = await readFile(
      fileURLToPath(new URL("../../../../docs/configuration.md", import.meta.url)),
      "utf8",
    );
    assert.match(docs, /^\| `MDQ_EXPLORER` +\| – +\| `off` \(`mdq demo`: `on`\) +\| `on` or `off` +\|/m);
  });
});

describe("acceptsHtml", () => {
  it("is true only when text/html is listed with a q-value above 0", () => {
    assert.equal(acceptsHtml(BROWSER_ACCEPT), true);
    assert.equal(acceptsHtml("TEXT/HTML"), true);
    assert.equal(acceptsHtml("application/json;q=1, text/html ; q=0.5"), true);
    assert.equal(acceptsHtml(undefined), false);
    assert.equal(acceptsHtml("*/*"), false);
    assert.equal(acceptsHtml("text/*"), false);
    assert.equal(acceptsHtml("text/html;q=0"), false);
    assert.equal(acceptsHtml("text/html;q=0.0"), false);
  });
});
