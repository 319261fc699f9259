import type { ConversationFilter, ScoreName } from '../../listing/conversation-filter';
import {
  buildFilterSql,
  FilterSql,
  postingsFilterSql,
  postingTerms,
  Statement,
  whereAll,
} from '../../postgres/conversation-sql';
import type { StatsFacet } from '../conversation-stats';

export const SCORE_COLUMN: Record<ScoreName, string> = {
  quality: 'score_quality',
  service: 'score_service',
  trust: 'score_trust',
};

/** Columns of the covering index a facet groups by (labels are counted from label_bits apart). */
export const FACET_COLUMN: Partial<Record<StatsFacet, string>> = {
  channel: 'channel',
  language: 'language',
  agentId: 'agent_id',
  labelStatus: 'label_status',
};

/** Bits of label_bits the rollup and the scan count (taxonomy v1.1 has 32 tokens). */
export const LABEL_BITS = 32;

/** A half-open creation-time range; undefined ends are open. ISO text. */
export interface TimeRange {
  from?: string;
  to?: string;
}

/**
 * The listing's filter SQL over `range` instead of the filter's window: walk form (the covering
 * index's columns), or with `forIndex` the GIN form, or, for a keyword of one plain word or
 * two-word phrase (postingTerms: one term), the postings form: an index-only scan of that term's
 * title-term postings (migration ConversationPostings), which carry every column a scan reads, so
 * a keyword's matches are not each fetched from the heap.
 */
export function filterOver(
  siteId: string,
  filter: ConversationFilter,
  range: TimeRange,
  forIndex = filter.keywords.length > 0,
): FilterSql {
  const { from: _from, to: _to, ...rest } = filter;
  const over = {
    ...rest,
    ...(range.from !== undefined ? { from: range.from } : {}),
    ...(range.to !== undefined ? { to: range.to } : {}),
  };
  const terms = forIndex ? postingTerms(filter.keywords) : undefined;
  if (terms?.length === 1) return postingsFilterSql(siteId, over, { driver: terms[0], others: [] });
  return buildFilterSql(siteId, over, undefined, { forIndex });
}

/**
 * Scan: per series bucket (`width_bucket` over the bucket starts: 1 = first bucket), the
 * matches, labeled matches and each asked score's count and exact sum.
 */
export function seriesSql(sql: FilterSql, scores: ScoreName[], starts: Date[]): Statement {
  const p = sql.params;
  const e = p.add(
    starts.map((s) => s.toISOString()),
    '::timestamptz[]',
  );
  const aggregates = [
    'count(*)::bigint AS n',
    `count(*) FILTER (WHERE label_status = 'labeled')::bigint AS labeled`,
    ...scores.flatMap((name) => [
      `count(${SCORE_COLUMN[name]})::bigint AS ${name}_n`,
      `sum(${SCORE_COLUMN[name]}) AS ${name}_sum`,
    ]),
  ];
  return {
    text: `SELECT width_bucket(created_at, ${e}) AS b, ${aggregates.join(', ')} FROM ${sql.from ?? 'conversations'}
      WHERE ${whereAll(sql)} GROUP BY 1`,
    values: p.values,
  };
}

/**
 * Rollup kinds of conversation_stats_daily (migration ConversationStatsRollups). The rollup
 * tables are append-only (AppendOnlyStatsRollups): a key may have several rows until the
 * compaction folds them, so every read sums the rows of a key.
 */
