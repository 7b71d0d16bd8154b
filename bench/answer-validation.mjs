#!/usr/bin/env node
// Times the client's answer validation (issue 20: every answer is checked with valibot before it
// is used) on a 5000-row records page, beside the baseline measured in the same run: the
// JSON.parse of the same page, which every client pays anyway.
//   npm run build && node bench/answer-validation.mjs [--rounds 40]
import { checkPage, checkRecords } from "../packages/client/dist/src/answer-validation.js";
import { RECORD_FIELDS } from "../packages/contract/dist/src/index.js";
import { benchArgs } from "./harness/bench-args.mjs";

const USAGE = `node bench/answer-validation.mjs [--rounds 40]   (after npm run build)
  --rounds N   rounds of each measurement; the median is reported (default 40)
`;
const values = benchArgs(
  "bench/answer-validation.mjs",
  USAGE,
  { rounds: { type: "string", default: "40" } },
  ["rounds"],
);
const rounds = Number(values.rounds);
const window = { from: "2026-01-01", to: "2026-03-31" };
const rows = Array.from({ length: 5000 }, (_, index) => ({
  recordId: `acme-20260201-${index}`,
  date: `2026-02-0${1 + (index % 9)}`,
  market: "GB",
  dataSource: "google_ads",
  channel: "search",
  campaignId: `cmp-acme-gb-google-${index}`,
  campaignName: "Acme GB Search – Holiday Gifting",
  impressions: 1686,
  clicks: 46,
  spend: 33.26,
  conversions: 2.66,
  revenue: 294.83,
  currency: "EUR",
}));
const text = JSON.stringify({ data: { marketingRecords: rows } });
const pageInfo = { page: 1, pageSize: 5000, totalCount: 5000, hasNextPage: false, dataVersion: "uk.1" };

/** Mean milliseconds of `run` over `rounds` rounds, after one warm-up. */
function time(run) {
  run();
  const start = process.hrtime.bigint();
  for (let round = 0; round < rounds; round += 1) run();
  return Number(process.hrtime.bigint() - start) / 1e6 / rounds;
}

const parse = time(() => JSON.parse(text));
const validated = time(() => {
  const raw = JSON.parse(text).data.marketingRecords;
  const page = checkPage(raw, pageInfo, { field: "marketingRecords", window, page: 1, pageSize: 5000 });
  checkRecords(page.rows, RECORD_FIELDS, window);
});
console.log(
  `| 5000-row records page (${(text.length / 1e6).toFixed(2)} MB) | JSON.parse (baseline) ${parse.toFixed(1)} ms | ` +
    `parse + validation ${validated.toFixed(1)} ms | ${(validated / parse).toFixed(2)}× |`,
);
