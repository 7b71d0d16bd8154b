/**
 * A malicious MDQ service on a loopback port: a token endpoint that always issues a token, a
 * GraphQL endpoint whose answers a test writes (lies about dates, counts, types; bodies that never
 * end), and the bulk export's route, which answers 404 (a service from before the export) unless
 * the test writes its answers too. The client under test talks real HTTP to it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { DATA_VERSION_HEADER, EXPORT_PATH, RESUME_HEADER, ROW_COUNT_HEADER } from "@mdq/contract";

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

/** An export request: its query parameters (`from`, `to`, `after`, `dataVersion`, ...). */
export type HostileExportRequest = URLSearchParams;

export interface HostileServer {
  url: string;
  /** GraphQL requests received. */
  readonly requests: HostileRequest[];
  /** Export requests received. */
  readonly exports: HostileExportRequest[];
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
 * Starts a server answering each GraphQL request with `answer(request)`, and each export request
 * with `exportAnswer(request)` (by default 404, as a service without the export answers).
 * @example const server = await startHostileServer(() => ({ data: { myAccess: null } }));
 */
export async function startHostileServer(
  answer: (request: HostileRequest) => HostileAnswer,
  exportAnswer: (request: HostileExportRequest, response: ServerResponse) => void = notFound,
): Promise<HostileServer> {
  const requests: HostileRequest[] = [];
  const exports: HostileExportRequest[] = [];
  const server = createServer(async (request, response) => {
    const body = await bodyOf(request);
    if (request.url === "/oauth2/token") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ access_token: "hostile-token", token_type: "Bearer", expires_in: 3600 }));
      return;
    }
    const url = new URL(request.url ?? "/", "http://hostile");
    if (request.method === "GET" && url.pathname === EXPORT_PATH) {
      exports.push(url.searchParams);
      exportAnswer(url.searchParams, response);
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
    exports,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The answer of a service without the export: Fastify's 404. */
function notFound(_request: HostileExportRequest, response: ServerResponse): void {
  response.writeHead(404, { "content-type": "application/json" });
  response.end(
    JSON.stringify({ message: `Route GET:${EXPORT_PATH} not found`, error: "Not Found", statusCode: 404 }),
  );
}

/**
 * An export answer: `rows` as NDJSON lines (or raw `body` text), announcing `rowCount` rows
 * (default: the lines sent) at version uk.5.
 */
export function exportAnswer(
  rows: Record<string, unknown>[],
  options: { rowCount?: number; body?: string } = {},
): (request: HostileExportRequest, response: ServerResponse) => void {
  return (_request, response) => {
    response.writeHead(200, {
      "content-type": "application/x-ndjson",
      [DATA_VERSION_HEADER]: "uk.5",
      [ROW_COUNT_HEADER]: String(options.rowCount ?? rows.length),
      [RESUME_HEADER]: "v1.hostile.resume",
    });
    response.end(options.body ?? rows.map((row) => `${JSON.stringify(row)}\n`).join(""));
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
