import { LABEL_BITS } from '../../../database/stats-rollups';
import type { ScoreName } from '../../listing/conversation-filter';
import {
  ConversationStats,
  FacetCounts,
  MAX_FACET_VALUES,
  ScoreSummary,
  SeriesBucket,
  StatsFacet,
  StatsQuery,
} from '../conversation-stats';
import { histogramBins } from '../histogram-bins';
import { SeriesBucketStart } from '../series-buckets';

/*
 * The mergeable aggregates a plan's statements add up to (a time range read by one plan, the
 * whole days of a rollup and the partial days scanned at its ends, two slices of a scan), and
 * the answer they finish into.
 */

export interface ScorePartial {
  n: number;
  sum: number;
  min: number | null;
  max: number | null;
  hist: number[];
}

interface SeriesPartial {
  n: number;
  labeled: number;
  scores: Partial<Record<ScoreName, { n: number; sum: number }>>;
}

/** Mergeable aggregates of one part of the matching rows. */
export interface StatsPart {
  total: number;
  facets: Map<StatsFacet, Map<string, number>>;
  scores: Map<ScoreName, ScorePartial>;
  series: SeriesPartial[];
}

/** A numeric column as read (bigint and numeric come as text; NULL is 0). */
export const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

export function emptyPartial(query: StatsQuery, buckets: number): StatsPart {
  return {
    total: 0,
    facets: new Map(query.facets.map((f) => [f, new Map()])),
    scores: new Map(
      query.scores.map((s) => [
        s,
        { n: 0, sum: 0, min: null, max: null, hist: new Array(query.bins).fill(0) },
      ]),
    ),
    series: Array.from({ length: buckets }, () => ({
      n: 0,
      labeled: 0,
      scores: Object.fromEntries(query.scores.map((s) => [s, { n: 0, sum: 0 }])),
    })),
  };
}

/** Adds `n` matches of `value` to a facet the request asked for. */
export function add(part: StatsPart, facet: StatsFacet, value: string, n: number): void {
  const values = part.facets.get(facet);
  if (!values || n === 0) return;
  values.set(value, (values.get(value) ?? 0) + n);
}

/** Adds a row of a series statement (its count, labeled count, score counts and sums) to a bucket. */
export function addSeries(
  part: StatsPart,
  scores: ScoreName[],
  bucket: number,
  row: Record<string, unknown>,
): void {
  const b = part.series[bucket];
  if (!b) return;
  b.n += num(row.n);
  b.labeled += num(row.labeled);
  for (const name of scores) {
    b.scores[name]!.n += num(row[`${name}_n`]);
    b.scores[name]!.sum += num(row[`${name}_sum`]);
  }
}

/**
 * The part with every sum negated (counts, facets, score counts, sums and bins, series) and no
 * min or max: merged with another part, it subtracts (the complement plan).
 */
export function negate(part: StatsPart): StatsPart {
  return {
    total: -part.total,
    facets: new Map(
      [...part.facets].map(([facet, values]) => [facet, new Map([...values].map(([v, n]) => [v, -n]))]),
    ),
    scores: new Map(
      [...part.scores].map(([name, s]) => [
        name,
        { n: -s.n, sum: -s.sum, min: null, max: null, hist: s.hist.map((n) => -n) },
      ]),
    ),
    series: part.series.map((b) => ({
      n: -b.n,
      labeled: -b.labeled,
      scores: Object.fromEntries(
        Object.entries(b.scores).map(([name, x]) => [name, { n: -x!.n, sum: -x!.sum }]),
      ),
    })),
  };
}

export const lowest = (a: number | null, b: unknown): number | null =>
  b === null || b === undefined ? a : a === null ? Number(b) : Math.min(a, Number(b));
export const highest = (a: number | null, b: unknown): number | null =>
  b === null || b === undefined ? a : a === null ? Number(b) : Math.max(a, Number(b));

/**
 * Adds `n` to `counts[b]` for each of the low LABEL_BITS bits set in `bits` (a bigint's decimal
 * text). Numbers are exact below 2^53 (every value of LABEL_BITS = 32 bits); BigInt otherwise.
 */
export function countBits(counts: number[], bits: string, n: number): void {
  const v = Number(bits);
  if (Number.isSafeInteger(v) && v >= 0) {
    // The low 32 bits as an unsigned 32-bit integer (JavaScript's bit operators work on those),
    // higher bits by division.
    const low = v % 2 ** 32;
    for (let b = 0; b < LABEL_BITS; b++)
      if (b < 32 ? (low >>> b) & 1 : Math.floor(v / 2 ** b) % 2) counts[b] += n;
    return;
  }
  const big = BigInt(bits);
  for (let b = 0; b < LABEL_BITS; b++) if ((big >> BigInt(b)) & 1n) counts[b] += n;
}

