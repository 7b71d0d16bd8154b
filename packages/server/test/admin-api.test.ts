/**
 * The admin API (docs/admin-api.md) through HTTP: the operator listener (`service.adminApp`) and
 * its effect on the public token and GraphQL endpoints (`service.app`). Loads are all or nothing
 * and idempotent (CONTRACT §4); publishing drives readiness (CONTRACT §3 rule 8); secret
 * rotation, revocation and key rotation follow CONTRACT §2.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { startTestRegion, type TestRegion } from "@mdq/test-support";
import type { LightMyRequestResponse } from "fastify";
import { CURRENCY_CODES } from "../src/currencies.js";

const HEADER =
  "record_id,date,market,data_source,channel,campaign_id,campaign_name,impressions,clicks,spend,conversions,revenue,currency";
const GRANTS = { markets: ["DE", "FR", "GB"], dataSources: ["google_ads", "meta_ads"] };
/** Far before the demo data and its FX rates, so that this file's brands and rates stand alone. */
const RANGE = { from: "2020-03-01", to: "2020-03-31" };

const RECORDS = `query Records($c: ID!, $r: DateRangeInput!, $f: MarketingFilterInput, $cur: Currency) {
  marketingRecords(clientId: $c, dateRange: $r, filter: $f, currency: $cur, pagination: {pageSize: 5000}) {
    recordId date market dataSource channel campaignId campaignName impressions clicks spend conversions
    revenue currency
  }
}`;
const READINESS = `query Readiness($c: ID!, $d: Date) {
  marketingDataReadiness(clientId: $c, date: $d) { status date lastProcessedAt availableThrough }
}`;

/** A record as GraphQL returns it in EUR (the loaded files hold EUR amounts with 2 decimals). */
interface Rec {
  recordId: string;
  date: string;
  market: string;
  dataSource: string;
  channel: string;
  campaignId: string;
  campaignName: string;
  impressions: number;
  clicks: number;
  spend: number;
  conversions: number;
  revenue: number;
  currency: string;
}

/** An amount in whole cents as the decimal GraphQL returns (no binary rounding residue). */
function cents(amount: number): number {
  return Number((amount / 100).toFixed(2));
}

/** A deterministic record; `n` varies its numbers so that a changed row is a different row. */
function rec(date: string, market: string, dataSource: string, campaign: string, n = 1): Rec {
  return {
    recordId: `${date}-${market}-${dataSource}-${campaign}`,
    date,
    market,
    dataSource,
    channel: dataSource === "meta_ads" ? "social" : "search",
    campaignId: campaign,
    campaignName: `Campaign ${campaign}, "${market}"`,
    impressions: 1000 * n,
    clicks: 10 * n,
    spend: cents(1234 * n),
    conversions: cents(150 * n),
    revenue: cents(10025 * n),
    currency: "EUR",
  };
}

function csvLine(record: Rec): string {
  const quoted = `"${record.campaignName.replaceAll('"', '""')}"`;
  return [
    record.recordId,
    record.date,
    record.market,
    record.dataSource,
    record.channel,
    record.campaignId,
    quoted,
    record.impressions,
    record.clicks,
    record.spend.toFixed(2),
    record.conversions.toFixed(2),
    record.revenue.toFixed(2),
    record.currency,
  ].join(",");
}

/** Rows for `days` days from 2020-03-01: every (market, source) of the grants, two campaigns each. */
function days(first: number, count: number, n = 1): Rec[] {
  const records: Rec[] = [];
  for (let day = first; day < first + count; day += 1) {
    const date = `2020-03-${String(day).padStart(2, "0")}`;
    for (const market of GRANTS.markets)
      for (const source of GRANTS.dataSources)
        for (const campaign of ["c-1", "c-2"]) records.push(rec(date, market, source, campaign, n));
  }
  return records;
}

function byRecordId(records: Rec[]): Rec[] {
  return [...records].sort((a, b) => (a.recordId < b.recordId ? -1 : a.recordId > b.recordId ? 1 : 0));
}

function json(response: LightMyRequestResponse): unknown {
  return response.body === "" ? undefined : response.json();
}

/** Asserts the status (showing the body when it differs) and returns the parsed body. */
function expectStatus<Body = Record<string, unknown>>(
  response: LightMyRequestResponse,
  status: number,
): Body {
  assert.equal(
    response.statusCode,
    status,
    `expected ${status}, got ${response.statusCode}: ${response.body}`,
  );
  return json(response) as Body;
}

function adminError(code: string, message: string, details?: Record<string, unknown>[]) {
  // Problems count lines unless a case says otherwise (Parquet counts rows).
  const positioned = details?.map((detail) => ({ position: "line", ...detail }));
  return { error: { code, message, ...(positioned === undefined ? {} : { details: positioned }) } };
}

/** The header and claims of a JWT, unverified. */
function decodeJwt(token: string): { header: Record<string, unknown>; claims: Record<string, unknown> } {
  const [header, claims] = token
    .split(".")
    .slice(0, 2)
    .map((part) => JSON.parse(Buffer.from(part, "base64url").toString()));
  return { header, claims };
}

