// GraphQL's latency while something else runs (bench/export.mjs, bench/export-alternate.mjs):
// page 1 of a records range (1000 rows, every field) asked back to back for a while.
import { RECORD_SELECTION } from "./queries.mjs";

/** Page latencies of GraphQL (page 1 of 1000 rows) for `ms`, as a sorted list. */
export async function graphqlLatencies(base, token, brand, range, ms) {
  const latencies = [];
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const started = performance.now();
    const response = await fetch(`${base}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        query: `query($c: ID!, $r: DateRangeInput!) { marketingRecords(clientId: $c, dateRange: $r) { ${RECORD_SELECTION} } }`,
        variables: { c: brand, r: range },
      }),
    });
    await response.arrayBuffer();
    latencies.push(performance.now() - started);
  }
  return latencies.sort((a, b) => a - b);
}

/** The 99th percentile of a sorted list. */
export const p99 = (sorted) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];
