/**
 * The equal-width score bins of analytics-v1.md §1 over [0, 1]: bin k is [k/bins, (k+1)/bins),
 * the last one including 1. Edges are the doubles `k / bins`, and a value's bin is decided by
 * comparing it with those edges (never `floor(value * bins)`, which puts 0.29 in [0.28, 0.29)
 * because 0.29 * 100 = 28.999999999999996). Both engines use these edges: Postgres with
 * `width_bucket(score, inner edges)`, OpenSearch with a `range` aggregation on them (its
 * `histogram` aggregation divides, and would disagree at the edges).
 */
export interface HistogramBin {
  from: number;
  to: number;
}

export function histogramBins(bins: number): HistogramBin[] {
  return Array.from({ length: bins }, (_, k) => ({ from: k / bins, to: (k + 1) / bins }));
}

/** The edges strictly inside (0, 1): 1/bins … (bins-1)/bins, as `width_bucket` takes them. */
export function innerEdges(bins: number): number[] {
  return Array.from({ length: bins - 1 }, (_, k) => (k + 1) / bins);
}

/** The bin of a value in [0, 1] (the reference the property tests compare engines with). */
export function binOf(value: number, bins: number): number {
  let k = 0;
  while (k < bins - 1 && value >= (k + 1) / bins) k++;
  return k;
}
