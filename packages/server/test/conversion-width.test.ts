/**
 * Money converted in SQL runs on BIGINT where a row's amount × rate fits, and on the engine's wide
 * integer where it does not (store/sql/money-conversion.ts `convertedDivision`). On both stores, on both sides
 * of that edge and far past it, SQL gives what record-money.ts gives in JavaScript:
 * - an export's rows (converted in SQL) equal a records page's (converted in JavaScript);
 * - aggregates read from the records (a campaign filter; SQL) equal the rollup's (JavaScript);
 * - a page sorted by spend (its sort key converted in SQL) is in the order of its values.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CurrencyCode } from "@mdq/contract";
import { recordObjects } from "../src/graphql/records-json.js";
import { type AggregateQuery, RECORD_FIELDS, type RecordsQuery } from "../src/store/model/query-request.js";
import type { StoredRecord } from "../src/store/model/store.js";
import {
  batchValues,
  type ExportQuery,
  FIRST_WINDOW_ROWS,
  type RecordExports,
} from "../src/store/reads/export/record-export.js";
import { type FreshStore, onDuckDb, onPostgres } from "./fresh-stores.js";

const BRAND = "width-brand";
const DAY = "2021-03-01";
const DAY_BEFORE = "2021-02-28";
const CAMPAIGNS = ["cmp-small", "cmp-edge", "cmp-huge"];
/** IDR per EUR, in millionths: a large rate, so that ordinary amounts reach the edge. */
const IDR_RATE_E6 = 17_123_456_789n;
const RATES = [
  { currency: "IDR", date: "2021-02-01", rateE6: IDR_RATE_E6 },
  { currency: "JPY", date: "2021-02-01", rateE6: 129_877_001n },
  { currency: "GBP", date: "2021-02-01", rateE6: 850_123n },
] as const;

/**
 * EUR amounts (ten-thousandths) around the largest whose product with the IDR rate stays under
 * 9 × 10¹⁸ (the BIGINT test's bound), small ones, and the largest a load accepts (10¹⁸).
 */
function amounts(): bigint[] {
  const edge = 9_000_000_000_000_000_000n / IDR_RATE_E6;
  return [1n, 12_345n, 987_654_321n, edge - 1n, edge, edge + 1n, 10n ** 16n, 10n ** 18n];
}

function records(): StoredRecord[] {
  const sources: { currency: CurrencyCode; campaign: string }[] = [
    { currency: "EUR", campaign: CAMPAIGNS[0]! },
    { currency: "IDR", campaign: CAMPAIGNS[1]! },
    { currency: "JPY", campaign: CAMPAIGNS[2]! },
  ];
  return amounts().flatMap((amount, index) =>
    sources.map(({ currency, campaign }) => ({
      recordId: `w-${currency}-${index}`,
      date: DAY,
      market: "DE",
      dataSource: "google_ads",
      channel: ["search", "social"][index % 2]!,
      campaignId: campaign,
      campaignName: "Campaign",
      impressions: 1,
      clicks: 1,
      spendE4: amount,
      conversionsE4: 0n,
      revenueE4: amount / 7n,
      currency,
    })),
  );
}

const SCOPE = {
  brandId: BRAND,
  from: DAY,
  to: DAY,
  markets: ["DE"],
  dataSources: ["google_ads"],
  channels: null,
  campaignIds: null,
};

function recordsQuery(currency: CurrencyCode, sort: RecordsQuery["sort"]): RecordsQuery {
  return { scope: SCOPE, currency, fields: RECORD_FIELDS, sort, page: { page: 1, pageSize: 100 } };
}

/**
 * Rows of the day before `DAY`, more than an export's first window: the first window comes as
 * typed rows (record-export.ts), so these fill it and `DAY`'s rows come in the engine's text.
 */
const FILLER_ROWS = FIRST_WINDOW_ROWS + 100;

function fillerRecords(): StoredRecord[] {
  return Array.from({ length: FILLER_ROWS }, (_, index) => ({
    recordId: `filler-${String(index).padStart(5, "0")}`,
    date: DAY_BEFORE,
    market: "DE",
    dataSource: "google_ads",
    channel: "search",
    campaignId: CAMPAIGNS[0]!,
    campaignName: "Filler",
    impressions: 1,
    clicks: 1,
    spendE4: 1n,
    conversionsE4: 0n,
    revenueE4: 1n,
    currency: "EUR",
  }));
}

/** The export's rows of `DAY`, parsed from its NDJSON body as the engine writes it. */
async function exported(store: RecordExports, currency: CurrencyCode): Promise<unknown[]> {
  const query: ExportQuery = { scope: { ...SCOPE, from: DAY_BEFORE }, currency, after: null };
  const opened = await store.openRecordExport(query);
  const chunks: Uint8Array[] = [];
  let typedRows = 0;
  for await (const part of opened.engineBody("ndjson")!) {
    if (part instanceof Uint8Array) chunks.push(part);
    else {
      assert.ok(
        batchValues(part, "date").every((date) => date === DAY_BEFORE),
        "only filler rows come typed",
      );
      typedRows += part.rowCount;
    }
  }
  assert.equal(typedRows, FIRST_WINDOW_ROWS);
  return Buffer.concat(chunks)
    .toString("utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line))
    .filter((row) => row.date === DAY);
}

async function assertSameConversions(store: FreshStore): Promise<void> {
  await store.upsertFxRates([...RATES]);
  await store.replaceRecords(BRAND, [...fillerRecords(), ...records()]);
  for (const currency of ["IDR", "EUR", "JPY", "GBP"] as CurrencyCode[]) {
    const [page] = await store.queryRecords(
      recordsQuery(currency, [{ field: "DATE_DAY", direction: "ASC" }]),
    );
    const walked = recordObjects(page!);
    assert.equal(walked.length, records().length);
    assert.deepEqual(await exported(store, currency), walked, currency);

    for (const field of ["SPEND", "REVENUE"] as const) {
      const [sorted] = await store.queryRecords(recordsQuery(currency, [{ field, direction: "DESC" }]));
      const values = recordObjects(sorted!).map((row) => row[field.toLowerCase()] as number);
      assert.deepEqual(
        values,
        [...values].sort((a, b) => b - a),
        `${currency} by ${field}`,
      );
    }

    const aggregate = (campaignIds: string[] | null): AggregateQuery => ({
      scope: { ...SCOPE, campaignIds },
      currency,
      metrics: ["SPEND", "REVENUE"],
      groupBy: ["CHANNEL"],
      sort: [],
      page: { page: 1, pageSize: 10 },
    });
    const [rollup, fromRecords] = await Promise.all([
      store.queryAggregate(aggregate(null)),
      store.queryAggregate(aggregate(CAMPAIGNS)),
    ]);
    assert.equal(rollup.rows.length, 2);
    assert.deepEqual(fromRecords.rows, rollup.rows, currency);
  }
}

describe("money converted on BIGINT and past it", () => {
  it("converts as JavaScript does on DuckDB", () => onDuckDb(assertSameConversions));

  it("converts as JavaScript does on PostgreSQL", () => onPostgres(assertSameConversions));
});
