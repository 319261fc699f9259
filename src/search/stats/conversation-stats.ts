import type { ConversationFilter, ScoreName } from '../filters/filter-values';
import type { CommerceMetrics, StatsMetric } from './commerce-metrics';

/** The facets a stats request may ask for (analytics-v1.md §1). */
export const STATS_FACETS = ['channel', 'language', 'agentId', 'labelStatus', 'feedback', 'labels'] as const;
export type StatsFacet = (typeof STATS_FACETS)[number];

export const STATS_INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export type StatsInterval = (typeof STATS_INTERVALS)[number];

/** The fields `percentiles` may ask for (outcomes-v1.md §5). */
export const PERCENTILE_FIELDS = ['durationMs', 'messageCount', 'quality', 'service', 'trust'] as const;
export type PercentileField = (typeof PERCENTILE_FIELDS)[number];

/** Nearest-rank percentiles of one field over the matching conversations having it (null: none has it). */
export interface Percentiles {
  p50: number | null;
  p90: number | null;
  p95: number | null;
  p99: number | null;
}

/** At most this many values per facet; the rest are summed in `other`. */
export const MAX_FACET_VALUES = 1000;

export interface StatsSeriesRequest {
  interval: StatsInterval;
  /** IANA zone name where buckets start (validated). */
  timezone: string;
  /** First bucket is the one holding `from`; last is the one holding the last instant before `to`. */
  from: Date;
  to: Date;
}

/** A parsed, validated stats request: the listing's filter plus what to aggregate. */
export interface StatsQuery {
  filter: ConversationFilter;
  facets: StatsFacet[];
  scores: ScoreName[];
  /** Histogram bins over [0, 1], 1–100. */
  bins: number;
  series?: StatsSeriesRequest;
  /** Exact nearest-rank percentiles of these fields (none when absent). */
  percentiles?: PercentileField[];
  /** Commerce metrics of the totals, facet values and series buckets (none when absent). */
  metrics?: StatsMetric[];
}

export interface FacetCounts {
  /** Non-zero counts, count descending then value ascending (code points), at most MAX_FACET_VALUES. */
  values: Array<{ value: string; count: number; metrics?: CommerceMetrics }>;
  /** Sum of the counts of the values beyond the listed ones. */
  other: number;
}

export interface ScoreSummary {
  count: number;
  mean: number | null;
  min: number | null;
  max: number | null;
  /** `bins` equal-width bins over [0, 1]: [from, to) each, the last one including 1. */
  histogram: Array<{ from: number; to: number; count: number }>;
}

export interface SeriesBucket {
  /** Local start of the bucket with its offset, e.g. 2026-11-01T00:00:00.000+01:00. */
  start: string;
  count: number;
  labeled: number;
  /** Means of the scores asked for (null when no value); absent when no scores were asked for. */
  scores?: Partial<Record<ScoreName, number | null>>;
  metrics?: CommerceMetrics;
}

export interface ConversationStats {
  /** Exact number of matching conversations, never capped. */
  total: number;
  facets?: Partial<Record<StatsFacet, FacetCounts>>;
  scores?: Partial<Record<ScoreName, ScoreSummary>>;
  series?: SeriesBucket[];
  percentiles?: Partial<Record<PercentileField, Percentiles>>;
  metrics?: CommerceMetrics;
  /** The data is complete up to this instant (Postgres: the read; OpenSearch: the mirror's watermark). */
  asOf: Date;
}

/**
 * The aggregation engine behind `GET …/conversations/stats`: Postgres by default, OpenSearch
 * when the listing is served by it. The same request gives the same numbers on both.
 */
export interface ConversationStatsEngine {
  stats(siteId: string, query: StatsQuery): Promise<ConversationStats>;
}

/**
 * Exact nearest-rank percentiles over the matching conversations, read from PostgreSQL: what an
 * engine that cannot compute them exactly (OpenSearch's are estimates) hands over.
 */
export interface ExactPercentiles {
  percentiles(
    siteId: string,
    filter: ConversationFilter,
    fields: PercentileField[],
  ): Promise<Partial<Record<PercentileField, Percentiles>>>;
}

/** Injection token of the configured ConversationStatsEngine. */
export const CONVERSATION_STATS = Symbol('ConversationStatsEngine');
