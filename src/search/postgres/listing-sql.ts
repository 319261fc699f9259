import { SqlParams, type Statement } from '../../database/sql-statement';
import { KIND } from '../../database/stats-rollups';
import {
  buildFilterSql,
  FilterSql,
  impliedLabelStatus,
  labelBit,
  ORDER,
  whereAll,
  whereRowFilters,
} from '../filter-sql/conversation-filter-sql';
import { CHANNELS, type ConversationFilter, LABEL_STATUSES, LANGUAGES } from '../listing/conversation-filter';
import { FILTERS } from '../filters/filter-registry';
import type { ListingPosition } from '../listing/conversation-search';

/*
 * The listing's own statements (docs/query-engine.md, "Choosing a plan"), each over the
 * conditions of a filter built by the shared filter SQL (conversation-filter-sql.ts): one per
 * step of a page or count plan.
 */

/** The columns a walk reads: those of the covering index, plus the tsvector (keywords) and review_state (reviewStatus). */
function walkColumns(sql: FilterSql): string {
  const covered =
    'id, created_at, channel, language, agent_id, label_status, feedback_positive, feedback_negative, score_quality, score_service, score_trust, label_bits';
  return sql.needsHeap ? `${covered}, title_tsv, review_state, converted` : covered;
}

/**
 * Walk plan, bounded: the newest `window` rows of the range by the btree, filtered, the first
 * `limit` matches. The LIMIT inside the subquery keeps the planner on the btree and bounds
 * the work whatever the filters' selectivity.
 */
export function walkWindowSql(sql: FilterSql, window: number, limit: number): Statement {
  const p = sql.params;
  const text = `SELECT id, created_at FROM (
    SELECT ${walkColumns(sql)} FROM conversations WHERE ${sql.range.join(' AND ')} ${ORDER} LIMIT ${p.add(window)}
  ) w WHERE ${whereRowFilters(sql)} ${ORDER} LIMIT ${p.add(limit)}`;
  return { text, values: p.values };
}

/** The position of the `window`-th row of the range (where a bounded walk stopped), if any. */
export function windowEdgeSql(sql: FilterSql, window: number): Statement {
  const values = sql.params.values.slice(0, sql.rangeParams);
  const text = `SELECT id, created_at FROM conversations WHERE ${sql.range.join(' AND ')} ${ORDER} OFFSET $${values.length + 1} LIMIT 1`;
  return { text, values: [...values, window - 1] };
}

/**
 * Index plan (build the filter with `forIndex`): the matches through the GIN index (bitmap), at most `probe` of them, sorted by
 * the listing order. `taken` tells whether the set was complete (taken < probe).
 */
export function ginSortedSql(sql: FilterSql, probe: number, limit: number): Statement {
  const p = sql.params;
  const text = `SELECT id, created_at, count(*) OVER ()::int AS taken FROM (
    SELECT id, created_at FROM conversations WHERE ${whereAll(sql)} LIMIT ${p.add(probe)}
  ) m ${ORDER} LIMIT ${p.add(limit)}`;
  return { text, values: p.values };
}

/**
 * Unbounded walk of the creation-time index with the filters (matches known to be dense).
 * `columns` may ask for whole rows, so a page needs no second statement to load them.
 */
export function walkSql(sql: FilterSql, limit: number, columns = 'id, created_at'): Statement {
  const p = sql.params;
  return {
    text: `SELECT ${columns} FROM conversations WHERE ${whereAll(sql)} ${ORDER} LIMIT ${p.add(limit)}`,
    values: p.values,
  };
}

/** Those of `ids` that match (by primary key, whatever the filters), with their positions. */
export function matchingSql(sql: FilterSql, ids: string[]): Statement {
  const p = sql.params;
  return {
    text: `SELECT id, created_at FROM conversations WHERE ${whereAll(sql)} AND id = ANY(${p.add(ids, '::text[]')})`,
    values: p.values,
  };
}

/** Count of matches, stopping at `cap` rows. */
export function cappedCountSql(sql: FilterSql, cap: number): Statement {
  const p = sql.params;
  return {
    text: `SELECT count(*)::int AS n FROM (SELECT 1 FROM conversations WHERE ${whereAll(sql)} LIMIT ${p.add(cap)}) c`,
    values: p.values,
  };
}

/**
 * The key of conversations_site_cell_idx after the site (migration ConversationCellIndex), in
 * order: each column, every value it can hold (CHECK-constrained enums, booleans) and the value a
 * filter fixes, if any. The agent and the creation time follow: never spelled out.
 */
