// The service's own latency by question class (`mdq_question_duration_seconds{class}`,
// docs/observability.md), read from each instance's `/metrics` on its admin listener before and
// after a herd: the difference of the histograms, summed over the instances, is what the region
// did during it, measured inside the service from receiving each request to sending its response.
// The herd's clients share the machine's cores with 40+ client processes, so their own p99
// holds their CPU starvation too; this one does not.

/** The histogram's name in the Prometheus text exposition. */
const METRIC = "mdq_question_duration_seconds";
/** CONTRACT §8's bound for cheap questions, in seconds (a bucket bound of the histogram). */
export const CHEAP_BOUND_SECONDS = 0.05;

/**
 * `{class: {count, buckets: {le: cumulative count}}}` from one exposition's text (`le` as written,
 * `+Inf` included).
 */
export function questionHistogram(text) {
  const classes = {};
  const entry = (name) => {
    classes[name] ??= { count: 0, buckets: {} };
    return classes[name];
  };
  for (const line of text.split("\n")) {
    if (!line.startsWith(METRIC)) continue;
    const bucket = /^mdq_question_duration_seconds_bucket\{le="([^"]+)",class="([^"]+)"\} (\S+)$/.exec(line);
    if (bucket) entry(bucket[2]).buckets[bucket[1]] = Number(bucket[3]);
    const count = /^mdq_question_duration_seconds_count\{class="([^"]+)"\} (\S+)$/.exec(line);
    if (count) entry(count[1]).count = Number(count[2]);
  }
  return classes;
}

/** `a` + `sign` × `b`, class by class and bucket by bucket (sums over instances, differences in time). */
function combine(a, b, sign) {
  const result = structuredClone(a);
  for (const [name, { count, buckets }] of Object.entries(b)) {
    result[name] ??= { count: 0, buckets: {} };
    result[name].count += sign * count;
    for (const [le, n] of Object.entries(buckets))
      result[name].buckets[le] = (result[name].buckets[le] ?? 0) + sign * n;
  }
  return result;
}

/** The histograms of every instance (`adminUrls`), summed; an instance that does not answer throws. */
export async function readQuestionHistograms(adminUrls) {
  let total = {};
  for (const url of adminUrls) {
    const response = await fetch(`${url}/metrics`);
    if (!response.ok) throw new Error(`${url}/metrics answered HTTP ${response.status}`);
    total = combine(total, questionHistogram(await response.text()), 1);
  }
  return total;
}

/**
 * Per class, what `after` − `before` says: requests, the share answered within 50 ms, and the
 * p99's upper bound in ms (the first bucket bound whose cumulative count reaches 99 %; null past
 * the last finite bound). The p99 is above 50 ms exactly when the share within 50 ms is below 99 %.
 */
export function serverLatency(before, after) {
  const during = combine(after, before, -1);
  const classes = {};
  for (const [name, { count, buckets }] of Object.entries(during)) {
    if (count <= 0) continue;
    const bounds = Object.keys(buckets)
      .filter((le) => le !== "+Inf")
      .map(Number)
      .sort((x, y) => x - y);
    const p99Bound = bounds.find((le) => buckets[String(le)] >= 0.99 * count);
    classes[name] = {
      n: count,
      within50: (buckets[String(CHEAP_BOUND_SECONDS)] ?? 0) / count,
      p99UpperMs: p99Bound === undefined ? null : p99Bound * 1000,
    };
  }
  return classes;
}
