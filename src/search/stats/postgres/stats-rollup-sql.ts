import type { Statement } from '../../../database/sql-statement';
import { KIND } from '../../../database/stats-rollups';
import { SCORE_COLUMN } from '../../filter-sql/conversation-filter-sql';
import type { ScoreName } from '../../listing/conversation-filter';
import { HOUR_MS } from '../series-buckets';

/*
 * The statistics rollups' statements (docs/statistics.md, "Rollups"). The rollup tables are
 * append-only (migration AppendOnlyStatsRollups): a key may have several rows until the
 * compaction folds them, so every read sums the rows of a key.
 */

/** A half-open creation-time range; undefined ends are open. ISO text. */
export interface TimeRange {
  from?: string;
  to?: string;
}

/** `day` conditions over UTC day ranges ([from, to), open ends allowed; none: false), parameters appended to `values`. */
function dayRanges(values: unknown[], ranges: Array<{ from?: string; to?: string }>): string {
  const ors = ranges.map((r) => {
    const where: string[] = [];
    if (r.from !== undefined) where.push(`day >= $${values.push(r.from)}::date`);
    if (r.to !== undefined) where.push(`day < $${values.push(r.to)}::date`);
    return where.length ? `(${where.join(' AND ')})` : 'true';
  });
  return `(${ors.join(' OR ') || 'false'})`;
}

/** Conditions of `column` (a timestamptz) over [from, to) (open ends allowed), parameters appended to `values`. */
function timeRange(values: unknown[], range: TimeRange, column = 'hour'): string[] {
  return [
    ...(range.from !== undefined ? [`${column} >= $${values.push(range.from)}::timestamptz`] : []),
    ...(range.to !== undefined ? [`${column} < $${values.push(range.to)}::timestamptz`] : []),
  ];
}

/** Rollup: the first and last UTC day the site's daily rollup holds. */
export function daySpanSql(siteId: string): Statement {
  return {
    text: `SELECT min(day)::text AS first, max(day)::text AS last FROM conversation_stats_daily WHERE site_id = $1`,
    values: [siteId],
  };
}

/**
 * The site's conversations per UTC day over the days a creation-time range touches (daily
 * rollup, kind 0): where a scan splits in two slices of about as many rows.
 */
export function dayCountsSql(siteId: string, range: TimeRange): Statement {
  const values: unknown[] = [siteId];
  const where = ['site_id = $1', `kind = ${KIND.all}`];
  const day = (iso: string) => new Date(iso).toISOString().slice(0, 10);
  if (range.from !== undefined) where.push(`day >= $${values.push(day(range.from))}::date`);
  if (range.to !== undefined) where.push(`day <= $${values.push(day(range.to))}::date`);
  return {
    text: `SELECT day::text AS day, sum(n)::bigint AS n FROM conversation_stats_daily WHERE ${where.join(' AND ')}
      GROUP BY day ORDER BY day`,
    values,
  };
}

/**
 * Rollup: per kind and key, the sum over the site's daily rows in the given day ranges
 * ([from, to), UTC dates; open ends allowed), with `sign` -1 (subtracted from the site's
 * all-time rows) or +1.
 */
export function dailySql(
  siteId: string,
  ranges: Array<{ from?: string; to?: string }>,
  kinds: number[],
): Statement {
  const values: unknown[] = [siteId, kinds];
  const days = dayRanges(values, ranges);
  return {
    text: `SELECT kind, key, sum(n)::bigint AS n FROM conversation_stats_daily
      WHERE site_id = $1 AND kind = ANY($2::smallint[]) AND ${days} GROUP BY kind, key`,
    values,
  };
}

/** Rollup: the site's all-time rows of the asked kinds. */
export function siteRollupSql(siteId: string, kinds: number[]): Statement {
  return {
    text: `SELECT kind, key, sum(n)::bigint AS n FROM conversation_stats_site WHERE site_id = $1 AND kind = ANY($2::smallint[])
      GROUP BY kind, key HAVING sum(n) <> 0`,
    values: [siteId, kinds],
  };
}