const CELL_KEY: ReadonlyArray<{
  column: string;
  all: readonly string[];
  cast: string;
  fixed: (filter: ConversationFilter) => string | undefined;
}> = [
  { column: 'channel', all: CHANNELS, cast: '::text[]', fixed: (f) => f.channel },
  { column: 'language', all: LANGUAGES, cast: '::text[]', fixed: (f) => f.language },
  { column: 'label_status', all: LABEL_STATUSES, cast: '::text[]', fixed: (f) => impliedLabelStatus(f) },
  {
    column: '(feedback_negative > 0)',
    all: ['false', 'true'],
    cast: '::boolean[]',
    fixed: (f) => (f.feedback === 'negative' ? 'true' : undefined),
  },
  {
    column: '(feedback_positive > 0)',
    all: ['false', 'true'],
    cast: '::boolean[]',
    fixed: (f) => (f.feedback === 'positive' ? 'true' : undefined),
  },
];

/**
 * Whether conversations_site_cell_idx holds every condition of `filter` (a `cells` count):
 * column filters (channel, language, agent, feedback, label status), label tokens with a bit
 * (labels.all, labels.any, labels.none) and a time range, at least one column fixed; no keyword,
 * `q`, review status or score bound (those are read from the heap or other indexes).
 */
export function cellsCountable(filter: ConversationFilter): boolean {
  return (
    FILTERS.unanswered(filter, 'cellIndex').length === 0 &&
    (filter.agentId !== undefined || CELL_KEY.some((key) => key.fixed(filter) !== undefined))
  );
}

/**
 * `cells` count (cellsCountable filters), capped at `cap` matches: an index-only range scan of
 * conversations_site_cell_idx. Its key columns before the last one the filter fixes (the agent,
 * when given) that the filter leaves open are spelled out as `= ANY (every value)`, so the
 * scan descends once per combination and reads the entries of the fixed values only (PostgreSQL
 * 15 has no skip scan); the label bits, the feedback and the time range are checked on them.
 */
export function cellsCountSql(siteId: string, filter: ConversationFilter, cap: number): Statement {
  const sql = buildFilterSql(siteId, filter);
  const p = sql.params;
  const last =
    filter.agentId !== undefined
      ? CELL_KEY.length
      : CELL_KEY.reduce((at, key, i) => (key.fixed(filter) !== undefined ? i : at), -1);
  const open = CELL_KEY.slice(0, last)
    .filter((key) => key.fixed(filter) === undefined)
    .map((key) => `${key.column} = ANY(${p.add(key.all, key.cast)})`);
  return {
    text: `SELECT count(*)::int AS n FROM (SELECT 1 FROM conversations WHERE ${[whereAll(sql), ...open].join(' AND ')} LIMIT ${p.add(cap)}) c`,
    values: p.values,
  };
}

/**
 * Matches among the newest `window` rows of the range (`hits`), how many rows that window held
 * (`seen`) and the creation times of its newest and oldest rows; the window's size is the
 * parameter `window` (`$n`).
 */
function windowCountText(sql: FilterSql, window: string): string {
  return `SELECT (count(*) FILTER (WHERE ${whereRowFilters(sql)}))::int AS hits, count(*)::int AS seen,
    max(created_at) AS newest, min(created_at) AS oldest FROM (
    SELECT ${walkColumns(sql)} FROM conversations WHERE ${sql.range.join(' AND ')} ${ORDER} LIMIT ${window}
  ) w`;
}

/**
 * The density sample (windowCountText), and in the same statement, when the window was full and
 * held no more than `cap` matches, the capped count (cappedCountSql, at most `limit` matches) as
 * `n` if the window held at least `denseHits` matches or, with a lower time bound (`from`), the
 * range is expected to hold at most `walkRange` rows (the window's rows per second of its span,
 * times the seconds from its newest row back to `from`): the walk then reads at most the range,
 * dense or not. Otherwise `n` is null and the count was not run (a scalar subquery in a CASE
 * branch is an InitPlan, evaluated only when the branch is taken). One round trip where the
 * sample and the count of a dense filter took two.
 */
