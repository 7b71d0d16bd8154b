// `--growth`: how a records page's latency grows with the rows in the store (1, 10, 50 million by
// default) and with the page number. The store starts as the run's data cut to the page's 90 days
// (the page is unchanged), then grows the way a region grows: by more brands, each loaded in one
// go (its rows together, by date), copies of the demo brands' rows under new brand ids. The page
// asked is always brand-acme's 90-day page 1 of 1000 rows.
import { cp } from "node:fs/promises";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import pg from "pg";
import { DUCKDB_FILE } from "../../packages/server/dist/src/index.js";
import { CONTENDERS } from "./contenders.mjs";
import { driveLoad } from "./processes.mjs";
import { SCENARIOS } from "./scenarios.mjs";

const COLUMNS =
  "record_id, date, market, data_source, channel, campaign_id, campaign_name, impressions, clicks, spend_e4, conversions_e4, revenue_e4, currency";
const median = (numbers) => [...numbers].sort((a, b) => a - b)[Math.floor((numbers.length - 1) / 2)];

/**
 * Keeps only the days from `from` on (the page's range: the page itself is unchanged), so that
 * the smallest size can be small; rewritten sorted by brand and date, as loads leave them.
 */
async function trimDuckDb(dataDir, from) {
  const instance = await DuckDBInstance.create(join(dataDir, DUCKDB_FILE));
  const connection = await instance.connect();
  await connection.run("CREATE TEMP TABLE kept AS SELECT * FROM records WHERE date >= CAST(? AS DATE)", [
    from,
  ]);
  await connection.run("DELETE FROM records");
  await connection.run("INSERT INTO records SELECT * FROM kept ORDER BY brand_id, date, record_id");
  await connection.run("DROP TABLE kept");
  await connection.run("CHECKPOINT");
  connection.closeSync();
  instance.closeSync();
}

async function trimPostgres(databaseUrl, from) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("DELETE FROM records WHERE date < $1", [from]);
    await client.query("VACUUM ANALYZE records");
  } finally {
    await client.end();
  }
}

/** Adds filler brands to a DuckDB store until it holds `target` rows; returns the new count. */
async function growDuckDb(dataDir, target) {
  const instance = await DuckDBInstance.create(join(dataDir, DUCKDB_FILE));
  const connection = await instance.connect();
  const count = async () =>
    Number((await connection.runAndReadAll("SELECT count(*) AS n FROM records")).getRowObjectsJS()[0].n);
  let rows = await count();
  const template = Number(
    (
      await connection.runAndReadAll("SELECT count(*) AS n FROM records WHERE brand_id LIKE 'brand-%'")
    ).getRowObjectsJS()[0].n,
  );
  for (let brand = Math.ceil(rows / template); rows < target; brand += 1) {
    await connection.run(
      `INSERT INTO records SELECT 'filler-' || lpad(CAST(? AS VARCHAR), 5, '0'), ${COLUMNS}
        FROM records WHERE brand_id LIKE 'brand-%' LIMIT ?`,
      [brand, Math.min(template, target - rows)],
    );
    rows = await count();
  }
  await connection.run("CHECKPOINT");
  connection.closeSync();
  instance.closeSync();
  return rows;
}

/** The same for the PostgreSQL store. */
async function growPostgres(databaseUrl, target) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const count = async () => Number((await client.query("SELECT count(*) AS n FROM records")).rows[0].n);
    let rows = await count();
    const template = Number(
      (await client.query("SELECT count(*) AS n FROM records WHERE brand_id LIKE 'brand-%'")).rows[0].n,
    );
    for (let brand = Math.ceil(rows / template); rows < target; brand += 1) {
      await client.query(
        `INSERT INTO records (brand_id, ${COLUMNS}) SELECT $1, ${COLUMNS} FROM records WHERE brand_id LIKE 'brand-%' LIMIT $2`,
        [`filler-${String(brand).padStart(5, "0")}`, Math.min(template, target - rows)],
      );
      rows = await count();
    }
    await client.query("VACUUM ANALYZE records");
    return rows;
  } finally {
    await client.end();
  }
}

