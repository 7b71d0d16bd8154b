#!/usr/bin/env node
// The machine's limit, two ways, with no GraphQL, no token and no rate limit. It reads the same
// JSON bodies as MDQ's POST /graphql (only the variables) and answers in the same response shape,
// byte for byte:
//   --mode sql     on Fastify (MDQ's HTTP layer), runs the planner's SQL (page, count, data
//                  version in one read transaction, as the DuckDB store does), reads the columns
//                  with getColumnsJS, JSON.stringify;
//   --mode memory  on plain node:http, answers from rows already in memory (computed once per
//                  distinct body by the SQL path), JSON.stringify on every request.
//   node bench/contenders/bare.mjs --data DIR --port N --mode sql|memory
import { once } from "node:events";
import { createServer } from "node:http";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DuckDBInstance } from "@duckdb/node-api";
import Fastify from "fastify";
import { dataVersionText } from "../../packages/server/dist/src/graphql/data-version-text.js";
import { DUCKDB_FILE } from "../../packages/server/dist/src/index.js";
import { ConnectionPool } from "../../packages/server/dist/src/store/duckdb/connection-pool.js";
import { RECORD_FIELDS } from "../../packages/server/dist/src/store/model/query-request.js";
import { planAggregatePage } from "../../packages/server/dist/src/store/reads/aggregate/aggregate-plan.js";
import { planFxRates } from "../../packages/server/dist/src/store/reads/fx-rates/fx-rates-plan.js";
import {
  planRecordsDayCurrencies,
  planRecordsPage,
} from "../../packages/server/dist/src/store/reads/records/records-plan.js";
import { planDataVersion } from "../../packages/server/dist/src/store/reads/versions/versions-plan.js";
import { FxHistory, MoneyConverter } from "../../packages/server/dist/src/store/sql/record-money.js";
import { DUCKDB_DIALECT } from "../../packages/server/dist/src/store/sql/sql-dialect.js";
import { AGGREGATE_GROUP_BY, AGGREGATE_METRICS, kindOf } from "../harness/queries.mjs";

const { values } = parseArgs({
  options: {
    data: { type: "string" },
    port: { type: "string" },
    mode: { type: "string", default: "sql" },
  },
});
if (!values.data || !values.port || !["sql", "memory"].includes(values.mode)) {
  throw new Error("usage: bare.mjs --data DIR --port N --mode sql|memory");
}

// The store's file (its schema, with the div_half_even macro, is already in it) and the same
// number of read connections as the DuckDB store.
const instance = await DuckDBInstance.create(join(values.data, DUCKDB_FILE));
const setup = await instance.connect();
const grantsByBrand = new Map();
for (const row of (
  await setup.runAndReadAll("SELECT brand_id, kind, value FROM grants ORDER BY brand_id, kind, value")
).getRowObjectsJS()) {
  const grants = grantsByBrand.get(row.brand_id) ?? { markets: [], dataSources: [] };
  (row.kind === "market" ? grants.markets : grants.dataSources).push(row.value);
  grantsByBrand.set(row.brand_id, grants);
}
// The FX history pages convert their stored money with, read once for every day (the bench's data
// does not change).
const fxRates = planFxRates(DUCKDB_DIALECT, { from: "1900-01-01", to: "9999-12-31" });
const fxColumns = (await setup.runAndReadAll(fxRates.sql, fxRates.params)).getColumnsJS();
const fxHistory = new FxHistory(
  fxColumns[0].map((currency, index) => ({
    currency,
    date: fxColumns[1][index],
    rateE6: BigInt(fxColumns[2][index]),
  })),
);
setup.closeSync();
const pool = await ConnectionPool.open(instance, 4);

function scopeOf(variables) {
  const grants = grantsByBrand.get(variables.c);
  if (!grants) throw new Error(`unknown brand ${variables.c}`);
  return {
    brandId: variables.c,
    from: variables.from,
    to: variables.to,
    markets: grants.markets,
    dataSources: grants.dataSources,
    channels: null,
    campaignIds: null,
  };
}

/** Row objects from a planned page's columns, keyed by the fields the plan fills, and the columns. */
async function readPage(connection, plan) {
  const columns = (await connection.runAndReadAll(plan.sql, plan.params)).getColumnsJS();
  const rowCount = columns[0]?.length ?? 0;
  const rows = new Array(rowCount);
  for (let index = 0; index < rowCount; index += 1) {
    const row = {};
    for (let column = 0; column < plan.fields.length; column += 1)
      row[plan.fields[column]] = columns[column][index];
    rows[index] = row;
  }
  return { rows, columns };
}

/** The range's data version as MDQ writes it in pageInfo (the bench's region is the default, uk). */
async function readDataVersion(connection, scope) {
  const { sql, params } = planDataVersion(scope, DUCKDB_DIALECT);
  const columns = (await connection.runAndReadAll(sql, params)).getColumnsJS();
  return dataVersionText("uk", String(columns[0]?.[0] ?? 0));
}

