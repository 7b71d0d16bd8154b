/**
 * A demo region on either store for the data-version tests (data-changes.test.ts and the hostile
 * tenant suite) and the bulk export's: seeded with 60 days ending yesterday (or the caller's
 * `RegionOptions`), reached through GraphQL and the admin API over Fastify's HTTP handling,
 * restartable over the same store.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { createMigratedDatabase, requestToken, type TestDatabase } from "@mdq/test-support";
import { ensureAdminToken } from "../src/admin/admin-token.js";
import { addDays, todayIn } from "../src/calendar.js";
import { type ConfigInput, loadConfig, type ServiceConfig } from "../src/config.js";
import { type DemoCredentials, seedDemoRegion } from "../src/demo/demo-seed.js";
import { buildService, type Service } from "../src/server.js";
import { openDuckDbStore } from "../src/store/duckdb/duckdb-store.js";
import type { Store } from "../src/store/model/store.js";
import { openPostgresStore } from "../src/store/postgres/postgres-store.js";

/** Data days the region holds, ending yesterday. */
export const DAYS = 60;
export const HEADER =
  "record_id,date,market,data_source,channel,campaign_id,campaign_name,impressions,clicks,spend,conversions,revenue,currency";

export const CHANGES = `query($c: ID!, $r: DateRangeInput!, $s: String) {
  marketingDataChanges(clientId: $c, dateRange: $r, since: $s) {
    dataVersion fullResyncRequired reason days { date dataVersion changedAt rows }
  }
}`;
export const COUNT = `query($c: ID!, $r: DateRangeInput!) {
  marketingRecords(clientId: $c, dateRange: $r) { recordId }
}`;
export const READINESS = "query($c: ID!) { marketingDataReadiness(clientId: $c) { dataVersion } }";

export interface ChangedDay {
  date: string;
  dataVersion: string;
  changedAt: string;
  rows: number;
}
export interface Changes {
  dataVersion: string;
  fullResyncRequired: boolean;
  reason: string | null;
  days: ChangedDay[];
}

export interface Engine {
  name: string;
  /** Opens the engine's store: the same one again when called twice (a restart). */
  open(): Promise<Store>;
  cleanup(): Promise<void>;
}

/** A fresh DuckDB store in a data directory named `prefix…`. */
export function duckdbEngine(prefix = "mdq-changes-"): Engine & { name: "duckdb" } {
  let dataDir = "";
  return {
    name: "duckdb",
    async open() {
      dataDir ||= await mkdtemp(join(tmpdir(), prefix));
      return openDuckDbStore(dataDir);
    },
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  };
}

/** A fresh PostgreSQL store in a test database named `prefix…`, its pool opened with `pool`. */
export function postgresEngine(
  prefix = "changes",
  pool: { poolSize?: number; statementTimeoutMs?: number } = {},
): Engine & { name: "postgres"; databaseUrl(): string } {
  let database: TestDatabase | undefined;
  return {
    name: "postgres",
    async open() {
      if (!database) {
        database = await createMigratedDatabase(prefix);
      }
      return openPostgresStore({ url: database.url, poolSize: 4, ...pool });
    },
    databaseUrl: () => database!.url,
    cleanup: async () => database?.drop(),
  };
}

/** Both stores, each a fresh one. */
export function engines(): Engine[] {
  return [duckdbEngine(), postgresEngine()];
}

/** A GraphQL answer: status and parsed body. */
export interface GraphQLAnswer {
  status: number;
  body: Record<string, unknown> & { data?: Record<string, unknown> | null };
}

/** The region of one test file on `engine`, and what its tests call. */
export interface ChangesRegion {
  readonly service: Service;
  readonly store: Store;
  readonly config: ServiceConfig;
  readonly credentials: DemoCredentials;
  /** A directory for the test's files. */
  readonly work: string;
  /** A token of the app (app-acme-analytics by default), issued once per service start. */
  token(appClientId?: string): Promise<string>;
  graphql(query: string, variables: Record<string, unknown>, appClientId?: string): Promise<GraphQLAnswer>;
  changes(
    range: { from: string; to: string },
    since: string | null,
    appClientId?: string,
    brand?: string,
  ): Promise<Changes>;
  admin(url: string, body: unknown): Promise<void>;
  /** Loads `lines` (CSV rows without header) for `brand` (brand-acme by default). */
  load(name: string, lines: string[], brand?: string): Promise<void>;
  first(): string;
  last(): string;
  whole(): { from: string; to: string };
  /** Closes the service and the store, and opens both again over the same data. */
  restart(): Promise<void>;
}

