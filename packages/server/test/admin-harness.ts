/**
 * The admin API tests' region and helpers: one seeded region per test file (Node's runner gives
 * each file its own process), reached through the operator listener (`service.adminApp`), with
 * deterministic records written to CSV files and read back through GraphQL.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import type { MarketingRecord } from "@mdq/contract";
import { startTestRegion, type TestRegion } from "@mdq/test-support";
import type { LightMyRequestResponse } from "fastify";
import type { Service } from "../src/server.js";

export const HEADER =
  "record_id,date,market,data_source,channel,campaign_id,campaign_name,impressions,clicks,spend,conversions,revenue,currency";
export const GRANTS = { markets: ["DE", "FR", "GB"], dataSources: ["google_ads", "meta_ads"] };
/** Far before the demo data and its FX rates, so that this file's brands and rates stand alone. */
export const RANGE = { from: "2020-03-01", to: "2020-03-31" };

export const RECORDS = `query Records($c: ID!, $r: DateRangeInput!, $f: MarketingFilterInput, $cur: Currency) {
  marketingRecords(clientId: $c, dateRange: $r, filter: $f, currency: $cur, pagination: {pageSize: 5000}) {
    recordId date market dataSource channel campaignId campaignName impressions clicks spend conversions
    revenue currency
  }
}`;
export const READINESS = `query Readiness($c: ID!, $d: Date) {
  marketingDataReadiness(clientId: $c, date: $d) { status date lastProcessedAt availableThrough }
}`;

/** A record as GraphQL returns it in EUR (the loaded files hold EUR amounts with 2 decimals). */
export type Rec = MarketingRecord;

/** An amount in whole cents as the decimal GraphQL returns (no binary rounding residue). */
export function cents(amount: number): number {
  return Number((amount / 100).toFixed(2));
}

/** A deterministic record; `n` varies its numbers so that a changed row is a different row. */
export function rec(date: string, market: string, dataSource: string, campaign: string, n = 1): Rec {
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

export function csvLine(record: Rec): string {
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
export function days(first: number, count: number, n = 1): Rec[] {
  const records: Rec[] = [];
  for (let day = first; day < first + count; day += 1) {
    const date = `2020-03-${String(day).padStart(2, "0")}`;
    for (const market of GRANTS.markets)
      for (const source of GRANTS.dataSources)
        for (const campaign of ["c-1", "c-2"]) records.push(rec(date, market, source, campaign, n));
  }
  return records;
}

export function byRecordId(records: Rec[]): Rec[] {
  return [...records].sort((a, b) => (a.recordId < b.recordId ? -1 : a.recordId > b.recordId ? 1 : 0));
}

export function json(response: LightMyRequestResponse): unknown {
  return response.body === "" ? undefined : response.json();
}

/** Asserts the status (showing the body when it differs) and returns the parsed body. */
export function expectStatus<Body = Record<string, unknown>>(
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

export function adminError(code: string, message: string, details?: Record<string, unknown>[]) {
  // Problems count lines unless a case says otherwise (Parquet counts rows).
  const positioned = details?.map((detail) => ({ position: "line", ...detail }));
  return { error: { code, message, ...(positioned === undefined ? {} : { details: positioned }) } };
}

/** The header and claims of a JWT, unverified. */
export function decodeJwt(token: string): {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
} {
  const [header, claims] = token
    .split(".")
    .slice(0, 2)
    .map((part) => JSON.parse(Buffer.from(part, "base64url").toString()));
  return { header, claims };
}

/** The region of the current test file, set by `useAdminRegion`'s before hook. */
export let region: TestRegion;
/** The region's admin token (read from its data directory, as `mdq` does). */
export let adminToken: string;
/** A temporary directory for the files a test loads. */
export let work: string;

/** Starts the region before the enclosing `describe` and removes it after. */
export function useAdminRegion(): void {
  before(async () => {
    region = await startTestRegion();
    adminToken = (await readFile(join(region.dataDir, "admin-token"), "utf8")).trim();
    work = await mkdtemp(join(tmpdir(), "mdq-admin-test-"));
  });
  after(async () => {
    await region.close();
    await rm(work, { recursive: true, force: true });
  });
}

/** Calls `service`'s admin API as `authorization` says, a JSON body when there is one. */
export function adminInject(
  service: Service,
  authorization: string,
  method: "GET" | "POST",
  url: string,
  body?: unknown,
) {
  return service.adminApp.inject({
    method,
    url,
    headers: {
      authorization,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

export function admin(method: "GET" | "POST", url: string, body?: unknown, authorization?: string) {
  return adminInject(region.service, authorization ?? `Bearer ${adminToken}`, method, url, body);
}

export function tokenRequest(appClientId: string, secret: string) {
  return region.tokenResponse(appClientId, secret);
}

/** Creates a brand with grants and one app; returns the app and a token of it. */
export async function newBrand(
  brandId: string,
  grants: { markets: string[]; dataSources: string[] } = GRANTS,
) {
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

/** `marketingDataReadiness` of `brand` as its own app asks it, for `date` (default: today). */
export function readinessOf(brand: { brandId: string; token: string }, date?: string) {
  return region.graphql(
    READINESS,
    date === undefined ? { c: brand.brandId } : { c: brand.brandId, d: date },
    brand.token,
  );
}

export async function writeFileIn(name: string, content: string | Buffer): Promise<string> {
  const path = join(work, name);
  await writeFile(path, content);
  return path;
}

export function writeRecords(name: string, records: Rec[], extraLines: string[] = []): Promise<string> {
  return writeFileIn(name, `${[HEADER, ...records.map(csvLine), ...extraLines].join("\n")}\n`);
}

export function load(brandId: string, path: string, extra: Record<string, unknown> = {}) {
  return admin("POST", "/admin/loads", { brandId, path, ...extra });
}

/** Every record of the brand in RANGE as GraphQL returns it, by record id. */
export async function readAll(brandId: string, token: string): Promise<Rec[]> {
  const response = await region.graphql(RECORDS, { c: brandId, r: RANGE }, token);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  assert.equal(response.body.errors, undefined);
  return byRecordId(response.body.data?.["marketingRecords"] as Rec[]);
}

export async function storedRows(brandId: string): Promise<number> {
  const status = expectStatus<{ brands: { brandId: string; rows: number }[] }>(
    await admin("GET", "/admin/status"),
    200,
  );
  return status.brands.find((brand) => brand.brandId === brandId)!.rows;
}
