/** Summary of a set of timings in milliseconds. */
export interface Summary {
  n: number;
  median: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/**
 * The p-th percentile (0..100) by linear interpolation between the closest ranks (the method of
 * numpy's default and of most spreadsheets). The input need not be sorted; it is not modified.
 */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new RangeError('percentile of no samples');
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be 0..100, got ${p}`);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
}

export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) throw new RangeError('summary of no samples');
  return {
    n: samples.length,
    median: median(samples),
    p99: percentile(samples, 99),
    mean: samples.reduce((a, b) => a + b, 0) / samples.length,
    // Not Math.min(...samples): a spread of a few hundred thousand samples overflows the stack.
    min: samples.reduce((a, b) => Math.min(a, b)),
    max: samples.reduce((a, b) => Math.max(a, b)),
  };
}

/** How a set of samples spreads: count, p50, p99 and max (all 0 when there are none). */
export interface Spread {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

export function spread(samples: readonly number[]): Spread {
  if (samples.length === 0) return { n: 0, p50: 0, p99: 0, max: 0 };
  return {
    n: samples.length,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    max: samples.reduce((a, b) => Math.max(a, b)),
  };
}

/** Milliseconds elapsed since `start` (a process.hrtime.bigint() reading). */
export function elapsedMs(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/**
 * Appends `samples` to `into`. Not `into.push(...samples)`: a spread passes every sample as an
 * argument, and a round of a few seconds at several thousand requests a second overflowed the
 * stack ("Maximum call stack size exceeded", 8-second floor rounds, session 30).
 */
export function append(into: number[], samples: readonly number[]): void {
  for (const sample of samples) into.push(sample);
}
