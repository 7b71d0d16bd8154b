/**
 * A seeded demo region for tests, driven through real HTTP handling (Fastify inject, or a real
 * port with `listen()`), on a DuckDB file in a temporary data directory.
 */
import { after, before } from "node:test";
import {
  type App,
  buildService,
  type ConfigInput,
  type DemoCredentials,
  generateAppSecret,
  hashAppSecret,
  type Service,
} from "@mdq/server";
import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { basicOf, graphqlOn, requestToken, tokenFrom } from "./inject-calls.js";
import { seedRegion } from "./seeded-region.js";

/** Configuration of the region, and how many data days to seed. */
export interface TestRegionOptions extends ConfigInput {
  /** Data days ending yesterday; default 120. */
  days?: number;
  /** The demo's scale (its campaigns multiplied); default 1. */
  scale?: number;
}

/** A GraphQL answer: status, headers and the parsed body. */
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

/** A seeded region in this process, and calls to it through Fastify inject. */
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
  /**
   * Registers an app of `app.brandId` with a fresh secret (not revoked, not narrowed unless `app`
   * says so, created now unless given) and returns a fresh access token for it.
   */
  newAppToken(app: Pick<App, "appClientId" | "brandId" | "name"> & Partial<App>): Promise<string>;
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
  const { days = 120, scale, ...configInput } = options;
  const name = configInput.region ?? "uk";
  const seeded = await seedRegion(
    { authUrl: `http://${name}.auth.test`, baseUrl: `http://${name}.api.test`, ...configInput },
    { prefix: "mdq-test-", days, ...(scale === undefined ? {} : { scale }) },
  );
  const { store, credentials } = seeded;
  const service = await buildService(seeded.config, { store });
  /** The credentials `basic` and friends take: a registered app's own, or a demo app's. */
  const credentialsOf = (appClientId?: string, secret?: string) =>
    appClientId !== undefined && secret !== undefined
      ? { appClientId, appClientSecret: secret }
      : { ...appOf(credentials, appClientId), ...(secret === undefined ? {} : { appClientSecret: secret }) };
  const region: TestRegion = {
    service,
    credentials,
    today: seeded.today,
    dataDir: seeded.dataDir,
    inject: (injectOptions) => service.app.inject(injectOptions),
    basic: (appClientId, secret) => basicOf(credentialsOf(appClientId, secret)),
    tokenResponse: (appClientId, secret) => requestToken(service, credentialsOf(appClientId, secret)),
    token: (appClientId, secret) => tokenFrom(service, credentialsOf(appClientId, secret)),
    async graphql(query, variables, token) {
      const response = await graphqlOn(service, token ?? (await region.token()), query, variables);
      return { status: response.statusCode, headers: response.headers, body: response.json() };
    },
    async newAppToken(app) {
      const secret = generateAppSecret();
      await service.store.createApp({
        previousSecretHash: null,
        previousSecretExpiresAt: null,
        markets: null,
        dataSources: null,
        revokedAt: null,
        createdAt: new Date(),
        ...app,
        secretHash: hashAppSecret(secret),
      });
      return region.token(app.appClientId, secret);
    },
    async close() {
      await service.app.close();
      await seeded.remove();
    },
  };
  return region;
}

/** A suite's test region, set once the enclosing `before` ran. */
export interface SuiteRegion {
  region: TestRegion;
}

/** Starts a test region before the enclosing `describe` and closes it after it. */
export function useTestRegion(options: TestRegionOptions = {}): SuiteRegion {
  const suite = {} as SuiteRegion;
  before(async () => {
    suite.region = await startTestRegion(options);
  });
  after(() => suite.region?.close());
  return suite;
}
