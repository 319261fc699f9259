import type { Statement } from '../../../database/sql-statement';
import {
  buildFilterSql,
  FilterSql,
  postingsFilterSql,
  postingTerms,
  SCORE_COLUMN,
  whereAll,
} from '../../filter-sql/conversation-filter-sql';
import { transcriptProbesSql, transcriptSetSql } from '../../filter-sql/text-query-sql';
import type { ConversationFilter, ScoreName } from '../../listing/conversation-filter';
import type { StatsFacet } from '../conversation-stats';
import type { TimeRange } from './stats-rollup-sql';

/* The scan's statements (docs/statistics.md, "Scan"): one read of the filter's matches. */

/** Columns of the covering index a facet groups by (labels are counted from label_bits apart). */
export const FACET_COLUMN: Partial<Record<StatsFacet, string>> = {
  channel: 'channel',
  language: 'language',
  agentId: 'agent_id',
  labelStatus: 'label_status',
};

/**
 * The listing's filter SQL over `range` instead of the filter's window: walk form (the covering
 * index's columns), or with `forIndex` the GIN form, or, for a keyword of one plain word or
 * two-word phrase (postingTerms: one term), the postings form: an index-only scan of that term's
 * title-term postings (migration ConversationPostings), which carry every column a scan reads, so
 * a keyword's matches are not each fetched from the heap. A transcript query (`q`) is read from
 * its matches, not by the listing's probe of a transcript per conversation (a scan reads every
 * match): alone, the rows are its matches probed in the covering index (transcriptProbesSql, the
 * `from` of the result: run it with `probesMatches`); beside keywords, a condition on the
 * keyword's rows, the set of its matches (transcriptSetSql).
 */
export function filterOver(
  siteId: string,
  filter: ConversationFilter,
  range: TimeRange,
  forIndex = filter.keywords.length > 0,
): FilterSql {
  const { from: _from, to: _to, text, ...rest } = filter;
  const over = {
    ...rest,
    ...(range.from !== undefined ? { from: range.from } : {}),
    ...(range.to !== undefined ? { to: range.to } : {}),
  };
  const terms = forIndex ? postingTerms(filter.keywords) : undefined;
  const sql =
    terms?.length === 1
      ? postingsFilterSql(siteId, over, { driver: terms[0], others: [] })
      : buildFilterSql(siteId, over, undefined, { forIndex });
  if (!text) return sql;
  if (forIndex)
    return { ...sql, narrowed: true, rows: [...sql.rows, transcriptSetSql(siteId, text, sql.params)] };
  return { ...sql, narrowed: true, from: transcriptProbesSql(siteId, text, sql.params, range) };
}

/**
 * Whether a scan of `filter` (filterOver, not for an index) reads the transcripts' matches probed
 * in the covering index: a nested loop, which its statement must be run as (hash and merge
 * joins off for it).
 */
export const probesMatches = (filter: ConversationFilter, forIndex: boolean): boolean =>
  filter.text !== undefined && !forIndex;

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
