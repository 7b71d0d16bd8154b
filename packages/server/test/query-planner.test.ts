/**
 * The query planner (STYLE.md principle 5): values are bound as parameters in the dialect it is
 * given, and the only values written into SQL text, currency codes, pass one check against the
 * closed list of currencies.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CurrencyCode } from "../src/currencies.js";
import {
  planAggregatePage,
  planDataVersion,
  planRecordsDayCurrencies,
  planRecordsPage,
} from "../src/store/query-planner.js";
import type { AggregateQuery, RecordsQuery } from "../src/store/query-request.js";
import { currencyLiteral, DUCKDB_DIALECT, POSTGRES_DIALECT } from "../src/store/sql-dialect.js";

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

  it("places an aggregate page's group count and missing-rate rows after the fields' columns", () => {
    const plan = planAggregatePage(AGGREGATE, DUCKDB_DIALECT);
    assert.deepEqual(plan.fields, ["MARKET", "TOTAL_CLICKS", "TOTAL_SPEND"]);
    assert.deepEqual(plan.windowColumns, { totalCount: 3, missingRateRows: 4 });
    assert.ok(!plan.fields.some((field) => field.startsWith("__")));
  });
});
