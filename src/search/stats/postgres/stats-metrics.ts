import { TAXONOMY_TOKENS } from '../../../labels/taxonomy';
import { KIND, LABEL_BITS } from '../../../database/stats-rollups';
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
import { HOUR_MS } from '../series-buckets';
import { comparisonPlan } from './stats-comparison-rollups';
import { countBits } from './stats-parts';
import type { ComparisonRollup } from './stats-plan';
import type { ReadRows } from './stats-reads';
import { daysRange } from './stats-rollup-executor';
import {
  dailySql,
  hourlySeriesSql,
  outcomeRollupSql,
  outcomeSeriesSql,
  siteRollupSql,
  TimeRange,
} from './stats-rollup-sql';
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

/**
 * The tallies of the sets a request reads (the totals, each facet value, each series bucket), by
 * set and value; rows of signed parts (rollups, scanned partial days added or subtracted) add up.
 */
class MetricsTallies {
  private readonly tallies = new Map<string, MetricsTally>();

  constructor(private readonly request: MetricsRequest) {}

  tally(set: string, value: string): MetricsTally {
    const id = `${set}\u0000${value}`;
    let t = this.tallies.get(id);
    if (!t) this.tallies.set(id, (t = emptyTally()));
    return t;
  }

  /**
   * The tallies a row of set `set` counts in: its own, or for the labels facet (a scanned row
   * keyed by its label_bits) one per token whose bit it has.
   */
  into(set: string, value: string, labelBits: boolean): MetricsTally[] {
    if (!labelBits) return [this.tally(set, value)];
    const has = new Array<number>(LABEL_BITS).fill(0);
    countBits(has, value, 1);
    return has.flatMap((on, b) => (on ? [this.tally(set, TAXONOMY_TOKENS[b])] : []));
  }

  answer(): MetricsAnswer {
    const { metrics, facets, starts } = this.request;
    const answer: MetricsAnswer = { total: metricsOf(this.tally('t', ''), metrics), facets: {}, series: [] };
    facets.forEach((facet: StatsFacet, i) => {
      const values = new Map<string, CommerceMetrics>();
      for (const [id, t] of this.tallies) {
        const [set, value] = id.split('\u0000');
        // A value whose parts cancel out (a partial day subtracted) has no conversation.
        if (set === `f${i}` && t.total) values.set(value, metricsOf(t, metrics));
      }
      answer.facets[facet] = values;
    });
    for (let b = 1; b < starts.length; b++)
      answer.series.push(metricsOf(this.tallies.get(`s\u0000${b}`) ?? emptyTally(), metrics));
    return answer;
  }
}

/** The set of a rollup row's kind: the totals (kind 0) or the asked facet's (`f<i>`). */
function setOfKind(request: MetricsRequest): (kind: number) => string | undefined {
  const sets = new Map<number, string>([[KIND.all, 't']]);
  request.facets.forEach((facet, i) => sets.set(KIND[facet], `f${i}`));
  return (kind) => sets.get(kind);
}

/** A rollup row's value in its set: a label token's name for kind 6 (its bit), else its key. */
const valueOfKey = (kind: number, key: string): string =>
  kind === KIND.labels ? TAXONOMY_TOKENS[Number(key)] : key;

/** Adds the rows of the scan statements (stats-metrics' own) over `filter`, times `sign`. */
async function scanInto(
  tallies: MetricsTallies,
  read: ReadRows,
  setLocal: (settings: Record<string, string>) => Promise<void>,
  siteId: string,
  filter: ConversationFilter,
  request: MetricsRequest,
  sign: 1 | -1,
): Promise<void> {
  const { conversions, revenue, nestedLoop } = metricsSql(siteId, filter, request);
  if (nestedLoop) await setLocal({ enable_hashjoin: 'off', enable_mergejoin: 'off' });
  const labels = request.facets.indexOf('labels');
  const isLabels = (k: string) => labels >= 0 && k === `f${labels}`;
  for (const row of await read(conversions))
    for (const t of tallies.into(String(row.k), String(row.key), isLabels(String(row.k)))) {
      t.total += sign * Number(row.n);
      t.converted += sign * Number(row.converted);
    }
  if (request.metrics.includes('revenue'))
    for (const row of await read(revenue))
      for (const t of tallies.into(String(row.k), String(row.key), isLabels(String(row.k))))
        revenueInto(t, row, Number(row.n), sign);
}