/** Rollup: each score's count and exact sum over [from, to) from the hourly rows. */
export function scoreSumsSql(siteId: string, range: TimeRange): Statement {
  const values: unknown[] = [siteId];
  const where = ['site_id = $1', ...timeRange(values, range)];
  return {
    text: `SELECT sum(quality_n)::bigint AS quality_n, sum(quality_sum)::text AS quality_sum,
      sum(service_n)::bigint AS service_n, sum(service_sum)::text AS service_sum,
      sum(trust_n)::bigint AS trust_n, sum(trust_sum)::text AS trust_sum
      FROM conversation_stats_hourly WHERE ${where.join(' AND ')}`,
    values,
  };
}

/** Rollup: series buckets from the hourly rows over [from, to) (hour-aligned bucket starts only). */
export function hourlySeriesSql(siteId: string, range: TimeRange, starts: Date[]): Statement {
  const values: unknown[] = [siteId, starts.map((s) => s.toISOString())];
  const where = ['site_id = $1', ...timeRange(values, range)];
  return {
    text: `SELECT width_bucket(hour, $2::timestamptz[]) AS b, sum(n)::bigint AS n, sum(labeled)::bigint AS labeled,
      sum(quality_n)::bigint AS quality_n, sum(quality_sum)::text AS quality_sum,
      sum(service_n)::bigint AS service_n, sum(service_sum)::text AS service_sum,
      sum(trust_n)::bigint AS trust_n, sum(trust_sum)::text AS trust_sum
      FROM conversation_stats_hourly WHERE ${where.join(' AND ')} GROUP BY 1`,
    values,
  };
}

/** The outcome rollups' figures summed over a key's rows (the amounts as exact text). */
const OUTCOME_FIGURES = `sum(converted)::bigint AS converted, sum(orders)::bigint AS orders,
      sum(gross)::text AS gross, sum(refunded)::text AS refunded, sum(net)::text AS net`;

/**
 * Outcome rollups (migration OutcomeRollups): per kind, key and currency, the converted
 * conversations and the credited orders' figures, over the site's daily rows in `ranges` (UTC
 * dates, `to` excluded, open ends allowed) or, without ranges, its all-time rows.
 */
export function outcomeRollupSql(
  siteId: string,
  kinds: number[],
  ranges: Array<{ from?: string; to?: string }> | undefined,
): Statement {
  const values: unknown[] = [siteId, kinds];
  const days = ranges ? ` AND ${dayRanges(values, ranges)}` : '';
  const table = ranges ? 'conversation_stats_outcome_daily' : 'conversation_stats_outcome_site';
  return {
    text: `SELECT kind, key, currency, ${OUTCOME_FIGURES} FROM ${table}
      WHERE site_id = $1 AND kind = ANY($2::smallint[])${days}
      GROUP BY kind, key, currency HAVING sum(converted) <> 0 OR sum(orders) <> 0`,
    values,
  };
}

/** Outcome rollups: series buckets per currency from the hourly rows over [from, to) (hour-aligned bucket starts only). */
export function outcomeSeriesSql(siteId: string, range: TimeRange, starts: Date[]): Statement {
  const values: unknown[] = [siteId, starts.map((s) => s.toISOString())];
  const where = ['site_id = $1', ...timeRange(values, range)];
  return {
    text: `SELECT width_bucket(hour, $2::timestamptz[]) AS b, currency, ${OUTCOME_FIGURES}
      FROM conversation_stats_outcome_hourly WHERE ${where.join(' AND ')}
      GROUP BY 1, 2 HAVING sum(converted) <> 0 OR sum(orders) <> 0`,
    values,
  };
}

/** The hours holding a bucket edge that is not on the hour (each once, in order), as epoch ms. */
export function straddledHours(starts: Date[]): number[] {
  const hours = new Set<number>();
  for (const s of starts)
    if (s.getTime() % HOUR_MS !== 0) hours.add(Math.floor(s.getTime() / HOUR_MS) * HOUR_MS);
  return [...hours].sort((a, b) => a - b);
}

