// The few statistics the harness reports, written once: percentiles of latencies, medians of rounds.

/** The `p`-th percentile (nearest rank) of ascending `sorted`; 0 when empty. */
export function percentile(sorted, p) {
  return sorted.length === 0
    ? 0
    : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** The median of `numbers`, nulls left out; null when none is left. */
export function median(numbers) {
  const sorted = numbers.filter((value) => value !== null && value !== undefined).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