describe("admin API", () => {
  let region: TestRegion;
  let adminToken: string;
  let work: string;

  function admin(method: "GET" | "POST", url: string, body?: unknown, authorization?: string) {
    return region.service.adminApp.inject({
      method,
      url,
      headers: {
        authorization: authorization ?? `Bearer ${adminToken}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  }

  function tokenRequest(appClientId: string, secret: string) {
    return region.tokenResponse(appClientId, secret);
  }

  /** Creates a brand with grants and one app; returns the app and a token of it. */
  async function newBrand(brandId: string, grants: { markets: string[]; dataSources: string[] } = GRANTS) {
    expectStatus(await admin("POST", "/admin/brands", { brandId, name: `Brand ${brandId}` }), 201);
    expectStatus(await admin("POST", "/admin/grants", { brandId, ...grants }), 200);
    const created = expectStatus<{ app: { appClientId: string }; appClientSecret: string }>(
      await admin("POST", "/admin/apps", { brandId, name: `${brandId} reader` }),
      201,
    );
    const appClientId = created.app.appClientId;
    const secret = created.appClientSecret;
    return { brandId, appClientId, secret, token: await region.token(appClientId, secret) };
  }

  async function writeFileIn(name: string, content: string | Buffer): Promise<string> {
    const path = join(work, name);
    await writeFile(path, content);
    return path;
  }

  function writeRecords(name: string, records: Rec[], extraLines: string[] = []): Promise<string> {
    return writeFileIn(name, `${[HEADER, ...records.map(csvLine), ...extraLines].join("\n")}\n`);
  }

  function load(brandId: string, path: string, extra: Record<string, unknown> = {}) {
    return admin("POST", "/admin/loads", { brandId, path, ...extra });
  }

  /** Every record of the brand in RANGE as GraphQL returns it, by record id. */
  async function readAll(brandId: string, token: string): Promise<Rec[]> {
    const response = await region.graphql(RECORDS, { c: brandId, r: RANGE }, token);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.body.errors, undefined);
    return byRecordId(response.body.data?.["marketingRecords"] as Rec[]);
  }

  async function storedRows(brandId: string): Promise<number> {
    const status = expectStatus<{ brands: { brandId: string; rows: number }[] }>(
      await admin("GET", "/admin/status"),
      200,
    );
    return status.brands.find((brand) => brand.brandId === brandId)!.rows;
  }

  before(async () => {
    region = await startTestRegion();
    adminToken = (await readFile(join(region.dataDir, "admin-token"), "utf8")).trim();
    work = await mkdtemp(join(tmpdir(), "mdq-admin-test-"));
  });
  after(async () => {
    await region.close();
    await rm(work, { recursive: true, force: true });
  });

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

  describe("brands", () => {
    it("creates a brand with 201 and lists it", async () => {
      const started = Date.now();
      const body = expectStatus<{ brand: { brandId: string; name: string; createdAt: string } }>(
        await admin("POST", "/admin/brands", { brandId: "brand-new", name: "  New Brand " }),
        201,
      );
      assert.deepEqual(Object.keys(body.brand).sort(), ["brandId", "createdAt", "name"]);
      assert.equal(body.brand.brandId, "brand-new");
      assert.equal(body.brand.name, "New Brand");
      assert.match(body.brand.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.ok(Date.parse(body.brand.createdAt) >= started - 1000);
      const list = expectStatus<{ brands: unknown[] }>(await admin("GET", "/admin/brands"), 200);
      assert.deepEqual(
        list.brands.find((brand) => (brand as { brandId: string }).brandId === "brand-new"),
        body.brand,
      );
    });

    it("derives the brand id from the name when none is given", async () => {
      const body = expectStatus<{ brand: { brandId: string; name: string } }>(
        await admin("POST", "/admin/brands", { name: "Zeta & Sons, Ltd." }),
        201,
      );
      assert.equal(body.brand.brandId, "zeta-sons-ltd");
      assert.equal(body.brand.name, "Zeta & Sons, Ltd.");
    });

    it("refuses an existing brand id with 409 CONFLICT", async () => {
      expectStatus(await admin("POST", "/admin/brands", { brandId: "brand-twice", name: "Twice" }), 201);
      const response = await admin("POST", "/admin/brands", { brandId: "brand-twice", name: "Again" });
      assert.deepEqual(expectStatus(response, 409), adminError("CONFLICT", "brand brand-twice exists"));
    });

    it("refuses a malformed brand id with 400 BAD_INPUT and creates nothing", async () => {
      for (const brandId of ["A-brand", "x", "-dash", "has space", "brand_underscore", "a".repeat(64), 42]) {
        const response = await admin("POST", "/admin/brands", { brandId, name: "Bad" });
        assert.deepEqual(
          expectStatus(response, 400),
          adminError(
            "BAD_INPUT",
            `brandId must match ^[a-z0-9][a-z0-9-]{1,62}$; got ${JSON.stringify(brandId)}`,
          ),
        );
      }
      const list = expectStatus<{ brands: { name: string }[] }>(await admin("GET", "/admin/brands"), 200);
      assert.equal(
        list.brands.some((brand) => brand.name === "Bad"),
        false,
      );
    });

    it("refuses a missing name, or a body that is not a JSON object, with 400 BAD_INPUT", async () => {
      assert.deepEqual(
        expectStatus(await admin("POST", "/admin/brands", { brandId: "no-name" }), 400),
        adminError("BAD_INPUT", "name must be a non-empty string of at most 200 characters"),
      );
      assert.deepEqual(
        expectStatus(await admin("POST", "/admin/brands", ["brand"]), 400),
        adminError("BAD_INPUT", "the body must be a JSON object"),
      );
    });
  });

  describe("apps", () => {
    it("creates an app whose secret works at the token endpoint and never appears in listings", async () => {
      expectStatus(await admin("POST", "/admin/brands", { brandId: "brand-apps", name: "Apps" }), 201);
      const created = expectStatus<{ app: Record<string, unknown>; appClientSecret: string }>(
        await admin("POST", "/admin/apps", {
          brandId: "brand-apps",
          name: "Reporting",
          markets: ["GB", "GB"],
        }),
        201,
      );
      const { app, appClientSecret } = created;
      assert.deepEqual(Object.keys(created).sort(), ["app", "appClientSecret"]);
      assert.deepEqual(Object.keys(app).sort(), [
        "appClientId",
        "brandId",
        "createdAt",
        "dataSources",
        "markets",
        "name",
        "previousSecretExpiresAt",
        "revokedAt",
      ]);
      assert.equal(app["brandId"], "brand-apps");
      assert.equal(app["name"], "Reporting");
      assert.deepEqual(app["markets"], ["GB"]);
      assert.equal(app["dataSources"], null);
      assert.equal(app["revokedAt"], null);
      assert.equal(app["previousSecretExpiresAt"], null);
      // ≥ 256 bits of secret (CONTRACT §2).
      assert.ok(Buffer.from(appClientSecret, "base64url").length >= 32, appClientSecret);

      const token = expectStatus<Record<string, unknown>>(
        await tokenRequest(String(app["appClientId"]), appClientSecret),
        200,
      );
      assert.equal(token["token_type"], "Bearer");
      assert.equal(decodeJwt(String(token["access_token"])).claims["brand"], "brand-apps");

      const listing = await admin("GET", "/admin/apps?brandId=brand-apps");
      assert.deepEqual(expectStatus(listing, 200), { apps: [app] });
      const everything = await admin("GET", "/admin/apps");
      assert.equal(everything.statusCode, 200);
      assert.equal(everything.body.includes(appClientSecret), false);
      assert.doesNotMatch(everything.body, /secret_?hash|secretHash/i);
    });

    it("refuses an app for an unknown brand with 404 and a bad narrowing with 400", async () => {
      assert.deepEqual(
        expectStatus(await admin("POST", "/admin/apps", { brandId: "no-such-brand", name: "X" }), 404),
        adminError("NOT_FOUND", 'no brand "no-such-brand"'),
      );
      assert.deepEqual(
        expectStatus(await admin("GET", "/admin/apps?brandId=no-such-brand"), 404),
        adminError("NOT_FOUND", 'no brand "no-such-brand"'),
      );
      expectStatus(await admin("POST", "/admin/brands", { brandId: "brand-narrow", name: "N" }), 201);
      assert.deepEqual(
        expectStatus(
          await admin("POST", "/admin/apps", { brandId: "brand-narrow", name: "X", markets: ["UK"] }),
          400,
        ),
        adminError("BAD_INPUT", 'markets must be a list of valid codes; got ["UK"]'),
      );
    });
  });

  describe("grants", () => {
    it("adds, lists and removes grants, sorted and without duplicates", async () => {
      expectStatus(await admin("POST", "/admin/brands", { brandId: "brand-grants", name: "G" }), 201);
      assert.deepEqual(expectStatus(await admin("GET", "/admin/grants?brandId=brand-grants"), 200), {
        brandId: "brand-grants",
        markets: [],
        dataSources: [],
      });
      const added = await admin("POST", "/admin/grants", {
        brandId: "brand-grants",
        markets: ["GB", "DE", "GB"],
        dataSources: ["meta_ads", "google_ads"],
      });
      const expected = {
        brandId: "brand-grants",
        markets: ["DE", "GB"],
        dataSources: ["google_ads", "meta_ads"],
      };
      assert.deepEqual(expectStatus(added, 200), expected);
      // Adding what is there changes nothing.
      assert.deepEqual(
        expectStatus(await admin("POST", "/admin/grants", { brandId: "brand-grants", markets: ["DE"] }), 200),
        expected,
      );
      assert.deepEqual(expectStatus(await admin("GET", "/admin/grants?brandId=brand-grants"), 200), expected);
      const removed = await admin("POST", "/admin/grants/remove", {
        brandId: "brand-grants",
        markets: ["DE"],
        dataSources: ["meta_ads"],
      });
      assert.deepEqual(expectStatus(removed, 200), {
        brandId: "brand-grants",
        markets: ["GB"],
        dataSources: ["google_ads"],
      });
    });

    it("refuses a market that is not an ISO 3166-1 code, or an empty change, with 400", async () => {
      expectStatus(await admin("POST", "/admin/brands", { brandId: "brand-grants-bad", name: "G" }), 201);
      assert.deepEqual(
        expectStatus(
          await admin("POST", "/admin/grants", { brandId: "brand-grants-bad", markets: ["GB", "UK"] }),
          400,
        ),
        adminError("BAD_INPUT", 'markets must be a list of valid codes; got ["GB","UK"]'),
      );
      assert.deepEqual(
        expectStatus(await admin("POST", "/admin/grants", { brandId: "brand-grants-bad" }), 400),
        adminError("BAD_INPUT", "name at least one market or data source"),
      );
      assert.deepEqual(expectStatus(await admin("GET", "/admin/grants?brandId=brand-grants-bad"), 200), {
        brandId: "brand-grants-bad",
        markets: [],
        dataSources: [],
      });
    });

    it("a removed market leaves the next unfiltered query, a filter naming it gets 403, and adding it back restores it", async () => {
      const brand = await newBrand("brand-grant-effect");
      const records = days(1, 2);
      expectStatus(await load(brand.brandId, await writeRecords("grant-effect.csv", records)), 200);
      assert.deepEqual(await readAll(brand.brandId, brand.token), byRecordId(records));
      const filtered = await region.graphql(
        RECORDS,
        { c: brand.brandId, r: RANGE, f: { markets: ["FR"] } },
        brand.token,
      );
      assert.equal(filtered.status, 200);

      expectStatus(
        await admin("POST", "/admin/grants/remove", { brandId: brand.brandId, markets: ["FR"] }),
        200,
      );
      // The same token, the next request: no waiting for the app cache (this process cleared it).
      assert.deepEqual(
        await readAll(brand.brandId, brand.token),
        byRecordId(records.filter((record) => record.market !== "FR")),
      );
      const forbidden = await region.graphql(
        RECORDS,
        { c: brand.brandId, r: RANGE, f: { markets: ["FR"] } },
        brand.token,
      );
      assert.equal(forbidden.status, 403);
      assert.deepEqual(
        forbidden.body.errors?.map((error) => error.extensions.code),
        ["FORBIDDEN"],
      );
      assert.equal(forbidden.body.data, null);

      expectStatus(await admin("POST", "/admin/grants", { brandId: brand.brandId, markets: ["FR"] }), 200);
      assert.deepEqual(await readAll(brand.brandId, brand.token), byRecordId(records));
    });
  });

  describe("FX reference rates", () => {
    it("rejects a bad FX file changing nothing, then loads ECB wide rates, which convert amounts that had no rate before", async () => {
      const brand = await newBrand("brand-fx");
      const records = [
        rec("2020-03-02", "GB", "google_ads", "c-1"),
        rec("2020-03-04", "GB", "google_ads", "c-1"),
      ];
      expectStatus(await load(brand.brandId, await writeRecords("fx-records.csv", records)), 200);
      const before = await region.graphql(RECORDS, { c: brand.brandId, r: RANGE, cur: "GBP" }, brand.token);
      assert.equal(before.status, 200);
      assert.deepEqual(
        before.body.errors?.map((error) => error.extensions.code),
        ["UNSUPPORTED_CURRENCY"],
      );

      // The ECB's own layout: every line ends with a comma; N/A is no rate; BGN is retired here.
      const ecb = [
        "Date,USD,JPY,BGN,GBP,",
        "2020-03-03,1.1156,120.33,1.9558,0.86833,",
        "2020-03-02,1.1139,119.63,1.9558,0.86590,",
        "2020-02-28,1.0977,118.9,N/A,0.8575,",
      ].join("\n");
      const path = await writeFileIn("eurofxref-hist.csv", `${ecb}\n`);
      assert.deepEqual(
        expectStatus(await admin("POST", "/admin/fx", { path }), 422),
        adminError("INVALID_FILE", `1 problem(s) in ${path}; nothing was changed`, [
          { line: 1, column: "BGN", message: '"BGN" is not a supported currency' },
        ]),
      );
      // Good GBP rates beside one bad USD rate: all or nothing, so GBP still has no rate.
      const badRate = await writeFileIn(
        "bad-rate.csv",
        "Date,USD,GBP,\n2020-03-03,1.1156,0.86833,\n2020-03-02,1.1.1,0.86590,\n",
      );
      assert.deepEqual(
        expectStatus(await admin("POST", "/admin/fx", { path: badRate }), 422),
        adminError("INVALID_FILE", `1 problem(s) in ${badRate}; nothing was changed`, [
          {
            line: 3,
            column: "USD",
            message: '"1.1.1" is not a positive decimal (units per 1 EUR, at most 6 decimal places)',
          },
        ]),
      );
      assert.equal(
        (await region.graphql(RECORDS, { c: brand.brandId, r: RANGE, cur: "GBP" }, brand.token)).body
          .errors?.[0]?.extensions.code,
        "UNSUPPORTED_CURRENCY",
      );

      const loaded = await admin("POST", "/admin/fx", { path, ignoreUnknownCurrencies: true });
      assert.deepEqual(expectStatus(loaded, 200), {
        rates: 9,
        currencies: ["GBP", "JPY", "USD"],
        ignoredCurrencies: ["BGN"],
        from: "2020-02-28",
        to: "2020-03-03",
      });
      const after = await region.graphql(RECORDS, { c: brand.brandId, r: RANGE, cur: "GBP" }, brand.token);
      assert.equal(after.status, 200);
      assert.equal(after.body.errors, undefined);
      const rows = after.body.data?.["marketingRecords"] as Rec[];
      // 2020-03-04 has no rate of its own: the latest earlier one (2020-03-03) converts it.
      assert.deepEqual(rows.map((row) => [row.date, row.spend, row.revenue, row.currency]).sort(), [
        ["2020-03-02", 10.69, 86.81, "GBP"],
        ["2020-03-04", 10.72, 87.05, "GBP"],
      ]);
    });

    it("refuses a relative FX path with 400 BAD_INPUT", async () => {
      assert.deepEqual(
        expectStatus(await admin("POST", "/admin/fx", { path: "rates.csv" }), 400),
        adminError("BAD_INPUT", "path must be an absolute path of a file on the service's machine"),
      );
    });
  });

  describe("loads", () => {
    let brand: Awaited<ReturnType<typeof newBrand>>;
    /** What the brand holds after the first load: days 1–3. */
    const initial = days(1, 3);

    before(async () => {
      brand = await newBrand("brand-loads");
      expectStatus(await load(brand.brandId, await writeRecords("initial.csv", initial)), 200);
    });

    it("answers a load with its summary, and GraphQL then returns exactly the loaded rows", async () => {
      const fresh = await newBrand("brand-first-load");
      const records = days(5, 2);
      const path = await writeRecords("first-load.csv", records);
      const body = expectStatus<Record<string, unknown>>(
        await load(fresh.brandId, path, { processingDate: "2020-03-07" }),
        200,
      );
      assert.match(String(body["loadId"]), /^load_[0-9a-f]{16}$/);
      assert.deepEqual(
        { ...body, loadId: "" },
        { loadId: "", rows: 24, days: 2, from: "2020-03-05", to: "2020-03-06", processingDate: "2020-03-07" },
      );
      assert.deepEqual(await readAll(fresh.brandId, fresh.token), byRecordId(records));
      assert.equal(await storedRows(fresh.brandId), 24);
    });

    it("reloading the same file leaves exactly the same rows, not doubled (idempotent)", async () => {
      const path = await writeRecords("reload.csv", initial);
      const first = await readAll(brand.brandId, brand.token);
      assert.deepEqual(first, byRecordId(initial));
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const body = expectStatus<{ rows: number; days: number }>(await load(brand.brandId, path), 200);
        assert.equal(body.rows, initial.length);
        assert.deepEqual(await readAll(brand.brandId, brand.token), first);
        assert.equal(await storedRows(brand.brandId), initial.length);
      }
    });

    it("reloading one day with fewer, changed rows replaces that day exactly and leaves the other days alone", async () => {
      const before = await readAll(brand.brandId, brand.token);
      const dayTwo = [
        rec("2020-03-02", "DE", "meta_ads", "c-9", 7),
        rec("2020-03-02", "GB", "google_ads", "c-1", 3),
      ];
      const body = expectStatus<Record<string, unknown>>(
        await load(brand.brandId, await writeRecords("day-two.csv", dayTwo)),
        200,
      );
      assert.deepEqual(
        { rows: body["rows"], days: body["days"], from: body["from"], to: body["to"] },
        { rows: 2, days: 1, from: "2020-03-02", to: "2020-03-02" },
      );
      try {
        const expected = byRecordId([...before.filter((record) => record.date !== "2020-03-02"), ...dayTwo]);
        assert.deepEqual(await readAll(brand.brandId, brand.token), expected);
        assert.equal(await storedRows(brand.brandId), expected.length);
      } finally {
        // Back to the initial state for the other tests.
        expectStatus(await load(brand.brandId, await writeRecords("restore.csv", initial)), 200);
      }
      assert.deepEqual(await readAll(brand.brandId, brand.token), byRecordId(initial));
    });

    /** Good rows that would change the brand's data (a changed day 1 and a new day 4), then `bad`. */
    const changes = [...days(1, 1, 5), ...days(4, 1, 5)];
    const goodLines = changes.map(csvLine);
    const line = (fields: Partial<Record<string, string>>) => {
      const base: Record<string, string> = {
        record_id: "bad-1",
        date: "2020-03-04",
        market: "GB",
        data_source: "google_ads",
        channel: "search",
        campaign_id: "c-bad",
        campaign_name: "Bad row",
        impressions: "10",
        clicks: "1",
        spend: "1.00",
        conversions: "0",
        revenue: "2.00",
        currency: "EUR",
      };
      return HEADER.split(",")
        .map((column) => fields[column] ?? base[column])
        .join(",");
    };
    const csv = (...bad: string[]) => [HEADER, ...goodLines, ...bad].join("\n");
    /** The line of the first bad row: the header, then the good rows. */
    const firstBad = goodLines.length + 2;

    const cases: {
      name: string;
      file: string;
      content: () => Promise<string | Buffer> | string | Buffer;
      details: Record<string, unknown>[];
      extra?: Record<string, unknown>;
    }[] = [
      {
        name: "a market that is not an ISO 3166-1 code (UK)",
        file: "market.csv",
        content: () => csv(line({ market: "UK" })),
        details: [
          {
            line: firstBad,
            column: "market",
            message: '"UK" is not an ISO 3166-1 alpha-2 country code (upper case, e.g. "GB")',
          },
        ],
      },
      {
        name: "a day that does not exist (2020-02-30)",
        file: "date.csv",
        content: () => csv(line({ date: "2020-02-30" })),
        details: [
          {
            line: firstBad,
            column: "date",
            message: '"2020-02-30" is not a calendar day written YYYY-MM-DD',
          },
        ],
      },
      {
        name: "a data source that is not a lower-case id",
        file: "source.csv",
        content: () => csv(line({ data_source: "Google Ads" })),
        details: [
          {
            line: firstBad,
            column: "data_source",
            message:
              '"Google Ads" is not a data source id: lower-case letters, digits, "_", "." and "-", starting with a letter or digit, at most 64 characters',
          },
        ],
      },
      {
        name: "a negative count and a fractional count",
        file: "counts.csv",
        content: () =>
          csv(
            line({ impressions: "-5" }),
            line({ record_id: "bad-2", campaign_id: "c-bad-2", clicks: "1.5" }),
          ),
        details: [
          { line: firstBad, column: "impressions", message: '"-5" is negative' },
          { line: firstBad + 1, column: "clicks", message: '"1.5" is not a whole number' },
        ],
      },
      {
        name: "a spend with more than 4 decimal places",
        file: "spend.csv",
        content: () => csv(line({ spend: "12.34567" })),
        details: [{ line: firstBad, column: "spend", message: '"12.34567" has more than 4 decimal places' }],
      },
      {
        name: "a currency MDQ holds no rates for",
        file: "currency.csv",
        content: () => csv(line({ currency: "XYZ" })),
        details: [
          {
            line: firstBad,
            column: "currency",
            message: `"XYZ" is not a supported currency (${CURRENCY_CODES.join(", ")})`,
          },
        ],
      },
      {
        name: "a missing value",
        file: "missing-value.csv",
        content: () => csv(line({ campaign_name: "" })),
        details: [{ line: firstBad, column: "campaign_name", message: "missing value" }],
      },
      {
        name: "a control character in a text value",
        file: "control.csv",
        content: () => csv(line({ campaign_name: "Bell\u0007" })),
        details: [
          { line: firstBad, column: "campaign_name", message: "contains a control character (U+0007)" },
        ],
      },
      {
        name: "a missing required column (line 1)",
        file: "no-spend.csv",
        content: () => [HEADER.replace(",spend", ""), line({}).replace(",1.00,", ",")].join("\n"),
        details: [{ line: 1, column: "spend", message: 'missing column "spend"' }],
      },
      {
        name: "a row with the wrong number of fields",
        file: "fields.csv",
        content: () => csv(line({}).replace(/,EUR$/, "")),
        details: [{ line: firstBad, message: "expected 13 fields, found 12" }],
      },
      {
        name: "a quoted field that is not closed",
        file: "quote.csv",
        content: () =>
          csv(line({ campaign_name: '"Open quote' }), line({ record_id: "bad-2", campaign_id: "c-2" })),
        details: [
          {
            line: firstBad,
            message: 'a quoted field is not closed properly (a double quote inside a field is written "")',
          },
        ],
      },
      {
        name: "a quoted field that is not closed, before a line with a quoted field",
        file: "quote-then-quoted.csv",
        content: () =>
          csv(
            line({ campaign_name: '"Open quote' }),
            line({ record_id: "bad-2", campaign_id: "c-2", campaign_name: '"Quoted, ""x"""' }),
          ),
        details: [
          {
            line: firstBad,
            message: 'a quoted field is not closed properly (a double quote inside a field is written "")',
          },
        ],
      },
      {
        name: "text that is not UTF-8",
        file: "latin1.csv",
        content: () =>
          Buffer.concat([
            Buffer.from(`${csv()}\n`),
            Buffer.from(`${line({ campaign_name: "Caf\u00e9" })}\n`, "latin1"),
          ]),
        details: [{ line: firstBad, message: "not valid UTF-8 (save the file as UTF-8)" }],
      },
      {
        name: "a duplicate natural key, naming the first occurrence",
        file: "duplicate-key.csv",
        content: () =>
          csv(line({ record_id: "bad-dup", campaign_id: "c-1", date: "2020-03-01", market: "DE" })),
        details: [
          {
            line: firstBad,
            message: `duplicate (date, market, data_source, campaign_id) = ("2020-03-01", "DE", "google_ads", "c-1"), first on line 2`,
          },
        ],
      },
      {
        name: "a duplicate record id, naming the first occurrence",
        file: "duplicate-id.csv",
        content: () => csv(line({ record_id: changes[0]!.recordId })),
        details: [
          {
            line: firstBad,
            column: "record_id",
            message: `duplicate record_id "${changes[0]!.recordId}", first on line 2`,
          },
        ],
      },
      {
        name: "more than 20 problems (the first 20 are reported, all are counted)",
        file: "many.csv",
        content: () =>
          csv(
            ...Array.from({ length: 25 }, (_, index) =>
              line({ record_id: `bad-${index}`, campaign_id: `c-bad-${index}`, market: "EU" }),
            ),
          ),
        details: Array.from({ length: 20 }, (_, index) => ({
          line: firstBad + index,
          column: "market",
          message: '"EU" is not an ISO 3166-1 alpha-2 country code (upper case, e.g. "GB")',
        })),
      },
      {
        name: "an empty file",
        file: "empty.csv",
        content: () => "",
        details: [{ line: 0, message: "the file is empty" }],
      },
      {
        name: "a header and no records",
        file: "header-only.csv",
        content: () => `${HEADER}\n`,
        details: [{ line: 0, message: "the file holds no records" }],
      },
      {
        name: "a file name whose format is unknown",
        file: "records.txt",
        content: () => csv(),
        details: [
          {
            line: 0,
            message:
              "cannot tell the format from the file name: use .csv, .ndjson, .jsonl or .parquet, or give the format",
          },
        ],
      },
      {
        name: "an NDJSON line that is not an object",
        file: "records.ndjson",
        content: () =>
          [
            ...changes.map((record) =>
              JSON.stringify({
                record_id: record.recordId,
                date: record.date,
                market: record.market,
                data_source: record.dataSource,
                channel: record.channel,
                campaign_id: record.campaignId,
                campaign_name: record.campaignName,
                impressions: record.impressions,
                clicks: record.clicks,
                spend: record.spend.toFixed(2),
                conversions: record.conversions.toFixed(2),
                revenue: record.revenue.toFixed(2),
                currency: record.currency,
              }),
            ),
            "[1, 2, 3]",
          ].join("\n"),
        details: [{ line: changes.length + 1, message: "the line is not a JSON object" }],
      },
      {
        name: "a Parquet row with a bad market (numbered by row)",
        file: "records.parquet",
        content: async () => {
          const source = await writeFileIn("parquet-source.csv", csv(line({ market: "XK" })));
          const target = join(work, "records.parquet");
          const instance = await DuckDBInstance.create(":memory:");
          const connection = await instance.connect();
          await connection.run(
            `COPY (SELECT * FROM read_csv('${source}', all_varchar = true)) TO '${target}' (FORMAT parquet)`,
          );
          connection.closeSync();
          instance.closeSync();
          return readFile(target);
        },
        details: [
          {
            position: "row",
            line: changes.length + 1,
            column: "market",
            message: '"XK" is not an ISO 3166-1 alpha-2 country code (upper case, e.g. "GB")',
          },
        ],
      },
      {
        name: "a mapping key that is not a canonical column",
        file: "mapped.csv",
        content: () => csv(),
        extra: { mapping: { cost: "spend" } },
        details: [{ line: 0, message: 'the mapping names "cost", which is not a column of the layout' }],
      },
    ];

    for (const badFile of cases) {
      it(`rejects ${badFile.name} with 422 INVALID_FILE and line numbers, and changes nothing`, async () => {
        const before = await readAll(brand.brandId, brand.token);
        const rows = await storedRows(brand.brandId);
        assert.ok(before.some((record) => record.date === "2020-03-01"));
        const path = await writeFileIn(badFile.file, await badFile.content());
        const response = await load(brand.brandId, path, badFile.extra);
        const count = badFile.details.length === 20 ? 25 : badFile.details.length;
        assert.deepEqual(
          expectStatus(response, 422),
          adminError("INVALID_FILE", `${count} problem(s) in ${path}; nothing was changed`, badFile.details),
        );
        assert.deepEqual(await readAll(brand.brandId, brand.token), before);
        assert.equal(await storedRows(brand.brandId), rows);
      });
    }

    it("rejects a missing file with 422 INVALID_FILE on line 0, and changes nothing", async () => {
      const path = join(work, "does-not-exist.csv");
      assert.deepEqual(
        expectStatus(await load(brand.brandId, path), 422),
        adminError("INVALID_FILE", `1 problem(s) in ${path}; nothing was changed`, [
          { line: 0, message: `no such file: ${path}` },
        ]),
      );
      assert.deepEqual(await readAll(brand.brandId, brand.token), byRecordId(initial));
    });

    it("rejects a record id already used on a day the load leaves alone, and changes nothing", async () => {
      const clash = { ...rec("2020-03-05", "GB", "google_ads", "c-7"), recordId: initial[0]!.recordId };
      const path = await writeRecords("clash.csv", [...days(2, 1, 9), clash]);
      assert.deepEqual(
        expectStatus(await load(brand.brandId, path), 422),
        adminError(
          "INVALID_FILE",
          `record_id already used on a day this load does not replace: ${clash.recordId} (2020-03-01); nothing was changed`,
          [
            {
              line: 0,
              column: "record_id",
              message: `${clash.recordId} is already the id of a record on 2020-03-01, which this load does not replace`,
            },
          ],
        ),
      );
      assert.deepEqual(await readAll(brand.brandId, brand.token), byRecordId(initial));
    });

    it("refuses a relative path, an unknown brand, a bad format or a bad processingDate without loading", async () => {
      const path = await writeRecords("valid.csv", days(9, 1));
      const refusals: [Record<string, unknown>, number, ReturnType<typeof adminError>][] = [
        [
          { brandId: brand.brandId, path: "valid.csv" },
          400,
          adminError("BAD_INPUT", "path must be an absolute path of a file on the service's machine"),
        ],
        [{ brandId: "no-such-brand", path }, 404, adminError("NOT_FOUND", 'no brand "no-such-brand"')],
        [
          { brandId: brand.brandId, path, format: "xlsx" },
          400,
          adminError("BAD_INPUT", "format must be csv, ndjson or parquet"),
        ],
        [
          { brandId: brand.brandId, path, processingDate: "2020-02-30" },
          400,
          adminError("BAD_INPUT", 'processingDate must be a real day written YYYY-MM-DD; got "2020-02-30"'),
        ],
      ];
      for (const [body, status, error] of refusals) {
        assert.deepEqual(expectStatus(await admin("POST", "/admin/loads", body), status), error);
      }
      assert.deepEqual(await readAll(brand.brandId, brand.token), byRecordId(initial));
    });
  });

  describe("publishes and readiness", () => {
    it("refuses to publish a processing date with no load of that date with 409, and readiness stays NOT_READY", async () => {
      const brand = await newBrand("brand-publish-early");
      const refused = await admin("POST", "/admin/publishes", {
        brandId: brand.brandId,
        processingDate: "2020-03-10",
      });
      assert.deepEqual(
        expectStatus(refused, 409),
        adminError(
          "CONFLICT",
          "no load for processing date 2020-03-10 of brand-publish-early; run mdq load first",
        ),
      );
      // A load of another processing date does not make this one publishable.
      expectStatus(
        await load(brand.brandId, await writeRecords("early.csv", days(1, 1)), {
          processingDate: "2020-03-09",
        }),
        200,
      );
      assert.equal(
        (await admin("POST", "/admin/publishes", { brandId: brand.brandId, processingDate: "2020-03-10" }))
          .statusCode,
        409,
      );
      const readiness = await region.graphql(READINESS, { c: brand.brandId, d: "2020-03-10" }, brand.token);
      assert.deepEqual(readiness.body, {
        data: {
          marketingDataReadiness: {
            status: "NOT_READY",
            date: "2020-03-10",
            lastProcessedAt: null,
            availableThrough: "2020-03-01",
          },
        },
      });
    });

    it("publishing after a load turns readiness READY and moves lastProcessedAt and availableThrough", async () => {
      const brand = await newBrand("brand-publish");
      expectStatus(
        await load(brand.brandId, await writeRecords("p1.csv", days(1, 3)), { processingDate: "2020-03-04" }),
        200,
      );
      const first = expectStatus<{ brandId: string; processingDate: string; publishedAt: string }>(
        await admin("POST", "/admin/publishes", { brandId: brand.brandId, processingDate: "2020-03-04" }),
        200,
      );
      assert.deepEqual(Object.keys(first).sort(), ["brandId", "processingDate", "publishedAt"]);
      assert.equal(first.brandId, brand.brandId);
      assert.equal(first.processingDate, "2020-03-04");
      assert.deepEqual(
        (await region.graphql(READINESS, { c: brand.brandId, d: "2020-03-04" }, brand.token)).body,
        {
          data: {
            marketingDataReadiness: {
              status: "READY",
              date: "2020-03-04",
              lastProcessedAt: first.publishedAt,
              availableThrough: "2020-03-03",
            },
          },
        },
      );

      await new Promise((resolve) => setTimeout(resolve, 5));
      expectStatus(
        await load(brand.brandId, await writeRecords("p2.csv", days(4, 1)), { processingDate: "2020-03-05" }),
        200,
      );
      const before = await region.graphql(READINESS, { c: brand.brandId, d: "2020-03-05" }, brand.token);
      assert.deepEqual(before.body.data?.["marketingDataReadiness"], {
        status: "NOT_READY",
        date: "2020-03-05",
        lastProcessedAt: first.publishedAt,
        availableThrough: "2020-03-04",
      });
      const second = expectStatus<{ publishedAt: string }>(
        await admin("POST", "/admin/publishes", { brandId: brand.brandId, processingDate: "2020-03-05" }),
        200,
      );
      assert.ok(Date.parse(second.publishedAt) > Date.parse(first.publishedAt));
      assert.deepEqual(
        (await region.graphql(READINESS, { c: brand.brandId, d: "2020-03-05" }, brand.token)).body,
        {
          data: {
            marketingDataReadiness: {
              status: "READY",
              date: "2020-03-05",
              lastProcessedAt: second.publishedAt,
              availableThrough: "2020-03-04",
            },
          },
        },
      );
    });

    it("publishes today by default, after a load of today's processing date", async () => {
      const brand = await newBrand("brand-publish-today");
      expectStatus(await load(brand.brandId, await writeRecords("today.csv", days(1, 1))), 200);
      const published = expectStatus<{ processingDate: string; publishedAt: string }>(
        await admin("POST", "/admin/publishes", { brandId: brand.brandId }),
        200,
      );
      assert.equal(published.processingDate, region.today);
      const readiness = await region.graphql(READINESS, { c: brand.brandId }, brand.token);
      assert.deepEqual(readiness.body.data?.["marketingDataReadiness"], {
        status: "READY",
        date: region.today,
        lastProcessedAt: published.publishedAt,
        availableThrough: "2020-03-01",
      });
    });
  });

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

  describe("status", () => {
    it("lists each brand with grants, app counts, rows, day span, last publish and readyToday", async () => {
      const brand = await newBrand("brand-status");
      const second = expectStatus<{ app: { appClientId: string } }>(
        await admin("POST", "/admin/apps", { brandId: brand.brandId, name: "second" }),
        201,
      );
      expectStatus(await admin("POST", `/admin/apps/${second.app.appClientId}/revoke`), 200);
      expectStatus(
        await admin("POST", "/admin/brands", { brandId: "brand-status-empty", name: "Empty" }),
        201,
      );
      expectStatus(await load(brand.brandId, await writeRecords("status.csv", days(2, 3))), 200);
      const published = expectStatus<{ publishedAt: string }>(
        await admin("POST", "/admin/publishes", { brandId: brand.brandId }),
        200,
      );

      const status = expectStatus<{ region: string; today: string; brands: { brandId: string }[] }>(
        await admin("GET", "/admin/status"),
        200,
      );
      assert.equal(status.region, "uk");
      assert.equal(status.today, region.today);
      assert.deepEqual(
        status.brands.find((entry) => entry.brandId === brand.brandId),
        {
          brandId: "brand-status",
          name: "Brand brand-status",
          grants: GRANTS,
          apps: 2,
          activeApps: 1,
          rows: 36,
          firstDay: "2020-03-02",
          lastDay: "2020-03-04",
          lastPublishedAt: published.publishedAt,
          lastPublishedDate: region.today,
          readyToday: true,
        },
      );
      assert.deepEqual(
        status.brands.find((entry) => entry.brandId === "brand-status-empty"),
        {
          brandId: "brand-status-empty",
          name: "Empty",
          grants: { markets: [], dataSources: [] },
          apps: 0,
          activeApps: 0,
          rows: 0,
          firstDay: null,
          lastDay: null,
          lastPublishedAt: null,
          lastPublishedDate: null,
          readyToday: false,
        },
      );
      // The demo brands, seeded and published today, are listed too, in brand id order.
      const ids = status.brands.map((entry) => entry.brandId);
      assert.deepEqual(ids, [...ids].sort());
      for (const app of region.credentials.apps) assert.ok(ids.includes(app.brandClientId));
    });
  });
});