/**
 * Rollup: series buckets over [from, to) whose edges fall on quarter hours (every zone in use):
 * the hourly rows of the hours holding no edge, plus the quarter rows (conversation_stats_quarter)
 * of the hours holding one, each row placed by `width_bucket` over the edges. A quarter never
 * straddles an edge, nor does an hour without one: each row lies whole in one bucket. The quarters
 * are named (`= ANY`, four per hour): index probes, a few per bucket.
 */
export function quarterSeriesSql(siteId: string, range: TimeRange, starts: Date[]): Statement {
  const hours = straddledHours(starts);
  const iso = (t: number) => new Date(t).toISOString();
  const quarters = hours.flatMap((h) => [0, 1, 2, 3].map((k) => iso(h + (k * HOUR_MS) / 4)));
  const values: unknown[] = [siteId, starts.map((s) => s.toISOString()), hours.map(iso), quarters];
  const within = (column: string) =>
    timeRange(values, range, column)
      .map((w) => ` AND ${w}`)
      .join('');
  const sums = `n, labeled, quality_n, quality_sum, service_n, service_sum, trust_n, trust_sum`;
  return {
    text: `SELECT width_bucket(at, $2::timestamptz[]) AS b, sum(n)::bigint AS n, sum(labeled)::bigint AS labeled,
      sum(quality_n)::bigint AS quality_n, sum(quality_sum)::text AS quality_sum,
      sum(service_n)::bigint AS service_n, sum(service_sum)::text AS service_sum,
      sum(trust_n)::bigint AS trust_n, sum(trust_sum)::text AS trust_sum
      FROM (
        SELECT hour AS at, ${sums} FROM conversation_stats_hourly
        WHERE site_id = $1 AND hour <> ALL($3::timestamptz[])${within('hour')}
        UNION ALL
        SELECT quarter, ${sums} FROM conversation_stats_quarter
        WHERE site_id = $1 AND quarter = ANY($4::timestamptz[])${within('quarter')}
      ) r GROUP BY 1`,
    values,
  };
}

/** The cell dimensions of conversation_stats_cell a filter may use (the cube plan). */
export interface CellFilter {
  channel?: string;
  language?: string;
  labelStatus?: string;
  feedback?: 'positive' | 'negative';
  /** On conversations only (the agent plan reads the score indexes with it). */
  agentId?: string;
}

/** Conditions on conversation_stats_cell (or, with `rows`, on conversations) for a cell filter. */
function cellConditions(f: CellFilter, values: unknown[], rows = false): string[] {
  const where: string[] = [];
  if (f.channel !== undefined) where.push(`channel = $${values.push(f.channel)}`);
  if (f.language !== undefined) where.push(`language = $${values.push(f.language)}`);
  if (f.labelStatus !== undefined) where.push(`label_status = $${values.push(f.labelStatus)}`);
  if (f.feedback === 'positive') where.push(rows ? 'feedback_positive > 0' : 'fp');
  if (f.feedback === 'negative') where.push(rows ? 'feedback_negative > 0' : 'fn');
  if (f.agentId !== undefined) where.push(`agent_id = $${values.push(f.agentId)}`);
  return where;
}

/**
 * Cube: the matching cells' counts per cell (kind 0, for the channel / language / label status /
 * feedback facets) and per kind and key (agents, tokens, 0.05 score bins with their value sums).
 */
export function cellSql(siteId: string, f: CellFilter, kinds: number[]): Statement {
  const values: unknown[] = [siteId, kinds];
  const where = ['site_id = $1', ...cellConditions(f, values)].join(' AND ');
  return {
    text: `SELECT 0 AS kind, channel, language, label_status, fp, fn, NULL AS key, sum(n)::bigint AS n, NULL AS total
      FROM conversation_stats_cell WHERE ${where} AND kind = 0 AND n <> 0 GROUP BY channel, language, label_status, fp, fn
      UNION ALL
      SELECT kind, NULL, NULL, NULL, NULL, NULL, key, sum(n)::bigint, sum(total)::text
      FROM conversation_stats_cell WHERE ${where} AND kind = ANY($2::smallint[]) AND kind <> 0 GROUP BY kind, key`,
    values,
  };
}

