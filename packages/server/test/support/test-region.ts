/**
 * A seeded demo region for tests, driven through real HTTP handling (Fastify inject, or a real
 * port with `listen()`), on a DuckDB file in a temporary data directory.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { todayIn } from "../../src/calendar.js";
import { type ConfigInput, loadConfig } from "../../src/config.js";
import { type DemoCredentials, seedDemoRegion } from "../../src/demo/demo-seed.js";
import { buildService, type Service } from "../../src/server.js";
import { openDuckDbStore } from "../../src/store/duckdb/duckdb-store.js";

export interface TestRegionOptions extends ConfigInput {
  /** Data days ending yesterday; default 120. */
  days?: number;
}

export interface GraphQLResponse {
  status: number;
  headers: LightMyRequestResponse["headers"];
  body: {
    data?: Record<string, unknown> | null;
    errors?: { message: string; extensions: { code: string }; path?: (string | number)[] }[];
    extensions?: {
      pageInfo?: Record<
        string,
        { page: number; pageSize: number; totalCount: number; hasNextPage: boolean; dataVersion: string }
      >;
    };
  };
}

export interface TestRegion {
  service: Service;
  credentials: DemoCredentials;
  today: string;
  dataDir: string;
  inject(options: InjectOptions): Promise<LightMyRequestResponse>;
  /**
   * Basic header value for an app (by id; the first demo app by default). With `secret`, any app
   * (one a test registered itself); without, the demo credentials' secret.
   */
  basic(appClientId?: string, secret?: string): string;
  /** The token endpoint's answer for an app (`appClientId`/`secret` as for `basic`). */
  tokenResponse(appClientId?: string, secret?: string): Promise<LightMyRequestResponse>;
  /** A fresh access token for an app (the first demo app by default; `secret` as for `basic`). */
  token(appClientId?: string, secret?: string): Promise<string>;
  /** POSTs a GraphQL query with a bearer token (a fresh one for the first app by default). */
  graphql(query: string, variables?: Record<string, unknown>, token?: string): Promise<GraphQLResponse>;
  close(): Promise<void>;
}

/** The credentials entry of an app. */
export function appOf(credentials: DemoCredentials, appClientId?: string) {
  const app = appClientId
    ? credentials.apps.find((entry) => entry.appClientId === appClientId)
    : credentials.apps[0];
  if (!app) throw new Error(`no demo app ${appClientId}`);
  return app;
}

/** Starts a seeded region (not listening; use `inject`, or `service.app.listen`). */
export async function startTestRegion(options: TestRegionOptions = {}): Promise<TestRegion> {
  const { days = 120, ...configInput } = options;
  const dataDir = await mkdtemp(join(tmpdir(), "mdq-test-"));
  const config = loadConfig(
    {},
    {
      region: "uk",
      authUrl: `http://${configInput.region ?? "uk"}.auth.test`,
      baseUrl: `http://${configInput.region ?? "uk"}.api.test`,
      rateLimitMax: 1_000_000,
      logLevel: "silent",
      dataDir,
      ...configInput,
    },
  );
  const store = await openDuckDbStore(dataDir);
  const today = todayIn(config.timeZone);
  const credentials = await seedDemoRegion(store, {
    region: config.region,
    authUrl: config.authUrl,
    baseUrl: config.baseUrl,
    today,
    days,
  });
  const service = await buildService(config, { store });
  const region: TestRegion = {
    service,
    credentials,
    today,
    dataDir,
    inject: (injectOptions) => service.app.inject(injectOptions),
    basic(appClientId, secret) {
      const app =
        appClientId !== undefined && secret !== undefined
          ? { appClientId, appClientSecret: secret }
          : appOf(credentials, appClientId);
      const pair = `${encodeURIComponent(app.appClientId)}:${encodeURIComponent(secret ?? app.appClientSecret)}`;
      return `Basic ${Buffer.from(pair).toString("base64")}`;
    },
    tokenResponse(appClientId, secret) {
      return service.app.inject({
        method: "POST",
        url: "/oauth2/token",
        headers: {
          authorization: region.basic(appClientId, secret),
          "content-type": "application/x-www-form-urlencoded",
        },
        payload: "grant_type=client_credentials&scope=api_data%2Fread",
      });
    },
    async token(appClientId, secret) {
      const response = await region.tokenResponse(appClientId, secret);
      if (response.statusCode !== 200)
        throw new Error(`token request failed: ${response.statusCode} ${response.body}`);
      return response.json().access_token as string;
    },
    async graphql(query, variables, token) {
      const response = await service.app.inject({
        method: "POST",
        url: "/graphql",
        headers: {
          authorization: `Bearer ${token ?? (await region.token())}`,
          "content-type": "application/json",
        },
        payload: JSON.stringify({ query, variables }),
      });
      return { status: response.statusCode, headers: response.headers, body: response.json() };
    },
    async close() {
      await service.app.close();
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return region;
}