/** What a test file changes of the region: its days, scale, configuration and extra data. */
export interface RegionOptions {
  /** Data days ending yesterday (default `DAYS`). */
  days?: number;
  /** The demo's volume multiplier (default the demo's). */
  scale?: number;
  /** Configuration over the harness's own. */
  config?: ConfigInput;
  /** Writes more data into the seeded store before the service starts. */
  seed?: (store: Store, today: string) => Promise<void>;
}

/**
 * Seeds a region on `engine` before the file's tests and removes it after (registers `before`
 * and `after` hooks in the calling `describe`).
 */
export function changesRegion(engine: Engine, options: RegionOptions = {}): ChangesRegion {
  const days = options.days ?? DAYS;
  let store: Store;
  let service: Service;
  let config: ServiceConfig;
  let credentials: DemoCredentials;
  let adminToken: string;
  let work: string;
  /** The region's data directory (its admin token, signing keys): removed after the tests, like `work`. */
  let dataDir: string;
  let today: string;
  const tokens = new Map<string, string>();

  async function start(): Promise<void> {
    store = await engine.open();
    service = await buildService(config, { store });
  }

  async function token(appClientId = "app-acme-analytics"): Promise<string> {
    const cached = tokens.get(appClientId);
    if (cached) return cached;
    const app = credentials.apps.find((entry) => entry.appClientId === appClientId)!;
    const response = await requestToken(service, app);
    assert.equal(response.statusCode, 200, response.body);
    const issued = response.json().access_token as string;
    tokens.set(appClientId, issued);
    return issued;
  }

  const region: ChangesRegion = {
    get service() {
      return service;
    },
    get store() {
      return store;
    },
    get config() {
      return config;
    },
    get credentials() {
      return credentials;
    },
    get work() {
      return work;
    },
    token,
    async graphql(query, variables, appClientId = "app-acme-analytics") {
      const response = await service.app.inject({
        method: "POST",
        url: "/graphql",
        headers: { authorization: `Bearer ${await token(appClientId)}`, "content-type": "application/json" },
        payload: JSON.stringify({ query, variables }),
      });
      return { status: response.statusCode, body: response.json() };
    },
    async changes(range, since, appClientId = "app-acme-analytics", brand = "brand-acme") {
      const response = await region.graphql(CHANGES, { c: brand, r: range, s: since }, appClientId);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body["errors"], undefined, JSON.stringify(response.body));
      return response.body.data?.["marketingDataChanges"] as Changes;
    },
    async admin(url, body) {
      const response = await service.adminApp.inject({
        method: "POST",
        url,
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        payload: JSON.stringify(body),
      });
      assert.equal(response.statusCode, 200, response.body);
    },
    async load(name, lines, brand = "brand-acme") {
      const path = join(work, name);
      await writeFile(path, `${HEADER}\n${lines.join("\n")}\n`);
      await region.admin("/admin/loads", { brandId: brand, path });
    },
    first: () => addDays(today, -days),
    last: () => addDays(today, -1),
    whole: () => ({ from: region.first(), to: region.last() }),
    async restart() {
      await service.app.close();
      await store.close();
      tokens.clear();
      await start();
    },
  };

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "mdq-changes-files-"));
    dataDir = await mkdtemp(join(tmpdir(), "mdq-changes-dir-"));
    config = loadConfig(
      {},
      {
        region: "uk",
        authUrl: "http://auth.test",
        baseUrl: "http://api.test",
        rateLimitMax: 1_000_000,
        logLevel: "silent",
        dataDir,
        pageCacheMb: 0,
        ...options.config,
      },
    );
    today = todayIn(config.timeZone);
    adminToken = await ensureAdminToken(dataDir);
    const seeding = await engine.open();
    credentials = await seedDemoRegion(seeding, {
      region: config.region,
      authUrl: config.authUrl,
      baseUrl: config.baseUrl,
      today,
      days,
      ...(options.scale === undefined ? {} : { scale: options.scale }),
    });
    await options.seed?.(seeding, today);
    await seeding.close();
    await start();
  });
  after(async () => {
    await service.app.close();
    await store.close();
    await engine.cleanup();
    await rm(work, { recursive: true, force: true });
    await rm(dataDir, { recursive: true, force: true });
  });
  return region;
}