/** Median p50, p99 and req/s of `rounds` loads of one request. */
async function measure(server, request, options) {
  const loads = [];
  for (let round = 0; round < options.rounds; round += 1) {
    loads.push(
      await driveLoad({
        url: server.url,
        connections: options.connections,
        duration: options.duration,
        warmup: options.warmup,
        requests: [request],
      }),
    );
  }
  return {
    p50: median(loads.map((load) => load.p50)),
    p99: median(loads.map((load) => load.p99)),
    rps: median(loads.map((load) => load.rps)),
    failures: loads.reduce((sum, load) => sum + load.non2xx + load.errors + load.timeouts, 0),
  };
}

const pageRequest = (contender, context, page) => {
  const request = SCENARIOS["records-1000"].requests(contender, context)[0];
  const body = JSON.parse(request.body);
  body.variables.page = page;
  return { ...request, body: JSON.stringify(body) };
};

/**
 * Measures the page-number curve on the run's data, then grows the store through
 * `options.growthSizes` and measures page 1 at each size. Contenders: MDQ on each store with no
 * page cache, and the same-SQL route on DuckDB. Servers are started here, one at a time, and stopped.
 */
export async function measureGrowth({ options, context, seedDir, skipped, log, refreshTokens }) {
  // Pages computed on every request: a page cache would answer the repeated page from memory.
  const contenders = ["mdq-duckdb-nocache", "bare-sql", "mdq-postgres-nocache"].filter(
    (id) =>
      (options.contenders.includes(id) || options.contenders.includes(id.replace("-nocache", ""))) &&
      !skipped.has(id) &&
      !skipped.has(id.replace("-nocache", "")),
  );
  const growth = { pages: {}, sizes: {}, notes: [] };
  const pages = [1, 10, 25, 50].filter((page) => page <= context.deepPage);
  for (const id of contenders) {
    if (CONTENDERS[id].store === "duckdb" && context.dataDirs[id] === undefined) {
      context.dataDirs[id] = join(context.work, id);
      await cp(seedDir, context.dataDirs[id], { recursive: true });
    }
    const server = await CONTENDERS[id].start(context);
    try {
      await refreshTokens(id, server.url);
      growth.pages[id] = [];
      for (const page of pages) {
        const point = { page, ...(await measure(server, pageRequest(id, context, page), options)) };
        growth.pages[id].push(point);
        log(
          `[growth] ${id} page ${page}: p50 ${point.p50.toFixed(0)} ms, p99 ${point.p99.toFixed(0)} ms, ${point.rps.toFixed(1)} req/s`,
        );
      }
    } finally {
      await server.stop();
    }
  }

  // The DuckDB contenders share one grown copy, measured one after the other at each size.
  const grownDir = join(context.work, "growth");
  await cp(seedDir, grownDir, { recursive: true });
  await trimDuckDb(grownDir, context.question.from);
  if (contenders.includes("mdq-postgres-nocache"))
    await trimPostgres(context.postgres.databaseUrl, context.question.from);
  const grownContext = {
    ...context,
    dataDirs: { ...context.dataDirs, "mdq-duckdb-nocache": grownDir, "bare-sql": grownDir },
  };
  for (const target of [...options.growthSizes].sort((a, b) => a - b)) {
    for (const id of contenders) {
      const started = Date.now();
      const rows =
        CONTENDERS[id].store === "duckdb"
          ? await growDuckDb(grownDir, target)
          : await growPostgres(context.postgres.databaseUrl, target);
      if (rows > target * 1.01)
        growth.notes.push(`${id}: the run's data already holds ${rows} rows, more than ${target}`);
      if (id !== "bare-sql")
        log(
          `[growth] store of ${id} grown to ${rows.toLocaleString("en")} rows in ${((Date.now() - started) / 1000).toFixed(0)} s`,
        );
      const server = await CONTENDERS[id].start(grownContext);
      try {
        await refreshTokens(id, server.url);
        const point = {
          targetRows: target,
          rows,
          ...(await measure(server, pageRequest(id, context, 1), options)),
        };
        growth.sizes[id] = [...(growth.sizes[id] ?? []), point];
        log(
          `[growth] ${id} at ${rows.toLocaleString("en")} rows: page 1 p50 ${point.p50.toFixed(0)} ms, p99 ${point.p99.toFixed(0)} ms`,
        );
      } finally {
        await server.stop();
      }
    }
  }
  return growth;
}