/** The bin of a value (comparison with the edges k/bins, as width_bucket does). */
function binIndex(value: number, bins: number): number {
  let k = Math.min(bins - 1, Math.floor(value * bins));
  while (k > 0 && value < k / bins) k--;
  while (k < bins - 1 && value >= (k + 1) / bins) k++;
  return k;
}

/**
 * Adds rollup bins (width 1/width, index j = [j/width, (j+1)/width)) to an asked histogram:
 * a rollup bin inside one asked bin adds its count; the others (straddling an asked edge) are
 * returned, to be counted through the score index.
 */
export function binIntoHistogram(
  s: ScorePartial,
  present: Array<[number, number]>,
  width: number,
  bins: number,
): Array<{ lo: number; hi: number; last: boolean }> {
  const straddling: Array<{ lo: number; hi: number; last: boolean }> = [];
  for (const [j, n] of present) {
    s.n += n;
    const lo = j / width;
    const hi = (j + 1) / width;
    const k = binIndex(lo, bins);
    // The rollup bin lies in one asked bin when that bin ends at or after the rollup bin's end.
    if (k === bins - 1 || (k + 1) / bins >= hi) s.hist[k] += n;
    else straddling.push({ lo, hi, last: j === width - 1 });
  }
  return straddling;
}

export function merge(query: StatsQuery, parts: StatsPart[], buckets: number): StatsPart {
  const out = emptyPartial(query, buckets);
  for (const p of parts) {
    out.total += p.total;
    for (const [facet, values] of p.facets) for (const [v, n] of values) add(out, facet, v, n);
    for (const [name, s] of p.scores) {
      const o = out.scores.get(name)!;
      o.n += s.n;
      o.sum += s.sum;
      o.min = lowest(o.min, s.min);
      o.max = highest(o.max, s.max);
      s.hist.forEach((n, i) => (o.hist[i] += n));
    }
    p.series.forEach((b, i) => {
      const o = out.series[i];
      o.n += b.n;
      o.labeled += b.labeled;
      for (const name of query.scores) {
        o.scores[name]!.n += b.scores[name]!.n;
        o.scores[name]!.sum += b.scores[name]!.sum;
      }
    });
  }
  return out;
}

/** Unicode code point order (JS `<` compares UTF-16 code units, which differs above U+FFFF). */
export function compareCodePoints(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0)! - y[i].codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** Count descending, then value ascending by code points; at most MAX_FACET_VALUES, the rest in `other`. */
export function facetCounts(values: Map<string, number>): FacetCounts {
  const sorted = [...values.entries()]
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1] || compareCodePoints(a[0], b[0]));
  return {
    values: sorted.slice(0, MAX_FACET_VALUES).map(([value, count]) => ({ value, count })),
    other: sorted.slice(MAX_FACET_VALUES).reduce((s, [, n]) => s + n, 0),
  };
}

/** The answer from the merged part: facets sorted, score summaries, the series' buckets. */
export function finish(
  query: StatsQuery,
  part: StatsPart,
  starts: SeriesBucketStart[],
  asOf: Date,
): ConversationStats {
  const out: ConversationStats = { total: part.total, asOf };
  if (query.facets.length)
    out.facets = Object.fromEntries(query.facets.map((f) => [f, facetCounts(part.facets.get(f)!)]));
  if (query.scores.length) {
    const bins = histogramBins(query.bins);
    out.scores = Object.fromEntries(
      query.scores.map((name): [ScoreName, ScoreSummary] => {
        const s = part.scores.get(name)!;
        return [
          name,
          {
            count: s.n,
            mean: s.n ? s.sum / s.n : null,
            min: s.n ? s.min : null,
            max: s.n ? s.max : null,
            histogram: bins.map((b, i) => ({ from: b.from, to: b.to, count: s.hist[i] })),
          },
        ];
      }),
    );
  }
  if (query.series) {
    out.series = starts.map((bucket, i): SeriesBucket => {
      const b = part.series[i];
      return {
        start: bucket.start,
        count: b.n,
        labeled: b.labeled,
        ...(query.scores.length
          ? {
              scores: Object.fromEntries(
                query.scores.map((name) => {
                  const s = b.scores[name]!;
                  return [name, s.n ? s.sum / s.n : null];
                }),
              ),
            }
          : {}),
      };
    });
  }
  return out;
}
