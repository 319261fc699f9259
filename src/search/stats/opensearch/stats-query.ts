import type { FeedbackKind, ScoreName } from '../../listing/conversation-filter';
import { FEEDBACK_KINDS } from '../../listing/conversation-filter';
import { TAXONOMY_TOKENS } from '../../../labels/taxonomy';
import { buildFilterQuery, FEEDBACK_FIELD, SCORE_FIELD } from '../../opensearch/conversation-query';
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
import type { SeriesBucketStart } from '../series-buckets';

/** Keyword field of each terms facet (feedback and labels are aggregated differently). */
const TERMS_FIELD = {
  channel: 'channel',
  language: 'language',
  agentId: 'agent_id',
  labelStatus: 'label_status',
} as const;

/**
 * Count descending, then term ascending. A keyword's `_key` order compares the UTF-8 bytes of
 * the terms, which is Unicode code point order, the order the spec asks for.
 */
const FACET_ORDER = [{ _count: 'desc' }, { _key: 'asc' }];

const LABELED = { term: { label_status: 'labeled' } };

/** Raised when an answer cannot be turned into exact statistics; the fallback then answers. */
export class OpenSearchStatsError extends Error {
  override readonly name = 'OpenSearchStatsError';
}

/**
 * The one `_search` of a stats request: no hits (`size: 0`), the exact total
 * (`track_total_hits: true`) and one aggregation per part asked for, all under the listing's
 * own bool query (buildFilterQuery), so both engines count the same conversations.
 */
export function buildStatsBody(siteId: string, query: StatsQuery) {
  const aggs: Record<string, object> = {};
  for (const facet of query.facets) aggs[`facet_${facet}`] = facetAggregation(facet);
  for (const name of query.scores) {
    const field = SCORE_FIELD[name];
    // `stats` gives count, min, max and avg of the documents that have a value: a missing
    // (null) score is not indexed, so it is left out as the spec asks.
    aggs[`score_${name}`] = { stats: { field } };
    aggs[`histogram_${name}`] = {
      range: {
        field,
        // The shared edges k/bins (histogram-bins.ts), compared, not divided: `from` inclusive,
        // `to` exclusive; the last bin has no upper edge so that it includes 1 (scores never
        // exceed 1). The `histogram` aggregation would compute floor(score * bins) and
        // disagree with Postgres at the edges.
        ranges: histogramBins(query.bins).map((edge, k) =>
          k === query.bins - 1 ? { from: edge.from } : { from: edge.from, to: edge.to },
        ),
      },
    };
  }
  if (query.series) {
    const scoreMeans: Record<string, object> = {};
    for (const name of query.scores) scoreMeans[name] = { avg: { field: SCORE_FIELD[name] } };
    aggs.series = {
      date_histogram: {
        field: 'created_at',
        // Calendar units in the zone: local hour, midnight, Monday (OpenSearch's weeks are ISO
        // weeks), the 1st; DST-correct days of 23 or 25 hours. Empty buckets come from the
        // shared bucket list, so only non-empty ones are asked for.
        calendar_interval: query.series.interval,
        time_zone: query.series.timezone,
        min_doc_count: 1,
      },
      aggs: { labeled: { filter: LABELED }, ...scoreMeans },
    };
  }
  return {
    query: buildFilterQuery(siteId, query.filter),
    size: 0,
    track_total_hits: true,
    aggs,
  };
}

function facetAggregation(facet: StatsFacet): object {
  if (facet === 'feedback') {
    // A conversation counts once per kind when at least one message carries that rating.
    return {
      filters: {
        filters: Object.fromEntries(
          FEEDBACK_KINDS.map((kind) => [kind, { range: { [FEEDBACK_FIELD[kind]]: { gte: 1 } } }]),
        ),
      },
    };
  }
  if (facet === 'labels') {
    // Each token of the vocabulary among matching labeled conversations.
    return {
      filter: LABELED,
      aggs: {
        tokens: {
          terms: {
            field: 'label_tokens',
            size: MAX_FACET_VALUES,
            order: FACET_ORDER,
            include: [...TAXONOMY_TOKENS],
          },
        },
      },
    };
  }
  return { terms: { field: TERMS_FIELD[facet], size: MAX_FACET_VALUES, order: FACET_ORDER } };
}

interface TermsAnswer {
  doc_count_error_upper_bound?: number;
  sum_other_doc_count?: number;
  buckets?: Array<{ key: string; doc_count: number }>;
}
interface StatsAnswer {
  count?: number;
  min?: number | null;
  max?: number | null;
  avg?: number | null;
}
interface RangeAnswer {
  buckets?: Array<{ from?: number; to?: number; doc_count: number }>;
}
interface DateHistogramAnswer {
  buckets?: Array<{ key: number; doc_count: number } & Record<string, unknown>>;
}
type Aggregations = Record<string, unknown>;

/**
 * Statistics from the answer of buildStatsBody's search. `seriesBuckets` is the full bucket
 * list of the series (shared helper), in order; OpenSearch's non-empty buckets are placed on it
 * by their start instant. Anything that would make a number inexact or unplaceable (a total
 * reported as a lower bound, a terms count with an error bound, a bucket starting where no
 * bucket of the list starts) throws OpenSearchStatsError instead of answering wrong.
 */