async function inSnapshot(read) {
  return pool.use(async (connection) => {
    await connection.run("BEGIN TRANSACTION");
    try {
      return await read(connection);
    } finally {
      await connection.run("COMMIT");
    }
  });
}

const pageInfo = (page, totalCount, dataVersion) => ({
  page: page.page,
  pageSize: page.pageSize,
  totalCount,
  hasNextPage: page.page * page.pageSize < totalCount,
  dataVersion,
});

async function answerRecords(variables) {
  const query = {
    scope: scopeOf(variables),
    currency: variables.currency ?? "EUR",
    fields: RECORD_FIELDS,
    sort: [{ field: "DATE_DAY", direction: "DESC" }],
    page: { page: variables.page ?? 1, pageSize: variables.pageSize ?? 1000 },
  };
  return inSnapshot(async (connection) => {
    const plan = planRecordsPage(query, DUCKDB_DIALECT, { after: null });
    const { rows, columns } = await readPage(connection, plan);
    // Stored money converted as the store converts it (record-money.ts).
    const money = new MoneyConverter(query.currency, fxHistory);
    for (const [index, row] of rows.entries()) {
      const source = columns[plan.sourceCurrencyColumn][index];
      const day = columns[plan.boundaryColumns.date][index];
      row.spend = money.convert(row.spend, source, day);
      row.revenue = money.convert(row.revenue, source, day);
      if (row.spend === null || row.revenue === null) throw new Error(`missing rate ${source} ${day}`);
    }
    const counting = planRecordsDayCurrencies(query, DUCKDB_DIALECT);
    const perDay = (await connection.runAndReadAll(counting.sql, counting.params)).getColumnsJS();
    const count = { total: (perDay[2] ?? []).reduce((sum, rows) => sum + Number(rows), 0) };
    const dataVersion = await readDataVersion(connection, query.scope);
    for (const row of rows) row.currency = query.currency;
    return {
      data: { marketingRecords: rows },
      extensions: { pageInfo: { marketingRecords: pageInfo(query.page, Number(count.total), dataVersion) } },
    };
  });
}

async function answerAggregate(variables) {
  const query = {
    scope: scopeOf(variables),
    currency: variables.currency ?? "EUR",
    metrics: AGGREGATE_METRICS,
    groupBy: AGGREGATE_GROUP_BY,
    sort: [{ field: "DATE_DAY", direction: "DESC" }],
    page: { page: 1, pageSize: 5000 },
  };
  return inSnapshot(async (connection) => {
    const plan = planAggregatePage(query, DUCKDB_DIALECT);
    const { rows, columns } = await readPage(connection, plan);
    const totalCount = Number(columns[plan.windowColumns.totalCount]?.[0] ?? 0);
    if (Number(columns[plan.windowColumns.missingRateRows]?.[0] ?? 0) > 0) throw new Error("missing rate");
    for (const row of rows) row.currency = query.currency;
    const dataVersion = await readDataVersion(connection, query.scope);
    return {
      data: { marketingAggregate: rows },
      extensions: { pageInfo: { marketingAggregate: pageInfo(query.page, totalCount, dataVersion) } },
    };
  });
}

function answer(text) {
  const body = JSON.parse(text);
  const kind = kindOf(body);
  if (kind === "records") return answerRecords(body.variables);
  if (kind === "aggregate") return answerAggregate(body.variables);
  throw new Error(`the bare routes answer records and aggregates, not ${kind}`);
}

const remembered = new Map();

/** The memory route's answer to `body`: computed once by the SQL path, then replayed. */
async function fromMemory(body) {
  let response = remembered.get(body);
  if (response === undefined) {
    response = await answer(body);
    remembered.set(body, response);
  }
  return JSON.stringify(response);
}

let close;
if (values.mode === "memory") {
  // The limit of the machine, as the issue measures it: plain node:http, the answer parsed once,
  // JSON.stringify on every request.
  const server = createServer((request, response) => {
    if (request.method === "GET" && request.url === "/livez") {
      response.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}');
      return;
    }
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      fromMemory(Buffer.concat(chunks).toString("utf8")).then(
        (text) => response.writeHead(200, { "content-type": "application/json" }).end(text),
        (error) => response.writeHead(500).end(String(error.message)),
      );
    });
  });
  // Fastify's keep-alive timeout (MDQ's), not node:http's 5 s: on a busy machine a walker's idle
  // socket outlived 5 s and was closed as the next page was sent (ECONNRESET).
  server.keepAliveTimeout = 72_000;
  server.listen(Number(values.port), "127.0.0.1");
  await once(server, "listening");
  close = () => new Promise((resolve) => server.close(resolve));
} else {
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) =>
    done(null, body),
  );
  app.post("/graphql", async (request, reply) => {
    reply.type("application/json");
    return JSON.stringify(await answer(request.body));
  });
  app.get("/livez", async () => ({ status: "ok" }));
  await app.listen({ port: Number(values.port), host: "127.0.0.1" });
  close = () => app.close();
}
process.on("SIGTERM", async () => {
  await close();
  pool.close();
  instance.closeSync();
  process.exit(0);
});
