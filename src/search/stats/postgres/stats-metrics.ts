import { TAXONOMY_TOKENS } from '../../../labels/taxonomy';
import { LABEL_BITS } from '../../../database/stats-rollups';
import type { Statement } from '../../../database/sql-statement';
import type { ConversationFilter } from '../../filters/filter-values';
import {
  addRevenue,
  CommerceMetrics,
  emptyTally,
  MetricsAnswer,
  MetricsRequest,
  metricsOf,
  MetricsTally,
} from '../commerce-metrics';
import type { StatsFacet } from '../conversation-stats';
import { countBits } from './stats-parts';
import type { ReadRows } from './stats-reads';
import { FACET_COLUMN, filterOver, probesMatches } from './stats-scan-sql';

/**
 * The sets a matching conversation counts in, as (kind, key) pairs: the totals (`t`), one per
 * asked facet (`f<i>`: its value; feedback `positive` and `negative` each when the conversation
 * has such feedback; labels its label_bits when labeled, split per token by the caller) and the
 * series bucket (`s`: width_bucket over the bucket edges, 1 = first bucket).
 */
function setsOf(request: MetricsRequest, p: { add(v: unknown, cast?: string): string }): string[] {
  const sets = [`('t', '')`];
  request.facets.forEach((facet, i) => {
    if (facet === 'feedback') {
      sets.push(`('f${i}', CASE WHEN c.feedback_positive > 0 THEN 'positive' END)`);
      sets.push(`('f${i}', CASE WHEN c.feedback_negative > 0 THEN 'negative' END)`);
    } else if (facet === 'labels') {
      sets.push(`('f${i}', CASE WHEN c.label_status = 'labeled' THEN c.label_bits::text END)`);
    } else sets.push(`('f${i}', c.${FACET_COLUMN[facet]}::text)`);
  });
  if (request.starts.length) {
    const e = p.add(
      request.starts.map((s) => s.toISOString()),
      '::timestamptz[]',
    );
    sets.push(`('s', width_bucket(c.created_at, ${e})::text)`);
  }
  return sets;
}

/**
 * Two statements over the filter's matching rows (filterOver, walk form, as the percentiles
 * read them), each row counted once in every set it belongs to (a LATERAL VALUES list of
 * (kind, key) pairs): the conversations and the converted ones per set; the orders credited to
 * them and not cancelled per set and currency (count and exact sums of total, refunded, net),
 * joined by the index of credited orders.
 */
export function metricsSql(
  siteId: string,
  filter: ConversationFilter,
  request: MetricsRequest,
): { conversions: Statement; revenue: Statement; nestedLoop: boolean } {
  const build = (revenue: boolean): Statement => {
    const sql = filterOver(siteId, filter, { from: filter.from, to: filter.to }, false);
    const sets = setsOf(request, sql.params);
    const matches = `SELECT * FROM ${sql.from ?? 'conversations'} WHERE ${[...sql.range, ...sql.rows].join(' AND ')}`;
    const text = revenue
      ? `SELECT x.k, x.key, o.currency, count(*)::bigint AS n, sum(o.total)::text AS gross,
           sum(o.refunded)::text AS refunded, sum(o.net)::text AS net
         FROM (${matches}) c
         JOIN orders o ON o.credited_conversation_id = c.id AND o.status <> 'cancelled'
         CROSS JOIN LATERAL (VALUES ${sets.join(', ')}) x(k, key)
         WHERE x.key IS NOT NULL GROUP BY 1, 2, 3`
      : `SELECT x.k, x.key, count(*)::bigint AS n, count(*) FILTER (WHERE c.converted)::bigint AS converted
         FROM (${matches}) c
         CROSS JOIN LATERAL (VALUES ${sets.join(', ')}) x(k, key)
         WHERE x.key IS NOT NULL GROUP BY 1, 2`;
    return { text, values: sql.params.values };
  };
  return {
    conversions: build(false),
    revenue: request.metrics.includes('revenue') ? build(true) : { text: '', values: [] },
    nestedLoop: probesMatches(filter, false),
  };
}

/** Reads the metrics (in the caller's transaction: its snapshot). */
export async function readMetrics(
  read: ReadRows,
  setLocal: (settings: Record<string, string>) => Promise<void>,
  siteId: string,
  filter: ConversationFilter,
  request: MetricsRequest,
): Promise<MetricsAnswer> {
  const { conversions, revenue, nestedLoop } = metricsSql(siteId, filter, request);
  if (nestedLoop) await setLocal({ enable_hashjoin: 'off', enable_mergejoin: 'off' });
  const tallies = new Map<string, MetricsTally>();
  const tally = (k: string, key: string) => {
    const id = `${k}\u0000${key}`;
    let t = tallies.get(id);
    if (!t) tallies.set(id, (t = emptyTally()));
    return t;
  };
  for (const row of await read(conversions)) {
    const t = tally(String(row.k), String(row.key));
    t.total += Number(row.n);
    t.converted += Number(row.converted);
  }
  if (request.metrics.includes('revenue'))
    for (const row of await read(revenue))
      addRevenue(
        tally(String(row.k), String(row.key)),
        String(row.currency),
        Number(row.n),
        BigInt(String(row.gross)),
        BigInt(String(row.refunded)),
        BigInt(String(row.net)),
      );

  const answer: MetricsAnswer = {
    total: metricsOf(tally('t', ''), request.metrics),
    facets: {},
    series: [],
  };
  request.facets.forEach((facet: StatsFacet, i) => {
    const values = new Map<string, CommerceMetrics>();
    if (facet === 'labels') {
      // A token's tally is the sum of the tallies of the label_bits values having its bit.
      const tokens = Array.from({ length: LABEL_BITS }, emptyTally);
      for (const [id, t] of tallies) {
        const [k, bits] = id.split('\u0000');
        if (k !== `f${i}`) continue;
        const has = new Array<number>(LABEL_BITS).fill(0);
        countBits(has, bits, 1);
        has.forEach((on, b) => {
          if (!on) return;
          tokens[b].total += t.total;
          tokens[b].converted += t.converted;
          for (const [currency, r] of t.revenue)
            addRevenue(tokens[b], currency, r.orders, r.gross, r.refunded, r.net);
        });
      }
      tokens.forEach((t, b) => {
        if (t.total) values.set(TAXONOMY_TOKENS[b], metricsOf(t, request.metrics));
      });
    } else
      for (const [id, t] of tallies) {
        const [k, value] = id.split('\u0000');
        if (k === `f${i}`) values.set(value, metricsOf(t, request.metrics));
      }
    answer.facets[facet] = values;
  });
  for (let b = 1; b < request.starts.length; b++)
    answer.series.push(metricsOf(tallies.get(`s\u0000${b}`) ?? emptyTally(), request.metrics));
  return answer;
}