export const KIND = {
  all: 0,
  channel: 1,
  language: 2,
  agentId: 3,
  labelStatus: 4,
  feedback: 5,
  labels: 6,
  quality: 7,
  service: 8,
  trust: 9,
} as const;

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
  const ors = ranges.map((r) => {
    const where: string[] = [];
    if (r.from !== undefined) where.push(`day >= $${values.push(r.from)}::date`);
    if (r.to !== undefined) where.push(`day < $${values.push(r.to)}::date`);
    return where.length ? `(${where.join(' AND ')})` : 'true';
  });
  return {
    text: `SELECT kind, key, sum(n)::bigint AS n FROM conversation_stats_daily
      WHERE site_id = $1 AND kind = ANY($2::smallint[]) AND (${ors.join(' OR ') || 'false'}) GROUP BY kind, key`,
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
  const where = ['site_id = $1'];
  if (range.from !== undefined) where.push(`hour >= $${values.push(range.from)}::timestamptz`);
  if (range.to !== undefined) where.push(`hour < $${values.push(range.to)}::timestamptz`);
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
  const where = ['site_id = $1'];
  if (range.from !== undefined) where.push(`hour >= $${values.push(range.from)}::timestamptz`);
  if (range.to !== undefined) where.push(`hour < $${values.push(range.to)}::timestamptz`);
  return {
    text: `SELECT width_bucket(hour, $2::timestamptz[]) AS b, sum(n)::bigint AS n, sum(labeled)::bigint AS labeled,
      sum(quality_n)::bigint AS quality_n, sum(quality_sum)::text AS quality_sum,
      sum(service_n)::bigint AS service_n, sum(service_sum)::text AS service_sum,
      sum(trust_n)::bigint AS trust_n, sum(trust_sum)::text AS trust_sum
      FROM conversation_stats_hourly WHERE ${where.join(' AND ')} GROUP BY 1`,
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
  const where = cellConditions(scope, values, true);
  if (scope.from !== undefined) where.push(`created_at >= $${values.push(scope.from)}::timestamptz`);
  if (scope.to !== undefined) where.push(`created_at < $${values.push(scope.to)}::timestamptz`);
  return where;
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

/** The site's all-time counts: conversations, per agent, per label token (selectivity estimates). */
export function siteCountsSql(siteId: string): Statement {
  return {
    text: `SELECT kind, key, sum(n)::bigint AS n FROM conversation_stats_site WHERE site_id = $1 AND kind IN (0, 3, 6)
      GROUP BY kind, key`,
    values: [siteId],
  };
}

/** What a one-pass scan computes besides the total (each part only when asked). */
export interface ScanAsks {
  facets: StatsFacet[];
  scores: ScoreName[];
  /** Inner edges of the asked histogram bins (with scores). */
  edges: number[];
  /** Series bucket edges (every start, then the last end), or none. */
  starts: Date[];
  /** Whether the scan computes each score's min and max (default true). */
  minMax?: boolean;
  /**
   * Facet columns whose value the filter fixes (every match has it: `channel=web`, a label
   * filter's `labeled`…): left out of the cells key; the caller counts every match there.
   */
  fixed?: Partial<Record<StatsFacet, string>>;
}

/** The scan's histogram key marks a missing score (NULL) with this bin (bins ≤ 100). */
export const HIST_NULL = 255;

/**
 * At most this many (bins + 1)^scores values per histogram key: scores are keyed together while
 * their bins' product stays under it (3 scores of 10 bins: one key of ≤ 1,331 values), apart
 * otherwise, so each hash table stays small whatever `bins`.
 */
const MAX_HIST_GROUPS = 4096;

/** Scores keyed together in one histogram aggregate (each score's bin in 8 bits of the key). */
export type HistChunks = ScoreName[][];

/**
 * Scan, in ONE statement and one read of the matching rows, with no materialisation: one hash
 * aggregate over the index (or bitmap) scan with one grouping set per part, each on a compact
 * key, so every matching row is hashed once per part as it is read:
 * - cells (`g0`…): the asked facet columns but those the filter fixes (`asks.fixed`; the empty
 *   set without such columns: the total);
 * - labels (`lb`): labeled matches per distinct `label_bits` (9,281 values for 400k matches),
 *   split per bit by the caller;
 * - histograms (`h0`, `h1`…): per key, each score of the chunk `chunks[i]` as its `width_bucket`
 *   over the inner edges (HIST_NULL when missing) in 8 bits: three scores of 10 bins give one
 *   set of ≤ 1,331 keys (512 on the bench data), 100 bins one set per score;
 * - series (`sb`): `width_bucket` over the bucket starts (1 = first bucket).
 * Every set gets the same aggregates (PostgreSQL computes each for every set): the count, the
 * labeled count and each asked score's count, sum, min and max; the caller reads the score
 * summaries from the first histogram chunk holding the score, the series' from `sb`. A row's
 * set is told by `GROUPING(<key>) = 0` (`in_lb`, `in_h0`…, `in_sb`); other rows are cells.
 * Grouping sets never run in parallel workers: a dense scan is split in two slices read at once
 * on two connections instead (PostgresConversationStats).
 */
export function scanSql(
  sql: FilterSql,
  asks: ScanAsks,
): { statement: Statement; groups: string[]; chunks: HistChunks } {
  const p = sql.params;
  const groups: string[] = [];
  for (const facet of asks.facets) {
    const column = FACET_COLUMN[facet];
    if (column && asks.fixed?.[facet] === undefined) groups.push(column);
  }
  if (asks.facets.includes('feedback')) groups.push('feedback_positive > 0', 'feedback_negative > 0');

  const chunks: HistChunks = [];
  const bins = asks.edges.length + 1;
  for (const name of asks.scores) {
    const last = chunks[chunks.length - 1];
    if (last && (bins + 1) ** (last.length + 1) <= MAX_HIST_GROUPS) last.push(name);
    else chunks.push([name]);
  }

  // Keys computed per row (the inner query), then grouped by set.
  const keys: string[] = groups.map((g, i) => `${g} AS g${i}`);
  const sets: string[] = [`(${groups.map((_, i) => `r.g${i}`).join(', ')})`];
  const flags: string[] = [];
  if (asks.facets.includes('labels')) {
    keys.push(
      asks.fixed?.labelStatus === 'labeled'
        ? 'label_bits AS lb'
        : `CASE WHEN label_status = 'labeled' THEN label_bits END AS lb`,
    );
    sets.push('(r.lb)');
    flags.push('GROUPING(r.lb) = 0 AS in_lb');
  }
  if (asks.scores.length) {
    const e = p.add(asks.edges, '::float8[]');
    chunks.forEach((chunk, c) => {
      const key = chunk
        .map((name, i) => `(coalesce(width_bucket(${SCORE_COLUMN[name]}, ${e}), ${HIST_NULL}) << ${8 * i})`)
        .join(' | ');
      keys.push(`${key} AS h${c}`);
      sets.push(`(r.h${c})`);
      flags.push(`GROUPING(r.h${c}) = 0 AS in_h${c}`);
    });
  }
  if (asks.starts.length) {
    const e = p.add(
      asks.starts.map((s) => s.toISOString()),
      '::timestamptz[]',
    );
    keys.push(`width_bucket(created_at, ${e}) AS sb`);
    sets.push('(r.sb)');
    flags.push('GROUPING(r.sb) = 0 AS in_sb');
  }
  const series = asks.starts.length > 0;
  const values = [
    ...(series ? ['label_status'] : []),
    ...asks.scores.map((name) => SCORE_COLUMN[name]),
    ...keys,
  ];
  const select = [
    ...groups.map((_, i) => `r.g${i}`),
    ...(asks.facets.includes('labels') ? ['r.lb'] : []),
    ...chunks.map((_, c) => `r.h${c}`),
    ...(asks.starts.length ? ['r.sb'] : []),
    ...flags,
    'count(*)::bigint AS n',
    // Only the series reads the labeled count and each score's count (a histogram key tells
    // whether its rows have the score): PostgreSQL computes every aggregate for every set.
    ...(series ? [`count(*) FILTER (WHERE r.label_status = 'labeled')::bigint AS labeled`] : []),
    ...asks.scores.flatMap((name) => {
      const c = `r.${SCORE_COLUMN[name]}`;
      return [
        ...(series ? [`count(${c})::bigint AS ${name}_n`] : []),
        `sum(${c}) AS ${name}_sum`,
        ...(asks.minMax === false ? [] : [`min(${c}) AS ${name}_min`, `max(${c}) AS ${name}_max`]),
      ];
    }),
  ];
  return {
    statement: {
      text: `SELECT ${select.join(', ')}
        FROM (SELECT ${values.join(', ')} FROM ${sql.from ?? 'conversations'} WHERE ${whereAll(sql)}) r
        GROUP BY GROUPING SETS (${sets.join(', ')})`,
      values: p.values,
    },
    groups,
    chunks,
  };
}

/** Entries of a score index a bounded walk (scanEdgeWalkSql) reads at most, per score and side. */
export const EDGE_WALK_ENTRIES = 2000;

/**
 * The lowest and highest value of each asked score among the matches of a filter (walk form,
 * `sql` over the scan's range), each read by a BOUNDED walk of the score's btree
 * (`conversations_site_score_<name>_idx (site_id, score) INCLUDE (every column a walk filter
 * tests)`, index-only): the first EDGE_WALK_ENTRIES entries of the site from the low (high) end,
 * inside the filter's own bounds on that score, in index order; the filter is tested on each
 * (`ok`), so no walk reads more than EDGE_WALK_ENTRIES entries. The entries are read in score
 * order, so a match among them holds the exact min (max) of all the matches; when none of them
 * matches the column is NULL and the caller computes that score's min and max in the scan.
 */
export function scanEdgeWalkSql(sql: FilterSql, filter: ConversationFilter, scores: ScoreName[]): Statement {
  const p = sql.params;
  const site = sql.range[0];
  const ok = whereAll(sql);
  const limit = p.add(EDGE_WALK_ENTRIES, '::int');
  const columns = scores.flatMap((name) => {
    const c = SCORE_COLUMN[name];
    const bounds = filter.scores[name];
    const where = [
      site,
      `${c} IS NOT NULL`,
      ...(bounds?.min !== undefined ? [`${c} >= ${p.add(bounds.min, '::float8')}`] : []),
      ...(bounds?.max !== undefined ? [`${c} <= ${p.add(bounds.max, '::float8')}`] : []),
    ].join(' AND ');
    return (['min', 'max'] as const).map((side) => {
      const order = side === 'min' ? 'ASC' : 'DESC';
      return `(SELECT ${side}(w.v) FILTER (WHERE w.ok) FROM (SELECT ${c} AS v, (${ok}) AS ok FROM conversations
        WHERE ${where} ORDER BY site_id ${order}, ${c} ${order} LIMIT ${limit}) w) AS ${name}_${side}`;
    });
  });
  return { text: `SELECT ${columns.join(', ')}`, values: p.values };
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