export function parseStatsResponse(
  body: unknown,
  query: StatsQuery,
  asOf: Date,
  seriesBuckets?: SeriesBucketStart[],
): ConversationStats {
  const answer = body as {
    hits?: { total?: { value: number; relation: string } | number };
    aggregations?: Aggregations;
  };
  const total = answer.hits?.total;
  if (total === undefined) throw new OpenSearchStatsError('OpenSearch answered without hits.total');
  if (typeof total !== 'number' && total.relation !== 'eq')
    throw new OpenSearchStatsError(`OpenSearch reported the total as a lower bound (${total.relation})`);
  const aggs = answer.aggregations ?? {};
  const stats: ConversationStats = { total: typeof total === 'number' ? total : total.value, asOf };

  if (query.facets.length) {
    stats.facets = {};
    for (const facet of query.facets) stats.facets[facet] = parseFacet(facet, aggs[`facet_${facet}`]);
  }
  if (query.scores.length) {
    stats.scores = {};
    for (const name of query.scores)
      stats.scores[name] = parseScore(name, aggs[`score_${name}`], aggs[`histogram_${name}`], query.bins);
  }
  if (query.series) {
    if (!seriesBuckets) throw new Error('the series bucket list is needed to read a series');
    stats.series = parseSeries(aggs.series, query.scores, seriesBuckets);
  }
  return stats;
}

function required<T>(value: unknown, what: string): T {
  if (value === undefined || value === null)
    throw new OpenSearchStatsError(`OpenSearch answered without the ${what} aggregation`);
  return value as T;
}

function parseFacet(facet: StatsFacet, raw: unknown): FacetCounts {
  if (facet === 'feedback') {
    const buckets = required<{ buckets?: Record<FeedbackKind, { doc_count: number }> }>(
      raw,
      'feedback',
    ).buckets;
    const values = FEEDBACK_KINDS.map((kind) => ({
      value: kind,
      count: required<{ doc_count: number }>(buckets?.[kind], `feedback.${kind}`).doc_count,
    }))
      .filter((v) => v.count > 0)
      .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
    return { values, other: 0 };
  }
  const terms =
    facet === 'labels'
      ? required<TermsAnswer>(required<{ tokens?: TermsAnswer }>(raw, 'labels').tokens, 'labels.tokens')
      : required<TermsAnswer>(raw, facet);
  // With one shard (the index's setting) terms counts are exact; should the index ever have
  // more, a non-zero error bound means a count may be short: refuse rather than answer it.
  if ((terms.doc_count_error_upper_bound ?? 0) !== 0)
    throw new OpenSearchStatsError(
      `OpenSearch's ${facet} counts are approximate (error bound ${terms.doc_count_error_upper_bound})`,
    );
  return {
    values: (terms.buckets ?? []).map((b) => ({ value: String(b.key), count: b.doc_count })),
    other: terms.sum_other_doc_count ?? 0,
  };
}

function parseScore(name: ScoreName, rawStats: unknown, rawHistogram: unknown, bins: number): ScoreSummary {
  const s = required<StatsAnswer>(rawStats, `score_${name}`);
  const count = s.count ?? 0;
  const ranges = required<RangeAnswer>(rawHistogram, `histogram_${name}`).buckets ?? [];
  if (ranges.length !== bins)
    throw new OpenSearchStatsError(`OpenSearch answered ${ranges.length} histogram bins for ${bins}`);
  return {
    count,
    mean: count > 0 ? (s.avg ?? null) : null,
    min: count > 0 ? (s.min ?? null) : null,
    max: count > 0 ? (s.max ?? null) : null,
    // Range buckets come back sorted by `from`, which is the order the ranges were asked in;
    // each bucket's `from` is checked against its edge all the same.
    histogram: histogramBins(bins).map((edge, k) => {
      const bucket = ranges[k];
      if (bucket.from !== undefined && bucket.from !== edge.from)
        throw new OpenSearchStatsError(`OpenSearch answered bin ${k} from ${bucket.from}, not ${edge.from}`);
      return { ...edge, count: bucket.doc_count };
    }),
  };
}

function parseSeries(raw: unknown, scores: ScoreName[], buckets: SeriesBucketStart[]): SeriesBucket[] {
  const found = required<DateHistogramAnswer>(raw, 'series').buckets ?? [];
  const byStart = new Map(found.map((b) => [Number(b.key), b]));
  const known = new Set(buckets.map((b) => b.at.getTime()));
  const lastStart = buckets.length ? buckets[buckets.length - 1].at.getTime() : -Infinity;
  for (const key of byStart.keys()) {
    // Past the last bucket: created after the series' end (no `to` filter, so the total counts
    // them: back-filled or skewed clocks), in no bucket of the series.
    if (key > lastStart) continue;
    if (!known.has(key))
      throw new OpenSearchStatsError(
        `OpenSearch placed conversations in a bucket starting at ${new Date(key).toISOString()}, which is not a bucket of the series`,
      );
  }
  return buckets.map((bucket) => {
    const hit = byStart.get(bucket.at.getTime());
    const out: SeriesBucket = {
      start: bucket.start,
      count: hit?.doc_count ?? 0,
      labeled: (hit?.labeled as { doc_count?: number } | undefined)?.doc_count ?? 0,
    };
    if (scores.length) {
      out.scores = {};
      for (const name of scores)
        out.scores[name] = (hit?.[name] as { value?: number | null } | undefined)?.value ?? null;
    }
    return out;
  });
}
