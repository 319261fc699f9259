import { DURATION_BUCKET_SQL, GROUP_DIM, VALUE_FIELD } from '../../../database/stats-rollups';
import { SqlParams, Statement } from '../../../database/sql-statement';
import type { ConversationFilter, ScoreName } from '../../filters/filter-values';
import { SCORE_COLUMN } from '../../filter-sql/conversation-filter-sql';
import type { PercentileField } from '../conversation-stats';
import type { GroupBy } from '../conversation-groups';
import type { ComparisonPlan, ComparisonRollup, DayRange } from './stats-plan';
import { rollupRanges, rollupRead } from './stats-planner';
import type { ReadRows } from './stats-reads';
import { daySpanSql, TimeRange } from './stats-rollup-sql';

/*
 * The comparisons' rollup reads (docs/statistics.md, "Comparisons: cost"): the groups of a `by`
 * and the percentiles of the message count and the scores, from the per-site and per-day group
 * and value rollups (migration StatsGroupRollups), with the partial days at a window's ends
 * scanned as the dashboard's rollup plan scans them (added, or subtracted from a whole day).
 */

/** The column each `by` groups on. */
export const GROUP_COLUMN: Record<GroupBy, string> = {
  agentId: 'agent_id',
  agentVersionId: 'agent_version_id',
  channel: 'channel',
  language: 'language',
};

/**
 * The percentile fields the value rollups count: the message count and the scores by value,
 * durationMs by bucket (its values have no bounded domain; stats-percentiles.ts finds the value
 * at a rank inside its bucket).
 */
export const ROLLED_UP_FIELDS: ReadonlySet<PercentileField> = new Set(
  Object.keys(VALUE_FIELD) as PercentileField[],
);

/** A field's value on a conversation row, as the value rollups store it (durationMs: its bucket). */
const VALUE_COLUMN: Record<keyof typeof VALUE_FIELD, string> = {
  messageCount: 'message_count::float8',
  quality: SCORE_COLUMN.quality,
  service: SCORE_COLUMN.service,
  trust: SCORE_COLUMN.trust,
  durationMs: DURATION_BUCKET_SQL,
};

/**
 * Whether the comparison rollups answer `filter`, and which of their rows and which partial days
 * to read: the daily rollups' conditions (no condition but the creation-time window, as the
 * filter registry says of each field: `statsDays`), a window that holds a whole UTC day or has
 * an open end, and the rollups on. `needsRows` names a figure asked beside them that only the
 * rows give (commerce metrics): then the rows are read.
 */
export async function comparisonPlan(
  read: ReadRows,
  siteId: string,
  filter: ConversationFilter,
  options: { useRollups: boolean; needsRows?: string },
): Promise<ComparisonPlan> {
  if (!options.useRollups) return { source: 'scan', why: 'rollups off' };
  if (options.needsRows) return { source: 'scan', why: options.needsRows };
  const ranges = rollupRanges(filter);
  if (!ranges) return { source: 'scan', why: 'a filter the rollups cannot answer, or no whole day' };
  const [span] = await read(daySpanSql(siteId));
  return {
    source: 'rollup',
    ...ranges,
    read: rollupRead(span as { first?: string; last?: string } | undefined, ranges.days),
    why:
      ranges.edges.length || ranges.minus.length
        ? 'only a window: whole days rolled up, partial days scanned'
        : 'only whole days',
  };
}

/** A parameter added on its first use (a statement may not use it: no day read, no partial day). */
function once(p: SqlParams, value: unknown, cast = ''): () => string {
  let ref: string | undefined;
  return () => (ref ??= p.add(value, cast));
}

/** `day` conditions of daily rollup rows over `ranges` (UTC days, `to` excluded). */
function dayConditions(p: SqlParams, ranges: DayRange[]): string {
  const ors = ranges.map((r) => {
    const where: string[] = [];
    if (r.from !== undefined) where.push(`day >= ${p.add(r.from, '::date')}`);
    if (r.to !== undefined) where.push(`day < ${p.add(r.to, '::date')}`);
    return where.length ? `(${where.join(' AND ')})` : 'true';
  });
  return `(${ors.join(' OR ') || 'false'})`;
}

/** The creation-time conditions of a scanned partial day. */
function rangeConditions(p: SqlParams, range: TimeRange): string[] {
  return [
    ...(range.from !== undefined ? [`created_at >= ${p.add(range.from, '::timestamptz')}`] : []),
    ...(range.to !== undefined ? [`created_at < ${p.add(range.to, '::timestamptz')}`] : []),
  ];
}

/**
 * The rollup parts of a plan, each a relation over `columns`: the rows of `site` (all time) and
 * of `daily` (days) with their sign, then each scanned partial day's rows from `scan`.
 */
function parts(
  plan: ComparisonRollup,
  p: SqlParams,
  read: { site: () => string; daily: () => string; keys: string; sums: string[] },
  scan: (range: TimeRange, sign: 1 | -1) => string,
): string[] {
  const signed = (sign: 1 | -1) => read.sums.map((s) => (sign === 1 ? s : `-${s}`)).join(', ');
  const out: string[] = [];
  const { read: rows } = plan;
  if (rows.sum === 'site') {
    out.push(`SELECT ${read.keys}, ${signed(1)} FROM ${read.site()}`);
    if (rows.minus.length)
      out.push(`SELECT ${read.keys}, ${signed(-1)} FROM ${read.daily()} AND ${dayConditions(p, rows.minus)}`);
  } else if (rows.sum === 'days')
    out.push(`SELECT ${read.keys}, ${signed(1)} FROM ${read.daily()} AND ${dayConditions(p, [rows.days])}`);
  for (const edge of plan.edges) out.push(scan(edge, 1));
  for (const outside of plan.minus) out.push(scan(outside, -1));
  return out;
}

