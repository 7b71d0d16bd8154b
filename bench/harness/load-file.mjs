// The marketing records files the load benches load (bench/load.mjs, bench/replicas.mjs): one
// DuckDB SELECT generating realistic rows, written by `COPY (...) TO` in any format DuckDB writes.

/**
 * One row per (day, market, data source, campaign): row i is day i % days; the rest of i names
 * the market, the source and the campaign, so the natural key is unique. Values vary per row and
 * are deterministic; campaign names repeat as they do in real exports. Parquet gets real types
 * (DATE, INTEGER, DECIMAL), as an export from a warehouse would have.
 * `withRecordIds` false leaves the record_id column out (ids derived by SHA-256 on load).
 * @example COPY (${recordsQuery({ rows: 1000000, days: 90 })}) TO 'records.csv' (HEADER)
 */
export function recordsQuery({ rows, days, withRecordIds = true }) {
  return `
    WITH n AS (SELECT i, i % ${days} AS day, i // ${days} AS k FROM range(${rows}) t(i)),
    r AS (
      SELECT i, day, k,
        ['GB','US','DE','FR','JP','SE','ES','IT'][1 + k % 8] AS market,
        ['google_ads','meta_ads','tiktok_ads','amazon_ads'][1 + (k // 8) % 4] AS data_source,
        hash(i) AS h
      FROM n
    )
    SELECT
      ${withRecordIds ? "'rec-' || lpad(CAST(i AS VARCHAR), 9, '0') AS record_id," : ""}
      DATE '2026-01-01' + CAST(day AS INTEGER) AS date,
      market,
      data_source,
      ['search','social','display','video'][1 + (k // 32) % 4] AS channel,
      'c-' || CAST(k // 32 AS VARCHAR) AS campaign_id,
      'Campaign ' || CAST((k // 32) % 5000 AS VARCHAR) || ' ' || market AS campaign_name,
      CAST(h % 100000 AS INTEGER) AS impressions,
      CAST(h % 3000 AS INTEGER) AS clicks,
      CAST((h % 10000000) / 100 AS DECIMAL(18, 2)) AS spend,
      CAST((h % 4000) / 100 AS DECIMAL(18, 2)) AS conversions,
      CAST((h % 30000000) / 1000 AS DECIMAL(18, 3)) AS revenue,
      CASE market WHEN 'GB' THEN 'GBP' WHEN 'US' THEN 'USD' WHEN 'JP' THEN 'JPY' WHEN 'SE' THEN 'SEK'
        ELSE 'EUR' END AS currency
    FROM r ORDER BY day, i`;
}