export function windowThenCappedCountSql(
  sql: FilterSql,
  options: {
    window: number;
    denseHits: number;
    cap: number;
    limit: number;
    from?: string;
    walkRange?: number;
  },
): Statement {
  const p = sql.params;
  const window = p.add(options.window);
  const dense = `s.hits >= ${p.add(options.denseHits)}`;
  // Rows of the range expected from the window's span (seconds): rows per second times the range's.
  const short =
    options.from !== undefined && options.walkRange !== undefined && options.walkRange > 0
      ? ` OR s.seen * extract(epoch FROM s.newest - ${p.add(options.from, '::timestamptz')})
        <= ${p.add(options.walkRange, '::float8')} * extract(epoch FROM s.newest - s.oldest)`
      : '';
  const text = `WITH s AS MATERIALIZED (${windowCountText(sql, window)})
  SELECT s.hits, s.seen, CASE WHEN s.seen >= ${window} AND s.hits <= ${p.add(options.cap)} AND (${dense}${short})
    THEN (SELECT count(*)::int FROM (SELECT 1 FROM conversations WHERE ${whereAll(sql)} LIMIT ${p.add(options.limit)}) c)
  END AS n FROM s`;
  return { text, values: p.values };
}

/**
 * A statement returning positions (`id`, `created_at`, maybe `taken`), made to return the
 * conversations themselves (`columns`, which must include `id` and `created_at AS "createdAt"`),
 * in the listing order: each position's row is read by primary key in the same statement, so
 * a page needs no second statement to load them.
 */
export function withRows(
  statement: Statement,
  columns: string,
  options: { taken?: boolean } = {},
): Statement {
  return {
    text: `SELECT c.*${options.taken ? ', p.taken' : ''} FROM (${statement.text}) p
    CROSS JOIN LATERAL (SELECT ${columns} FROM conversations WHERE id = p.id) c
    ORDER BY p.created_at DESC, p.id COLLATE "C" DESC`,
    values: statement.values,
  };
}

/**
 * walkWindowSql and windowEdgeSql in one statement, the matches read whole: the first `limit`
 * matches among the newest `window` rows of the range, as conversations (`columns`, see
 * withRows), and, only when fewer than `limit` matched, one more row with `edge` true: the
 * position (`position_id`, `position_at`) of the window's last row, where a further plan goes on
 * (no edge row: the window held every row of the range). Each row carries `edge`; a match also
 * its position. The edge's walk runs behind a one-time filter on the number of matches, so a
 * page the window fills pays nothing for it.
 */
export function windowWithEdgeSql(sql: FilterSql, window: number, limit: number, columns: string): Statement {
  const p = sql.params;
  const range = sql.range.join(' AND ');
  const windowParam = p.add(window);
  const limitParam = p.add(limit);
  const text = edgeWindowText({
    matches: `SELECT id, created_at FROM (
      SELECT ${walkColumns(sql)} FROM conversations WHERE ${range} ${ORDER} LIMIT ${windowParam}
    ) w WHERE ${whereRowFilters(sql)} ${ORDER} LIMIT ${limitParam}`,
    edge: `SELECT id, created_at FROM conversations WHERE ${range} ${ORDER} OFFSET ${windowParam}::int - 1 LIMIT 1`,
    limitParam,
    columns,
  });
  return { text, values: p.values };
}

/**
 * The text of a window with its edge (windowWithEdgeSql, and the transcripts' in transcript-sql.ts)
 * from its two walks of one range: `matches`, the first matches among the window's rows, at most
 * `limitParam` (`id`, `created_at`), and `edge`, the window's last row (`id`, `created_at`), read
 * only when fewer matched; the matches' conversations read whole (`columns`).
 */
export function edgeWindowText(o: {
  matches: string;
  edge: string;
  limitParam: string;
  columns: string;
}): string {
  return `WITH m AS MATERIALIZED (${o.matches})
  SELECT p.edge, p.id AS position_id, p.created_at AS position_at, c.* FROM (
    SELECT false AS edge, id, created_at FROM m
    UNION ALL
    SELECT true, id, created_at FROM (${o.edge}) e WHERE (SELECT count(*) FROM m) < ${o.limitParam}
  ) p
  LEFT JOIN LATERAL (SELECT ${o.columns} FROM conversations WHERE id = p.id AND NOT p.edge) c ON true
  ORDER BY p.edge, p.created_at DESC, p.id COLLATE "C" DESC`;
}

/**
 * The exact count of a filter the statistics rollups hold (countsFromRollups, listing-planner.ts):
 * per site and "cell" (channel, language, label status, rated positive / negative),
 * `conversation_stats_cell` counts the conversations (kind 0), those of each agent (3) and,
 * among labeled ones, those holding each label token (6), kept exact by triggers in every
 * writing transaction (migration ConversationStatsRollups): a sum over at most 288 cells.
 */