/**
 * The rows a score read (edges, straddling bins) runs over: a creation-time range (rollup plan)
 * and / or cell dimensions (cube and agent plans).
 */
export type RowScope = CellFilter & TimeRange;

/** Conditions on conversations for a row scope. */
function scopeConditions(scope: RowScope, values: unknown[]): string[] {
  return [...cellConditions(scope, values, true), ...timeRange(values, scope, 'created_at')];
}

/**
 * The exact lowest / highest value of each asked score among the scope's rows, in one statement,
 * each walk of the score's index starting at the bound (the first / last non-empty rollup bin),
 * so it reads a handful of entries.
 */
export function scoreEdgesSql(
  siteId: string,
  scope: RowScope,
  asks: Array<{ name: ScoreName; side: 'min' | 'max'; bound: number }>,
): Statement {
  const values: unknown[] = [siteId];
  const conditions = scopeConditions(scope, values);
  const columns = asks.map(({ name, side, bound }) => {
    const c = SCORE_COLUMN[name];
    const where = [
      'site_id = $1',
      `${c} IS NOT NULL`,
      `${c} ${side === 'min' ? '>=' : '<='} $${values.push(bound)}::float8`,
      ...conditions,
    ];
    return `(SELECT ${c} FROM conversations WHERE ${where.join(' AND ')} ORDER BY site_id, ${c} ${side === 'min' ? 'ASC' : 'DESC'} LIMIT 1) AS ${name}_${side}`;
  });
  return { text: `SELECT ${columns.join(', ')}`, values };
}

/**
 * Histogram counts of the scope's rows inside rollup bins that straddle an edge of the asked
 * bins (a bin count the rollup bins cannot give alone), through the score index.
 */
export function straddleSql(
  siteId: string,
  scope: RowScope,
  name: ScoreName,
  ranges: Array<{ lo: number; hi: number; last: boolean }>,
  edges: number[],
): Statement {
  const c = SCORE_COLUMN[name];
  const values: unknown[] = [siteId, edges];
  const conditions = scopeConditions(scope, values);
  const parts = ranges.map(({ lo, hi, last }) => {
    const where = [
      'site_id = $1',
      `${c} IS NOT NULL`,
      `${c} >= $${values.push(lo)}::float8`,
      `${c} ${last ? '<=' : '<'} $${values.push(hi)}::float8`,
      ...conditions,
    ];
    return `SELECT width_bucket(${c}, $2::float8[]) AS b, count(*)::bigint AS n FROM conversations WHERE ${where.join(' AND ')} GROUP BY 1`;
  });
  return { text: parts.join(' UNION ALL '), values };
}

/** The site's all-time counts: conversations, labeled ones, per agent, per label token (plan choices). */
export function siteCountsSql(siteId: string): Statement {
  return {
    text: `SELECT kind, key, sum(n)::bigint AS n FROM conversation_stats_site
      WHERE site_id = $1 AND (kind IN (${KIND.all}, ${KIND.agentId}, ${KIND.labels}) OR (kind = ${KIND.labelStatus} AND key = 'labeled'))
      GROUP BY kind, key`,
    values: [siteId],
  };
}

/**
 * Agent plan: the agent's all-time rollup rows of the asked kinds (conversations, channel,
 * language, label status, feedback, label tokens, 0.01 score bins with their values' sum).
 */
export function agentSql(siteId: string, agentId: string, kinds: number[]): Statement {
  return {
    text: `SELECT kind, key, sum(n)::bigint AS n, sum(total)::text AS total FROM conversation_stats_agent
      WHERE site_id = $1 AND agent_id = $2 AND kind = ANY($3::smallint[])
      GROUP BY kind, key HAVING sum(n) <> 0 OR sum(total) <> 0`,
    values: [siteId, agentId, kinds],
  };
}