/** The summed columns of a group part: conversations, then each asked score's count, sum and sum of squares. */
const groupSums = (scores: ScoreName[]) => [
  'n',
  ...scores.flatMap((name) => [`${name}_n`, `${name}_sum`, `${name}_sq`]),
];

/**
 * The sample variance (n − 1) from a count, sum and sum of squares, computed in `numeric` (exact
 * up to the final division) and given as float8; null below 2 values. The inputs' scales are
 * trimmed first, so equal sums give the same quotient whatever rows they were summed from (a
 * folded rollup keeps the scale of every value it ever added).
 */
export function sampleVarianceSql(n: string, sum: string, sq: string): string {
  // Rounded to 300 decimals first: the squares of tiny scores (1e-200) are numerics far below
  // float8's range, which the cast refuses ("out of range") rather than rounding to 0.
  return `CASE WHEN ${n} > 1 THEN round((${n} * trim_scale(${sq}) - trim_scale(${sum}) * trim_scale(${sum}))
    / (${n} * (${n} - 1)), 300)::float8 END`;
}

/**
 * The groups of `by` from the rollups: every value's total and each asked score's count, exact sum
 * (as text) and sample variance, total descending then value ascending (code points), with the
 * columns the grouped scan gives (stats-groups.ts).
 */
export function groupsRollupSql(
  siteId: string,
  plan: ComparisonRollup,
  by: GroupBy,
  scores: ScoreName[],
): Statement {
  const p = new SqlParams();
  const site = once(p, siteId);
  const dim = once(p, GROUP_DIM[by], '::smallint');
  const sums = groupSums(scores);
  const column = GROUP_COLUMN[by];
  const scan = (range: TimeRange, sign: 1 | -1) => {
    const s = sign === 1 ? '' : '-';
    const figures = scores.flatMap((name) => {
      const c = SCORE_COLUMN[name];
      return [`${s}count(${c})`, `${s}sum(${c}::numeric)`, `${s}sum(${c}::numeric * ${c}::numeric)`];
    });
    return `SELECT ${column}::text, ${s}count(*), ${figures.join(', ')} FROM conversations
      WHERE ${[`site_id = ${site()}`, ...rangeConditions(p, range)].join(' AND ')} GROUP BY 1`;
  };
  const union = parts(
    plan,
    p,
    {
      site: () => `conversation_stats_group_site WHERE site_id = ${site()} AND dim = ${dim()}`,
      daily: () => `conversation_stats_group_daily WHERE site_id = ${site()} AND dim = ${dim()}`,
      keys: 'value',
      sums,
    },
    scan,
  );
  // No day of the site in the window and no partial day: no group (and no parameter used).
  if (!union.length) return { text: `SELECT NULL::text AS value, 0 AS total WHERE false`, values: [] };
  const select = [
    'value',
    'sum(n)::bigint AS total',
    ...scores.flatMap((name) => [
      `sum(${name}_n)::bigint AS ${name}_n`,
      `sum(${name}_sum) AS ${name}_sum`,
      `${sampleVarianceSql(`sum(${name}_n)`, `sum(${name}_sum)`, `sum(${name}_sq)`)} AS ${name}_var`,
    ]),
  ];
  return {
    text: `SELECT ${select.join(', ')}
      FROM (${union.join('\n      UNION ALL ')}) p(value, ${sums.join(', ')})
      GROUP BY value HAVING sum(n) <> 0 ORDER BY sum(n) DESC, value COLLATE "C"`,
    values: p.values,
  };
}

/**
 * The value counts of the asked fields from the rollups, as (k, v, c): k the field's index in
 * `fields`, v a stored value, c the matching conversations having it (values counted 0 left out).
 * The caller ranks them (stats-percentiles.ts).
 */
export function valueCountsRollupSql(
  siteId: string,
  plan: ComparisonRollup,
  fields: PercentileField[],
): Statement {
  const p = new SqlParams();
  const site = once(p, siteId);
  const asked = fields.filter((f) => ROLLED_UP_FIELDS.has(f)) as Array<keyof typeof VALUE_FIELD>;
  const codes = once(
    p,
    asked.map((f) => VALUE_FIELD[f]),
    '::smallint[]',
  );
  const scan = (range: TimeRange, sign: 1 | -1) =>
    `SELECT v.field, v.value, ${sign}::bigint FROM conversations CROSS JOIN LATERAL (VALUES
        ${asked.map((f) => `(${VALUE_FIELD[f]}::smallint, ${VALUE_COLUMN[f]})`).join(', ')}) v(field, value)
      WHERE ${[`site_id = ${site()}`, ...rangeConditions(p, range)].join(' AND ')} AND v.value IS NOT NULL`;
  const union = parts(
    plan,
    p,
    {
      site: () => `conversation_stats_value_site WHERE site_id = ${site()} AND field = ANY(${codes()})`,
      daily: () => `conversation_stats_value_daily WHERE site_id = ${site()} AND field = ANY(${codes()})`,
      keys: 'field, value',
      sums: ['n'],
    },
    scan,
  );
  if (!union.length)
    return { text: `SELECT NULL::int AS k, NULL::float8 AS v, 0::bigint AS c WHERE false`, values: [] };
  const k = `CASE p.field ${asked.map((f) => `WHEN ${VALUE_FIELD[f]} THEN ${fields.indexOf(f)}`).join(' ')} END`;
  return {
    text: `SELECT ${k} AS k, p.value AS v, sum(p.n)::bigint AS c
      FROM (${union.join('\n      UNION ALL ')}) p(field, value, n)
      GROUP BY p.field, p.value HAVING sum(p.n) <> 0`,
    values: p.values,
  };
}