export function rollupCountSql(siteId: string, filter: ConversationFilter): Statement {
  const tokens = [...new Set(filter.labelsAll)];
  const params = new SqlParams();
  const where = [`site_id = ${params.add(siteId)}`];
  if (filter.agentId !== undefined)
    where.push(`kind = ${KIND.agentId}`, `key = ${params.add(filter.agentId)}`);
  else if (tokens.length === 1)
    where.push(`kind = ${KIND.labels}`, `key = ${params.add(String(labelBit(tokens[0])))}`);
  else where.push(`kind = ${KIND.all}`);
  if (filter.channel) where.push(`channel = ${params.add(filter.channel)}`);
  if (filter.language) where.push(`language = ${params.add(filter.language)}`);
  // Filter rule 2: a label token matches labeled conversations only (kind 6 counts only those).
  const status = filter.labelStatus ?? (tokens.length ? 'labeled' : undefined);
  if (status) where.push(`label_status = ${params.add(status)}`);
  if (filter.feedback === 'positive') where.push('fp');
  if (filter.feedback === 'negative') where.push('fn');
  return {
    text: `SELECT coalesce(sum(n), 0)::float8 AS n FROM conversation_stats_cell WHERE ${where.join(' AND ')}`,
    values: params.values,
  };
}

/** Postings plan (postingsFilterSql): the first `limit` matches' positions, in the listing order. */
export function postingsPageSql(sql: FilterSql, limit: number): Statement {
  const p = sql.params;
  return {
    text: `SELECT id, created_at FROM ${sql.from} WHERE ${whereAll(sql)} ${ORDER} LIMIT ${p.add(limit)}`,
    values: p.values,
  };
}

/** Postings plan (postingsFilterSql): the number of matches, stopping at `cap`. */
export function postingsCountSql(sql: FilterSql, cap: number): Statement {
  const p = sql.params;
  return {
    text: `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${sql.from} WHERE ${whereAll(sql)} LIMIT ${p.add(cap)}) c`,
    values: p.values,
  };
}

/**
 * The creation time of the newest match after `beyond` (`at`, null when none; at most `beyond`'s
 * time: matches in its millisecond may be counted though they precede it in the listing), for a
 * cellsCountable filter: one backward probe of conversations_site_cell_idx per combination of the
 * rollups' cell columns and agent that holds rows of the site (`conversation_stats_cell`, kind 3,
 * read in the same statement, so the same snapshot: a combination without rows has no entry to
 * miss), the filter's fixed columns narrowing the combinations, each probe checking every
 * condition on the index entries (`LIMIT 1`). Its cost follows the combinations (654 for one
 * language of the bench site, 21 agents), not the rows between `beyond` and the match: the seek
 * over a campaign of another language, channel or agent (docs/query-engine.md, "Walk indexes").
 */
export function newestMatchSql(
  siteId: string,
  filter: ConversationFilter,
  beyond: ListingPosition,
): Statement {
  // Up to `beyond`'s millisecond, not its id (the cell index holds no id, and the probes stay
  // index-only): a bound on the newest match's time, which the walk after it refines.
  const sql = buildFilterSql(siteId, filter);
  const p = sql.params;
  sql.range.push(`created_at <= ${p.add(beyond.createdAt, '::timestamptz')}`);
  const cell = [`site_id = ${p.add(siteId)}`, `kind = ${KIND.agentId}`];
  if (filter.channel) cell.push(`channel = ${p.add(filter.channel)}`);
  if (filter.language) cell.push(`language = ${p.add(filter.language)}`);
  const status = impliedLabelStatus(filter);
  if (status) cell.push(`label_status = ${p.add(status)}`);
  if (filter.feedback === 'negative') cell.push('fn');
  if (filter.feedback === 'positive') cell.push('fp');
  if (filter.agentId !== undefined) cell.push(`key = ${p.add(filter.agentId)}`);
  const text = `SELECT max(m.created_at) AS at FROM (
    SELECT channel, language, label_status, fn, fp, key FROM conversation_stats_cell
    WHERE ${cell.join(' AND ')} GROUP BY channel, language, label_status, fn, fp, key HAVING sum(n) > 0
  ) c CROSS JOIN LATERAL (
    SELECT created_at FROM conversations
    WHERE channel = c.channel AND language = c.language AND label_status = c.label_status
      AND (feedback_negative > 0) = c.fn AND (feedback_positive > 0) = c.fp AND agent_id = c.key
      AND ${whereAll(sql)}
    ORDER BY created_at DESC LIMIT 1
  ) m`;
  return { text, values: p.values };
}
