/**
 * The query planner (STYLE.md principle 5): values are bound as parameters in the dialect it is
 * given, and the only values written into SQL text, currency codes and LIMIT and OFFSET row counts,
 * pass one check each (the closed list of currencies; a whole number).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import type { CurrencyCode } from "../src/currencies.js";
import { DUCKDB_SCHEMA } from "../src/store/duckdb/schema.js";
import type { AggregateQuery, RecordsQuery } from "../src/store/model/query-request.js";
import { planAggregatePage } from "../src/store/reads/aggregate/aggregate-plan.js";
import { planRecordsDayCurrencies, planRecordsPage } from "../src/store/reads/records/records-plan.js";
import { planDataVersion } from "../src/store/reads/versions/versions-plan.js";
import {
  currencyLiteral,
  DUCKDB_DIALECT,
  DUCKDB_SHORT_LIST,
  POSTGRES_DIALECT,
} from "../src/store/sql/sql-dialect.js";

const SCOPE = {
  brandId: "brand-x'; DROP TABLE records; --",
  from: "2021-03-01",
  to: "2021-03-04",
  markets: ["DE", "FR"],
  dataSources: ["google_ads"],
  channels: null,
  campaignIds: null,
};

function recordsQuery(currency: CurrencyCode): RecordsQuery {
  return {
    scope: SCOPE,
    currency,
    fields: ["recordId", "spend"],
    sort: [{ field: "SPEND", direction: "DESC" }],
    page: { page: 2, pageSize: 10 },
  };
}

const AGGREGATE: AggregateQuery = {
  scope: SCOPE,
  currency: "GBP",
  metrics: ["CLICKS", "SPEND"],
  groupBy: ["MARKET"],
  sort: [],
  page: { page: 1, pageSize: 5 },
};

describe("the query planner", () => {
  it("binds the brand, range and grants as parameters, never as text, in either dialect", () => {
    for (const dialect of [DUCKDB_DIALECT, POSTGRES_DIALECT]) {
      for (const plan of [
        planRecordsPage(recordsQuery("GBP"), dialect, { after: null }),
        planRecordsDayCurrencies(recordsQuery("GBP"), dialect),
        planDataVersion(SCOPE, dialect),
      ]) {
        assert.ok(!plan.sql.includes("DROP TABLE"), plan.sql);
        assert.ok(plan.params.includes(SCOPE.brandId));
      }
    }
  });

  it("writes placeholders in the dialect it is given: `?` for DuckDB, `$n` for PostgreSQL", () => {
    const duck = planDataVersion(SCOPE, DUCKDB_DIALECT);
    const postgres = planDataVersion(SCOPE, POSTGRES_DIALECT);
    assert.equal((duck.sql.match(/\?/g) ?? []).length, 5);
    assert.ok(!duck.sql.includes("$1"));
    assert.ok(postgres.sql.includes("$1") && postgres.sql.includes("$5") && !postgres.sql.includes("?"));
    // The brand is bound twice: its days, and its own FX stamps (per-brand versions).
    assert.deepEqual(duck.params, [SCOPE.brandId, SCOPE.from, SCOPE.to, SCOPE.brandId, SCOPE.to]);
    assert.deepEqual(postgres.params, duck.params);
  });

  it("refuses a currency code outside the closed list before it reaches SQL", () => {
    assert.equal(currencyLiteral("GBP"), "'GBP'");
    for (const code of ["XYZ", "gbp", "GBP'; DROP TABLE records; --", ""]) {
      assert.throws(() => currencyLiteral(code), /not a supported currency code/);
      const query = recordsQuery(code as CurrencyCode);
      assert.throws(
        () => planRecordsPage(query, DUCKDB_DIALECT, { after: null }),
        /not a supported currency code/,
      );
      assert.throws(
        () => planAggregatePage({ ...AGGREGATE, currency: query.currency }, POSTGRES_DIALECT),
        /not a supported currency code/,
      );
    }
  });

  it("writes a page's LIMIT and OFFSET as whole numbers and refuses any other row count", () => {
    for (const dialect of [DUCKDB_DIALECT, POSTGRES_DIALECT]) {
      assert.match(
        planRecordsPage(recordsQuery("GBP"), dialect, { after: null }).sql,
        /LIMIT 10 OFFSET 10\)/,
      );
      assert.match(planAggregatePage(AGGREGATE, dialect).sql, /LIMIT 5 OFFSET 0$/);
      for (const pageSize of [1.5, Number.NaN, -1, 2 ** 53]) {
        const query = { ...recordsQuery("GBP"), page: { page: 1, pageSize } };
        assert.throws(() => planRecordsPage(query, dialect, { after: null }), /not a row count/);
      }
    }
  });

  it("has DuckDB cut a page sorted by a value with a Top-N, not a sort of every matching row", async () => {
    const instance = await DuckDBInstance.create(":memory:");
    const connection = await instance.connect();
    try {
      for (const statement of DUCKDB_SCHEMA) await connection.run(statement);
      await connection.run(`INSERT INTO records SELECT 'brand-x', 'r-' || i, DATE '2021-03-01' + CAST(i % 4 AS INTEGER),
        CASE WHEN i % 2 = 0 THEN 'DE' ELSE 'FR' END, 'google_ads', 'search', 'c' || (i % 400), 'C', i, i % 97, i * 37 % 100003,
        0, 0, CASE WHEN i % 3 = 0 THEN 'EUR' ELSE 'GBP' END FROM range(100000) t(i)`);
      const query: RecordsQuery = {
        ...recordsQuery("USD"),
        scope: { ...SCOPE, brandId: "brand-x" },
        page: { page: 4, pageSize: 1000 },
      };
      for (const field of ["SPEND", "CLICKS"] as const) {
        const plan = planRecordsPage({ ...query, sort: [{ field, direction: "DESC" }] }, DUCKDB_DIALECT, {
          after: null,
        });
        const explained = await connection.runAndReadAll(`EXPLAIN ${plan.sql}`, plan.params as string[]);
        const physical = explained
          .getRows()
          .map((row) => String(row[1]))
          .join("\n");
        // (The page's own 1,000 rows are ordered again above it.)
        assert.match(physical, /TOP_N/, physical);
      }
      // A list longer than DUCKDB_SHORT_LIST is matched with IN (one hash join, not a test per
      // value), a shorter one with list_contains; both read the same rows.
      const campaignRows = async (campaignIds: string[]) => {
        const plan = planRecordsPage(
          { ...query, scope: { ...query.scope, campaignIds }, page: { page: 1, pageSize: 5000 } },
          DUCKDB_DIALECT,
          { after: null },
        );
        const read = await connection.runAndReadAll(plan.sql, plan.params as string[]);
        return { sql: plan.sql, rows: read.getRows().length };
      };
      const short = await campaignRows(["c1", "c2"]);
      assert.match(short.sql, /list_contains\(\[\?, \?\], r\.campaign_id\)/);
      const longIds = Array.from({ length: DUCKDB_SHORT_LIST + 1 }, (_, i) => `c${i}`);
      const long = await campaignRows(longIds);
      assert.match(long.sql, /r\.campaign_id IN \((\?, ){8}\?\)/);
      const expected = await connection.runAndReadAll(
        `SELECT count(*) FILTER (WHERE campaign_id IN ('c1', 'c2') AND market IN ('DE', 'FR')),
          count(*) FILTER (WHERE campaign_id IN (${longIds.map((id) => `'${id}'`).join(", ")}) AND market IN ('DE', 'FR'))
        FROM records`,
      );
      const [shortRows, longRows] = expected.getRows()[0]!.map(Number);
      assert.deepEqual([short.rows, long.rows], [shortRows, longRows]);
      assert.ok(shortRows! > 0 && longRows! > shortRows!);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });

  it("places an aggregate page's group count and missing-rate rows after the fields' columns", () => {
    const plan = planAggregatePage(AGGREGATE, DUCKDB_DIALECT);
    assert.deepEqual(plan.fields, ["MARKET", "TOTAL_CLICKS", "TOTAL_SPEND"]);
    assert.deepEqual(plan.windowColumns, { totalCount: 3, missingRateRows: 4 });
    assert.ok(!plan.fields.some((field) => field.startsWith("__")));
  });
});
