/**
 * A malicious MDQ service on a loopback port: a token endpoint that always issues a token, and a
 * GraphQL endpoint whose answers a test writes (lies about dates, counts, types; bodies that never
 * end). The client under test talks real HTTP to it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** The field a GraphQL request asks for, and its variables. */
export interface HostileRequest {
  field:
    | "marketingDataReadiness"
    | "marketingDataChanges"
    | "marketingRecords"
    | "marketingAggregate"
    | "myAccess";
  variables: Record<string, unknown>;
}

/** A JSON answer, or a function that writes the response itself (for bodies that never end). */
export type HostileAnswer = unknown | ((response: ServerResponse) => void);

export interface HostileServer {
  url: string;
  /** GraphQL requests received. */
  readonly requests: HostileRequest[];
  close(): Promise<void>;
}

const FIELDS = [
  "marketingDataReadiness",
  "marketingDataChanges",
  "marketingRecords",
  "marketingAggregate",
  "myAccess",
];

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Starts a server answering each GraphQL request with `answer(request)`.
 * @example const server = await startHostileServer(() => ({ data: { myAccess: null } }));
 */
export async function startHostileServer(
  answer: (request: HostileRequest) => HostileAnswer,
): Promise<HostileServer> {
  const requests: HostileRequest[] = [];
  const server = createServer(async (request, response) => {
    const body = await bodyOf(request);
    if (request.url === "/oauth2/token") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ access_token: "hostile-token", token_type: "Bearer", expires_in: 3600 }));
      return;
    }
    const parsed = JSON.parse(body) as { query: string; variables: Record<string, unknown> };
    const field = FIELDS.find((name) => parsed.query.includes(`${name}(`)) as HostileRequest["field"];
    const asked: HostileRequest = { field, variables: parsed.variables };
    requests.push(asked);
    const result = answer(asked);
    if (typeof result === "function") {
      (result as (response: ServerResponse) => void)(response);
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(result));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A well-formed record of `date`; `overrides` replace fields (with any value, of any type). */
export function record(
  date: string,
  index: number,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    recordId: `r-${date}-${index}`,
    date,
    market: "GB",
    dataSource: "google_ads",
    channel: "search",
    campaignId: `c-${index}`,
    campaignName: `Campaign ${index}`,
    impressions: 100 + index,
    clicks: 10,
    spend: 12.5,
    conversions: 1,
    revenue: 30,
    currency: "EUR",
    ...overrides,
  };
}

/** A `marketingDataChanges` answer listing `dates`, each with `rows` rows at version uk.5. */
export function changesAnswer(dates: string[], rows = 2): unknown {
  return {
    data: {
      marketingDataChanges: {
        dataVersion: "uk.5",
        fullResyncRequired: false,
        reason: null,
        days: dates.map((date) => ({
          date,
          dataVersion: "uk.5",
          changedAt: "2024-01-02T00:00:00.000Z",
          rows,
        })),
      },
    },
  };
}

/** A one-page `marketingRecords` answer holding `rows` (a consistent pageInfo, version uk.5). */
export function recordsAnswer(rows: Record<string, unknown>[], pageSize = 5000): unknown {
  return {
    data: { marketingRecords: rows },
    extensions: {
      pageInfo: {
        marketingRecords: {
          page: 1,
          pageSize,
          totalCount: rows.length,
          hasNextPage: false,
          dataVersion: "uk.5",
        },
      },
    },
  };
}

/** The environment `mdq-client` needs to talk to `server`. */
export function hostileEnv(server: HostileServer, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    MDQ_APP_CLIENT_ID: "app-acme-analytics",
    MDQ_APP_CLIENT_SECRET: "hostile-test-secret",
    MDQ_BRAND_CLIENT_ID: "brand-acme",
    MDQ_AUTH_URL: server.url,
    MDQ_BASE_URL: server.url,
    ...extra,
  };
}