/** Adds a row's orders of one currency (`currency`; `gross`, `refunded`, `net` as text) to a tally, times `sign`. */
function revenueInto(t: MetricsTally, row: Record<string, unknown>, orders: number, sign: 1 | -1): void {
  const signed = (v: unknown) => BigInt(sign) * BigInt(String(v));
  addRevenue(
    t,
    String(row.currency),
    sign * orders,
    signed(row.gross),
    signed(row.refunded),
    signed(row.net),
  );
}

/** How a rollup row adds to a set's tally, times `sign`. */
type RollupInto = (t: MetricsTally, row: Record<string, unknown>, sign: 1 | -1) => void;

/** A row of the daily, site or hourly rollups: its conversations (`n`). */
const conversationsInto: RollupInto = (t, row, sign) => {
  t.total += sign * Number(row.n);
};

/** A row of the outcome rollups: its converted conversations (currency ''), or one currency's orders. */
const outcomesInto: RollupInto = (t, row, sign) => {
  t.converted += sign * Number(row.converted);
  if (row.currency !== '' && Number(row.orders) !== 0) revenueInto(t, row, Number(row.orders), sign);
};

/**
 * The rollups' part of a rollup plan: the conversations per set from the daily and site rollups
 * (the series from the hourly), the converted ones and the orders from the outcome rollups,
 * over the plan's whole days.
 */
async function rollupsInto(
  tallies: MetricsTallies,
  read: ReadRows,
  siteId: string,
  plan: ComparisonRollup,
  request: MetricsRequest,
): Promise<void> {
  const setOf = setOfKind(request);
  const kinds = [KIND.all, ...request.facets.map((f) => KIND[f])];
  const add = async (statement: Statement, into: RollupInto, sign: 1 | -1) => {
    for (const row of await read(statement)) {
      const set = setOf(Number(row.kind));
      if (set) into(tallies.tally(set, valueOfKey(Number(row.kind), String(row.key))), row, sign);
    }
  };
  const { read: days } = plan;
  if (days.sum === 'site') {
    await add(siteRollupSql(siteId, kinds), conversationsInto, 1);
    await add(outcomeRollupSql(siteId, kinds, undefined), outcomesInto, 1);
    if (days.minus.length) {
      await add(dailySql(siteId, days.minus, kinds), conversationsInto, -1);
      await add(outcomeRollupSql(siteId, kinds, days.minus), outcomesInto, -1);
    }
  } else if (days.sum === 'days') {
    await add(dailySql(siteId, [days.days], kinds), conversationsInto, 1);
    await add(outcomeRollupSql(siteId, kinds, [days.days]), outcomesInto, 1);
  }
  if (request.starts.length) {
    const range = daysRange(plan);
    for (const row of await read(hourlySeriesSql(siteId, range, request.starts)))
      conversationsInto(tallies.tally('s', String(row.b)), row, 1);
    for (const row of await read(outcomeSeriesSql(siteId, range, request.starts)))
      outcomesInto(tallies.tally('s', String(row.b)), row, 1);
  }
}

/** Whether every series bucket edge is on a UTC hour (the hourly outcome rollup places its rows). */
const onTheHour = (starts: Date[]) => starts.every((s) => s.getTime() % HOUR_MS === 0);

/**
 * Reads the metrics (in the caller's transaction: its snapshot): for a filter of a window alone,
 * the rollups over its whole days and the partial days at its ends scanned, as the comparisons
 * read them (comparisonPlan); else, or with series edges off the hour, the matching rows.
 */
export async function readMetrics(
  read: ReadRows,
  setLocal: (settings: Record<string, string>) => Promise<void>,
  siteId: string,
  filter: ConversationFilter,
  request: MetricsRequest,
  useRollups = true,
): Promise<MetricsAnswer> {
  const tallies = new MetricsTallies(request);
  const plan = await comparisonPlan(read, siteId, filter, { useRollups });
  if (plan.source === 'rollup' && onTheHour(request.starts)) {
    await rollupsInto(tallies, read, siteId, plan, request);
    const within = (range: TimeRange): ConversationFilter => ({ ...filter, from: range.from, to: range.to });
    for (const edge of plan.edges) await scanInto(tallies, read, setLocal, siteId, within(edge), request, 1);
    for (const outside of plan.minus)
      await scanInto(tallies, read, setLocal, siteId, within(outside), request, -1);
  } else await scanInto(tallies, read, setLocal, siteId, filter, request, 1);
  return tallies.answer();
}
