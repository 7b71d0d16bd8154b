/**
 * Both storage engines return identical answers (CONTRACT §3 rule 7: "Both storage engines return
 * identical numbers"): the same demo region is seeded into a DuckDB store and a PostgreSQL store,
 * a service is built on each, and a few hundred seeded-random GraphQL requests — records and
 * aggregates in every Currency, every dimension and grouping, sorts, filters, pages (also past
 * the end), ranges reaching days without FX rates, filters outside the grants — must get
 * byte-identical response bodies and statuses from both, through HTTP with real tokens.
 *
 * Readiness is compared without `lastProcessedAt` (each seeding publishes at its own instant).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createMigratedDatabase, mulberry32, requestToken, type TestDatabase } from "@mdq/test-support";
import { addDays } from "../src/calendar.js";
import { loadConfig } from "../src/config.js";
import { CURRENCY_CODES } from "../src/currencies.js";
import { planDemo } from "../src/demo/demo-data.js";
import { type DemoCredentials, seedDemoRegion } from "../src/demo/demo-seed.js";
import { buildService, type Service } from "../src/server.js";
import { openDuckDbStore } from "../src/store/duckdb/duckdb-store.js";
import { DIMENSIONS, METRICS, RECORD_FIELDS, RECORD_SORT_FIELDS } from "../src/store/model/query-request.js";
import type { Store, StoredRecord } from "../src/store/model/store.js";
import { openPostgresStore } from "../src/store/postgres/postgres-store.js";

const TODAY = "2025-06-01";
const DAYS = 120;
const QUERIES = 300;
const SEED = 20_250_601;
const CHANNELS = ["search", "social", "display", "video", "shopping", "audio"];

interface Engine {
  name: string;
  store: Store;
  service: Service;
  credentials: DemoCredentials;
  tokens: Map<string, string>;
  dataDir: string;
}

/** Records on the three days before the demo's FX history starts: their money has no rate. */
function recordsWithoutRates(firstFxDay: string): StoredRecord[] {
  return [1, 2, 3].flatMap((back) => {
    const date = addDays(firstFxDay, -back);
    return (["GB", "DE", "US"] as const).map((market, index) => ({
      recordId: `acme-nofx-${date}-${market}`,
      date,
      market,
      dataSource: "google_ads",
      channel: "search",
      campaignId: `cmp-acme-nofx-${index}`,
      campaignName: `No FX ${market}`,
      impressions: 1_000 * back + index,
      clicks: 10 * back,
      spendE4: 123_456n * BigInt(back),
      conversionsE4: 15_000n,
      revenueE4: 234_567n,
      currency: ({ GB: "GBP", DE: "EUR", US: "USD" } as const)[market],
    }));
  });
}

async function startEngine(name: string, store: Store): Promise<Engine> {
  const dataDir = await mkdtemp(join(tmpdir(), `mdq-differential-${name}-`));
  const config = loadConfig(
    {},
    {
      region: "uk",
      authUrl: "http://uk.auth.test",
      baseUrl: "http://uk.api.test",
      rateLimitMax: 1_000_000,
      logLevel: "silent",
      dataDir,
    },
  );
  const credentials = await seedDemoRegion(store, {
    region: config.region,
    authUrl: config.authUrl,
    baseUrl: config.baseUrl,
    today: TODAY,
    days: DAYS,
  });
  const firstFxDay = planDemo({ today: TODAY, days: DAYS }).fxRates[0]!.date;
  await store.replaceRecords("brand-acme", recordsWithoutRates(firstFxDay), {
    processingDate: TODAY,
    source: "differential test",
  });
  const service = await buildService(config, {
    store,
    keyRefreshSeconds: 0,
  });
  const tokens = new Map<string, string>();
  for (const app of credentials.apps) {
    const response = await requestToken(service, app);
    assert.equal(response.statusCode, 200, response.body);
    tokens.set(app.appClientId, response.json().access_token);
  }
  return { name, store, service, credentials, tokens, dataDir };
}

interface Request {
  appClientId: string;
  query: string;
  variables: Record<string, unknown>;
}

/**
 * The same request with every selected field aliased to itself: an alias makes a selection
 * not plain (graphql/selection.ts `plainSelection`), so its page is answered as row objects that
 * GraphQL execution serialises (graphql/records-json.ts), and the response's bytes are the same.
 */
function aliased(request: Request): Request {
  return {
    ...request,
    query: request.query.replace(/\{ ([a-zA-Z ]+) \}\s*\}$/, (_all, fields: string) => {
      return `{ ${fields
        .split(" ")
        .map((field) => `${field}: ${field}`)
        .join(" ")} }\n}`;
    }),
  };
}

