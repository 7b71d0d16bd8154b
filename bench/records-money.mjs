#!/usr/bin/env node
// Where a records page's money is converted: in SQL (the page joins the per-day rate table and
// converts each row with div_half_even) or in JavaScript (the page returns the stored amounts and
// their currency; MoneyConverter converts them with the FX history read once per data version).
// Times both, best of N, on a seeded DuckDB data directory (and PostgreSQL with --database), for
// brand-acme's latest 90 days in GBP, all record fields, under several sorts and pages.
//   npm run build && node packages/cli/dist/src/main.js demo --seed-only --scale 30 --data /tmp/d30
//   node bench/records-money.mjs --data /tmp/d30 [--database postgres://…] [--runs 5]
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DuckDBInstance } from "@duckdb/node-api";
import pg from "pg";
import { addDays } from "../packages/server/dist/src/calendar.js";
import { planFxRates, planRecordsPage } from "../packages/server/dist/src/store/query-planner.js";
import { RECORD_FIELDS } from "../packages/server/dist/src/store/query-request.js";
import { FxHistory, MoneyConverter } from "../packages/server/dist/src/store/record-money.js";
import { DUCKDB_DIALECT, POSTGRES_DIALECT } from "../packages/server/dist/src/store/sql-dialect.js";

const { values } = parseArgs({
  options: {
    data: { type: "string" },
    database: { type: "string" },
    runs: { type: "string", default: "5" },
  },
});
const runs = Number(values.runs);

/** An engine's statement runner: columns of the result, as the stores read them. */
async function duckdb(dataDir) {
  const instance = await DuckDBInstance.create(join(dataDir, "mdq.duckdb"), { access_mode: "READ_ONLY" });
  const connection = await instance.connect();
  return {
    name: "duckdb",
    dialect: DUCKDB_DIALECT,
    async columns({ sql, params }) {
      return (await connection.runAndReadAll(sql, params)).getColumnsJS();
    },
    close: () => {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

async function postgres(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    name: "postgres",
    dialect: POSTGRES_DIALECT,
    async columns({ sql, params }) {
      const { rows, fields } = await client.query({ text: sql, values: params, rowMode: "array" });
      return fields.map((_, column) => rows.map((row) => row[column]));
    },
    close: () => client.end(),
  };
}

async function measure(engine) {
  const [last] = (await engine.columns({ sql: "SELECT max(date) FROM day_row_counts", params: [] }))[0];
  const to =
    engine.name === "duckdb"
      ? new Date(Number(last)).toISOString().slice(0, 10)
      : last.toISOString().slice(0, 10);
  const scope = {
    brandId: "brand-acme",
    from: addDays(to, -89),
    to,
    markets: ["DE", "FR", "GB", "SE", "US"],
    dataSources: ["google_ads", "meta_ads", "tiktok_ads"],
    channels: null,
    campaignIds: null,
  };
  const fx = await engine.columns(planFxRates(engine.dialect));
  const history = new FxHistory(
    fx[0].map((currency, index) => ({ currency, date: String(fx[1][index]), rateE6: BigInt(fx[2][index]) })),
  );
  const cases = [
    ["CLICKS DESC, page 20 of 1000", [{ field: "CLICKS", direction: "DESC" }], 20, 1000],
    ["SPEND DESC, page 20 of 1000", [{ field: "SPEND", direction: "DESC" }], 20, 1000],
    ["CAMPAIGN_ID ASC, page 1 of 5000", [{ field: "CAMPAIGN_ID", direction: "ASC" }], 1, 5000],
  ];
  const best = async (work) => {
    let fastest = Number.POSITIVE_INFINITY;
    for (let run = 0; run < runs; run += 1) {
      const start = performance.now();
      await work();
      fastest = Math.min(fastest, performance.now() - start);
    }
    return fastest;
  };
  for (const [name, sort, page, pageSize] of cases) {
    const query = { scope, currency: "GBP", fields: RECORD_FIELDS, sort, page: { page, pageSize } };
    const inSql = planRecordsPage(query, engine.dialect);
    const stored = planRecordsPage(query, engine.dialect, { after: null });
    const money = stored.fields.flatMap((field, column) =>
      field === "spend" || field === "revenue" ? [column] : [],
    );
    let checked = false;
    const sqlMs = await best(() => engine.columns(inSql));
    const jsMs = await best(async () => {
      const columns = await engine.columns(stored);
      const converter = new MoneyConverter("GBP", history);
      const rows = columns[0].length;
      const converted = money.map(() => new Array(rows));
      for (let row = 0; row < rows; row += 1) {
        const source = columns[stored.sourceCurrencyColumn][row];
        const day = columns[stored.boundaryColumns.date][row];
        for (const [index, column] of money.entries())
          converted[index][row] = converter.convert(columns[column][row], source, day);
      }
      if (!checked) {
        // The same numbers, to the bit, as the SQL conversion.
        const reference = await engine.columns(inSql);
        for (const [index, column] of money.entries())
          for (let row = 0; row < rows; row += 1)
            if (Number(reference[column][row]) !== converted[index][row])
              throw new Error(`row ${row} differs: ${reference[column][row]} vs ${converted[index][row]}`);
        checked = true;
      }
    });
    console.log(
      `${engine.name.padEnd(8)} ${name.padEnd(34)} SQL conversion ${sqlMs.toFixed(1).padStart(7)} ms   JS conversion ${jsMs.toFixed(1).padStart(7)} ms   JS/SQL ${(jsMs / sqlMs).toFixed(2)}`,
    );
  }
}

for (const open of [
  values.data && (() => duckdb(values.data)),
  values.database && (() => postgres(values.database)),
]) {
  if (!open) continue;
  const engine = await open();
  try {
    await measure(engine);
  } finally {
    await engine.close();
  }
}
