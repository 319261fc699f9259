import type { ConversationFilter } from '../filters/filter-values';
import type { ConversationStats, FacetCounts, StatsFacet } from './conversation-stats';

/** The commerce metrics `metrics` may ask for (outcomes-v1.md §4). */
export const STATS_METRICS = ['conversion', 'revenue'] as const;
export type StatsMetric = (typeof STATS_METRICS)[number];

/** The share of conversations with at least one credited order of positive `net`. */
export interface ConversionMetric {
  converted: number;
  /** converted ÷ total; null when total is 0. */
  rate: number | null;
}

/** The orders credited to a set of conversations and not cancelled, in one currency. */
export interface RevenueEntry {
  currency: string;
  orders: number;
  gross: number;
  refunded: number;
  net: number;
  /** net ÷ orders, rounded half up to the minor unit. */
  aov: number;
}

/** `metrics` of a set of conversations: the asked entries only. */
export interface CommerceMetrics {
  conversion?: ConversionMetric;
  /** One entry per currency, alphabetical; `[]` when no order. */
  revenue?: RevenueEntry[];
}

/** Running sums of the conversations of a set and of their orders, per currency. */
export interface MetricsTally {
  total: number;
  converted: number;
  /** Per currency: orders, and the exact sums in minor units. */
  revenue: Map<string, { orders: number; gross: bigint; refunded: bigint; net: bigint }>;
}

export const emptyTally = (): MetricsTally => ({ total: 0, converted: 0, revenue: new Map() });

/** Adds one currency's orders to a tally. */
export function addRevenue(
  tally: MetricsTally,
  currency: string,
  orders: number,
  gross: bigint,
  refunded: bigint,
  net: bigint,
): void {
  const r = tally.revenue.get(currency) ?? { orders: 0, gross: 0n, refunded: 0n, net: 0n };
  r.orders += orders;
  r.gross += gross;
  r.refunded += refunded;
  r.net += net;
  tally.revenue.set(currency, r);
}

/** net ÷ orders rounded half up (net ≥ 0, orders > 0), exactly in integers. */
export function averageOrderValue(net: bigint, orders: number): bigint {
  const n = BigInt(orders);
  return (2n * net + n) / (2n * n);
}

/** The answer's `metrics` from a tally: the asked entries, currencies in alphabetical order. */
export function metricsOf(tally: MetricsTally, metrics: StatsMetric[]): CommerceMetrics {
  const out: CommerceMetrics = {};
  if (metrics.includes('conversion'))
    out.conversion = {
      converted: tally.converted,
      rate: tally.total ? tally.converted / tally.total : null,
    };
  if (metrics.includes('revenue'))
    out.revenue = [...tally.revenue.entries()]
      // A currency whose parts cancel out (a partial day subtracted from a rollup) has no order.
      .filter(([, r]) => r.orders !== 0)
      // ISO 4217 codes are three capitals: code unit order is alphabetical.
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([currency, r]) => ({
        currency,
        orders: r.orders,
        gross: Number(r.gross),
        refunded: Number(r.refunded),
        net: Number(r.net),
        aov: Number(averageOrderValue(r.net, r.orders)),
      }));
  return out;
}

/** What the metrics are read for: the totals, each asked facet's values, each series bucket. */
export interface MetricsRequest {
  metrics: StatsMetric[];
  facets: StatsFacet[];
  /** Series bucket edges (every start, then the last end), or none. */
  starts: Date[];
}

/** The metrics of the totals, per facet value and per series bucket (index as the buckets'). */
export interface MetricsAnswer {
  total: CommerceMetrics;
  facets: Partial<Record<StatsFacet, Map<string, CommerceMetrics>>>;
  series: CommerceMetrics[];
}

/**
 * The commerce metrics of the matching conversations, exact, read from PostgreSQL (the orders
 * live there only): what the OpenSearch engine hands over, as it does its percentiles.
 */
export interface ExactMetrics {
  metrics(siteId: string, filter: ConversationFilter, request: MetricsRequest): Promise<MetricsAnswer>;
}

/**
 * Puts the metrics into an engine's answer: `metrics` of the totals, of every listed facet value
 * and of every series bucket. A value or bucket the metrics did not see (the OpenSearch mirror
 * a little behind PostgreSQL) gets no conversion and no order.
 */
export function attachMetrics(
  result: ConversationStats,
  answer: MetricsAnswer,
  metrics: StatsMetric[],
): void {
  const none = (count: number) => metricsOf({ ...emptyTally(), total: count }, metrics);
  result.metrics = answer.total;
  for (const [facet, counts] of Object.entries(result.facets ?? {}) as Array<[StatsFacet, FacetCounts]>) {
    const of = answer.facets[facet];
    for (const v of counts.values) v.metrics = of?.get(v.value) ?? none(v.count);
  }
  result.series?.forEach((bucket, i) => {
    bucket.metrics = answer.series[i] ?? none(bucket.count);
  });
}