/** The same request with its selection in a fragment: not plain either, the same bytes. */
function inFragment(request: Request): Request {
  let selected = "";
  const query = request.query.replace(/\{ ([a-zA-Z ]+) \}\s*\}$/, (_all, fields: string) => {
    selected = fields;
    return "{ ...Fields }\n}";
  });
  return { ...request, query: `${query}\nfragment Fields on MarketingRecord { ${selected} }` };
}

async function ask(engine: Engine, request: Request): Promise<{ status: number; body: string }> {
  const response = await engine.service.app.inject({
    method: "POST",
    url: "/graphql",
    headers: {
      authorization: `Bearer ${engine.tokens.get(request.appClientId)}`,
      "content-type": "application/json",
    },
    payload: JSON.stringify({ query: request.query, variables: request.variables }),
  });
  return { status: response.statusCode, body: response.body };
}

/** The request generator: every choice drawn from `random`. */
function requests(
  random: () => number,
  apps: DemoCredentials["apps"],
  campaigns: Map<string, string[]>,
  firstFxDay: string,
): Request[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const chance = (p: number) => random() < p;
  const subset = <T>(items: readonly T[], min = 1): T[] => {
    const chosen = items.filter(() => chance(0.5));
    while (chosen.length < min) {
      const item = pick(items);
      if (!chosen.includes(item)) chosen.push(item);
    }
    return random() < 0.5 ? chosen : chosen.reverse();
  };
  const shuffled = <T>(items: readonly T[]): T[] =>
    items
      .map((item) => ({ item, key: random() }))
      .sort((a, b) => a.key - b.key)
      .map((entry) => entry.item);
  const earliest = addDays(firstFxDay, -8);
  const span = DAYS + 20;
  const list: Request[] = [];
  for (let index = 0; index < QUERIES; index += 1) {
    const app = pick(apps);
    const from = chance(0.15)
      ? addDays(earliest, Math.floor(random() * 12))
      : addDays(earliest, Math.floor(random() * span));
    const to = addDays(from, Math.floor(random() * (chance(0.5) ? 90 : 30)));
    const variables: Record<string, unknown> = { c: app.brandClientId, r: { from, to } };
    if (chance(0.8)) variables["cur"] = pick(CURRENCY_CODES);
    if (chance(0.6))
      variables["p"] = { page: pick([1, 1, 1, 1, 2, 3]), pageSize: pick([1000, 1000, 1500, 5000]) };
    if (chance(0.5)) {
      const filter: Record<string, unknown> = {};
      if (chance(0.4)) filter["markets"] = subset(app.markets);
      if (chance(0.4)) filter["dataSources"] = subset(app.dataSources);
      if (chance(0.3)) filter["channels"] = subset(CHANNELS);
      if (chance(0.2)) filter["campaignIds"] = subset(campaigns.get(app.appClientId) ?? ["none"]);
      // Outside the grants: 403 from both.
      if (chance(0.04)) filter["markets"] = ["ZZ"];
      variables["f"] = filter;
    }
    const kind = random();
    if (kind < 0.05) {
      list.push({
        appClientId: app.appClientId,
        query: `query Q($c: ID!, $d: Date) { marketingDataReadiness(clientId: $c, date: $d) { status date availableThrough } }`,
        variables: { c: app.brandClientId, d: pick([TODAY, addDays(TODAY, -1)]) },
      });
    } else if (kind < 0.5) {
      const fields = shuffled(subset(RECORD_FIELDS));
      if (chance(0.7)) {
        variables["s"] = subset(RECORD_SORT_FIELDS)
          .slice(0, 3)
          .map((field) => ({ field, direction: pick(["ASC", "DESC"]) }));
      }
      list.push({
        appClientId: app.appClientId,
        query: `query Q($c: ID!, $r: DateRangeInput!, $cur: Currency, $p: PaginationInput, $s: [RecordSortInput!], $f: MarketingFilterInput) {
  marketingRecords(clientId: $c, dateRange: $r, currency: $cur, pagination: $p, sort: $s, filter: $f) { ${fields.join(" ")} }
}`,
        variables,
      });
    } else {
      const metrics = subset(METRICS);
      variables["m"] = metrics;
      let grouped: string[] = ["DATE_DAY"];
      if (chance(0.85)) {
        grouped = shuffled(DIMENSIONS).slice(0, Math.floor(random() * 4));
        variables["g"] = grouped;
      }
      const selection = [
        ...grouped,
        ...(chance(0.2) ? [pick(DIMENSIONS)] : []),
        ...metrics.map((metric) => `TOTAL_${metric}`),
        ...(chance(0.5) ? ["currency"] : []),
      ];
      if (chance(0.7)) {
        const sortable = [...grouped, ...metrics.map((metric) => `TOTAL_${metric}`)];
        variables["s"] = shuffled(sortable)
          .slice(0, 1 + Math.floor(random() * 2))
          .map((field) => ({ field, direction: pick(["ASC", "DESC"]) }));
      }
      list.push({
        appClientId: app.appClientId,
        query: `query Q($c: ID!, $r: DateRangeInput!, $m: [Metric!]!, $g: [Dimension!], $cur: Currency, $p: PaginationInput, $s: [AggregateSortInput!], $f: MarketingFilterInput) {
  marketingAggregate(clientId: $c, dateRange: $r, metrics: $m, groupBy: $g, currency: $cur, pagination: $p, sort: $s, filter: $f) { ${[...new Set(selection)].join(" ")} }
}`,
        variables,
      });
    }
  }
  return list;
}

describe("DuckDB and PostgreSQL answer identically", () => {
  let database: TestDatabase;
  let duckdb: Engine;
  let postgres: Engine;

  before(async () => {
    database = await createMigratedDatabase("differential");
    duckdb = await startEngine("duckdb", await openDuckDbStore(":memory:"));
    postgres = await startEngine("postgres", await openPostgresStore({ url: database.url, poolSize: 4 }));
  });

  after(async () => {
    for (const engine of [duckdb, postgres]) {
      if (!engine) continue;
      await engine.service.app.close();
      await engine.store.close();
      await rm(engine.dataDir, { recursive: true, force: true });
    }
    await database?.drop();
  });

  it(`gives byte-identical bodies to ${QUERIES} seeded-random queries`, async () => {
    const firstFxDay = planDemo({ today: TODAY, days: DAYS }).fxRates[0]!.date;
    // Campaign ids to filter by: each app's, as DuckDB lists them.
    const campaigns = new Map<string, string[]>();
    for (const app of duckdb.credentials.apps) {
      const answer = await ask(duckdb, {
        appClientId: app.appClientId,
        query: `query Q($c: ID!, $r: DateRangeInput!) {
  marketingAggregate(clientId: $c, dateRange: $r, metrics: [CLICKS], groupBy: [CAMPAIGN_ID]) { CAMPAIGN_ID }
}`,
        variables: { c: app.brandClientId, r: { from: addDays(TODAY, -90), to: addDays(TODAY, -1) } },
      });
      const ids = JSON.parse(answer.body).data.marketingAggregate.map(
        (row: { CAMPAIGN_ID: string }) => row.CAMPAIGN_ID,
      );
      assert.ok(ids.length > 0);
      campaigns.set(app.appClientId, ids);
    }

    const outcomes = { rows: 0, empty: 0, errors: new Map<string, number>() };
    for (const [index, request] of requests(
      mulberry32(SEED),
      duckdb.credentials.apps,
      campaigns,
      firstFxDay,
    ).entries()) {
      const [expected, actual] = await Promise.all([ask(duckdb, request), ask(postgres, request)]);
      if (actual.status !== expected.status || actual.body !== expected.body) {
        assert.fail(
          `request ${index} differs\n${JSON.stringify(request)}\nduckdb ${expected.status} ${expected.body.slice(0, 2000)}\npostgres ${actual.status} ${actual.body.slice(0, 2000)}`,
        );
      }
      const body = JSON.parse(expected.body) as {
        data?: Record<string, unknown> | null;
        errors?: { extensions: { code: string } }[];
      };
      if (body.errors) {
        for (const error of body.errors) {
          outcomes.errors.set(error.extensions.code, (outcomes.errors.get(error.extensions.code) ?? 0) + 1);
        }
      } else {
        const value = Object.values(body.data ?? {})[0];
        if (Array.isArray(value) && value.length === 0) outcomes.empty += 1;
        else outcomes.rows += 1;
      }
    }
    // The comparison means something only if most requests returned data, and the error paths ran.
    assert.ok(outcomes.rows >= QUERIES * 0.5, `only ${outcomes.rows} requests returned rows`);
    assert.ok(outcomes.empty >= 5, `only ${outcomes.empty} empty pages`);
    assert.ok((outcomes.errors.get("UNSUPPORTED_CURRENCY") ?? 0) >= 3, JSON.stringify([...outcomes.errors]));
    assert.ok((outcomes.errors.get("FORBIDDEN") ?? 0) >= 1, JSON.stringify([...outcomes.errors]));
  });

  it("answers a plain selection with the bytes of the same selection aliased or in a fragment, under every sort", async () => {
    const firstFxDay = planDemo({ today: TODAY, days: DAYS }).fxRates[0]!.date;
    const random = mulberry32(SEED + 1);
    const sortFields = ["DEFAULT", ...RECORD_SORT_FIELDS] as const;
    // Every sort (or none: the default), each in both directions, over random records requests.
    const sorted = requests(random, duckdb.credentials.apps, new Map(), firstFxDay)
      .filter((request) => request.query.includes("marketingRecords"))
      .map((request, index) => {
        const variables = { ...request.variables };
        const field = sortFields[index % sortFields.length]!;
        if (field === "DEFAULT") delete variables["s"];
        else variables["s"] = [{ field, direction: random() < 0.5 ? "ASC" : "DESC" }];
        return { ...request, variables };
      });
    for (const engine of [duckdb, postgres]) {
      let compared = 0;
      let missingRates = 0;
      const sortsCompared = new Set<string>();
      for (const [index, request] of sorted.entries()) {
        const objects = aliased(request);
        const fragment = inFragment(request);
        assert.notEqual(objects.query, request.query);
        assert.notEqual(fragment.query, request.query);
        // Every page of the walk in order (each after a served page: keyset reads, read-ahead),
        // then the walk's pages all at once (requests meeting a read-ahead in flight).
        const pageSize = (request.variables["p"] as { pageSize?: number } | undefined)?.pageSize ?? 1000;
        const pageOf = (req: Request, page: number): Request => ({
          ...req,
          variables: { ...req.variables, p: { page, pageSize } },
        });
        const first = await ask(engine, pageOf(objects, 1));
        const total =
          first.status === 200
            ? ((JSON.parse(first.body).extensions?.pageInfo?.marketingRecords?.totalCount as number) ?? 0)
            : 0;
        const pages = Math.min(4, Math.max(1, Math.ceil(total / pageSize) + 1));
        const walk = Array.from({ length: pages }, (_, page) => page + 1);
        const inOrder = [];
        for (const page of walk) inOrder.push(await ask(engine, pageOf(request, page)));
        const expected = await Promise.all(walk.map((page) => ask(engine, pageOf(objects, page))));
        const together = await Promise.all(walk.map((page) => ask(engine, pageOf(request, page))));
        const fragments = await Promise.all(walk.map((page) => ask(engine, pageOf(fragment, page))));
        for (const [at, page] of walk.entries()) {
          for (const actual of [inOrder[at]!, together[at]!, fragments[at]!]) {
            if (actual.status !== expected[at]!.status || actual.body !== expected[at]!.body) {
              assert.fail(
                `${engine.name}: request ${index} page ${page} differs from the aliased selection\n${JSON.stringify(request)}\nplain ${actual.status} ${actual.body.slice(0, 1500)}\naliased ${expected[at]!.status} ${expected[at]!.body.slice(0, 1500)}`,
              );
            }
          }
          compared += 1;
        }
        if (first.status === 200 && !first.body.includes('"errors"'))
          sortsCompared.add(
            JSON.stringify((request.variables["s"] as { field: string }[] | undefined)?.[0]?.field),
          );
        // A missing rate is found from the walk's per-day facts: under another sort, the same one
        // (when the amounts selected need it, not only the sort).
        const selection = /\{ ([a-zA-Z ]+) \}\s*\}$/.exec(request.query)?.[1] ?? "";
        if (first.body.includes("UNSUPPORTED_CURRENCY") && /\b(spend|revenue)\b/.test(selection)) {
          const other = await ask(engine, {
            ...objects,
            variables: { ...objects.variables, s: [{ field: "MARKET", direction: "ASC" }] },
          });
          assert.equal(JSON.parse(other.body).errors[0].message, JSON.parse(first.body).errors[0].message);
          missingRates += 1;
        }
      }
      assert.ok(compared >= 100, `${engine.name}: only ${compared} pages compared`);
      assert.ok(missingRates >= 2, `${engine.name}: only ${missingRates} missing rates compared`);
      assert.equal(
        sortsCompared.size,
        sortFields.length,
        `${engine.name}: sorts compared ${[...sortsCompared]}`,
      );
    }
  });

  it("writes any stored text as JSON.stringify does, and answers an Int past 32 bits as the aliased selection does", async () => {
    const names = [
      'He said "hi"',
      "back\\slash \\u0041",
      "tab\there, line\nbreak, return\rhere",
      "emoji 🚀, 中文, café, – dash",
      "line separator \u2028 and paragraph \u2029",
      "/slashes/ and DEL \u007f",
      "holds control characters \u0001 and \u0002a inside",
    ];
    const days = [addDays(TODAY, -12), addDays(TODAY, -11)];
    const records: StoredRecord[] = days.flatMap((date) =>
      names.map((name, index) => ({
        recordId: `acme-text-${date}-${index}-ünï"cødé\u0001`,
        date,
        market: "GB",
        dataSource: "google_ads",
        channel: "search",
        campaignId: `cmp "${index}" \\ ${name.slice(0, 8)}\u0002b`,
        campaignName: name,
        impressions: 2_147_483_647 - index,
        clicks: index,
        spendE4: 123_456_789n * BigInt(index + 1),
        conversionsE4: 12_345n * BigInt(index),
        revenueE4: 987_654n,
        currency: "GBP",
      })),
    );
    const app = duckdb.credentials.apps.find((candidate) => candidate.markets.includes("GB"))!;
    /** The plain selection against the aliased one on the loaded days, under two sorts. */
    const compare = async (engine: Engine, status: number): Promise<string[]> => {
      const bodies: string[] = [];
      for (const currency of ["GBP", "USD", "JPY"]) {
        for (const sort of [
          { field: "DATE_DAY", direction: "ASC" },
          { field: "DATE_DAY", direction: "DESC" },
          { field: "CAMPAIGN_ID", direction: "ASC" },
          { field: "SPEND", direction: "DESC" },
        ]) {
          const request: Request = {
            appClientId: app.appClientId,
            query: `query Q($c: ID!, $r: DateRangeInput!, $cur: Currency, $s: [RecordSortInput!], $f: MarketingFilterInput) {
  marketingRecords(clientId: $c, dateRange: $r, currency: $cur, sort: $s, filter: $f) { recordId campaignName campaignId date impressions clicks spend conversions revenue currency }
}`,
            variables: {
              c: app.brandClientId,
              r: { from: days[0], to: days[1] },
              cur: currency,
              s: [sort],
              f: { markets: ["GB"], dataSources: ["google_ads"] },
            },
          };
          const [plain, expected] = [await ask(engine, request), await ask(engine, aliased(request))];
          assert.equal(plain.status, status, plain.body);
          assert.equal(expected.status, status, expected.body);
          // An error's location is where its field stands in the query text, which the aliases move.
          const located = (body: string) => body.replace(/"locations":\[[^\]]*\],/, "");
          assert.equal(
            located(plain.body),
            located(expected.body),
            `${engine.name} ${currency} ${JSON.stringify(sort)}`,
          );
          bodies.push(plain.body);
        }
      }
      return bodies;
    };
    const processing = { processingDate: TODAY, source: "text test" };
    for (const engine of [duckdb, postgres]) {
      await engine.store.replaceRecords("brand-acme", records, processing);
      const bodies = await compare(engine, 200);
      const rows = JSON.parse(bodies[0]!).data.marketingRecords as {
        campaignName: string;
        recordId: string;
      }[];
      assert.deepEqual(
        [...new Set(rows.map((row) => row.campaignName))].sort(),
        [...names].sort(),
        `${engine.name}: stored text read back as it is`,
      );
      assert.ok(rows.every((row) => row.recordId.endsWith("\u0001")));
      // Without a separator in its text the page is read unescaped: an escape character stored in
      // a value is text like any other, never undone as if the page had been escaped.
      const unseparated = records.map((record) => ({
        ...record,
        recordId: record.recordId.replace("\u0001", ""),
        campaignName: record.campaignName.replace("\u0001", ""),
      }));
      await engine.store.replaceRecords("brand-acme", unseparated, processing);
      const unescaped = JSON.parse((await compare(engine, 200))[0]!).data.marketingRecords as {
        campaignName: string;
        campaignId: string;
      }[];
      assert.deepEqual(
        [...new Set(unescaped.map((row) => row.campaignName))].sort(),
        [...new Set(unseparated.map((record) => record.campaignName))].sort(),
        `${engine.name}: stored escape characters read back as they are`,
      );
      assert.ok(
        unescaped.every((row) => row.campaignId.endsWith("\u0002b")),
        `${engine.name}: campaignId`,
      );
      // An Int past 32 bits: the same field error, masked (graphql-jit's serialiser throws a plain
      // Error), with null data, from the plain selection as from the aliased one.
      await engine.store.replaceRecords(
        "brand-acme",
        records.map((record) => ({ ...record, impressions: record.impressions + 1 })),
        processing,
      );
      const refused = await compare(engine, 500);
      assert.match(
        refused[0]!,
        /^\{"data":null,"errors":\[\{"message":"Internal server error".*"path":\["marketingRecords",0,"impressions"\]/,
      );
    }
  });
});
