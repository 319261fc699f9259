import type { ConversationFilter, ScoreName } from '../conversation-filter';
import { hasLabelFilter, SCORE_NAMES } from '../conversation-filter';
import type { ListingPosition } from '../conversation-search';

/** Collects positional parameters for one statement. */
export class SqlParams {
  readonly values: unknown[] = [];
  add(value: unknown, cast = ''): string {
    this.values.push(value);
    return `$${this.values.length}${cast}`;
  }
}

export interface Statement {
  text: string;
  values: unknown[];
}

const SCORE_COLUMN: Record<ScoreName, string> = { quality: 'score_quality', service: 'score_service', trust: 'score_trust' };
const BUCKET_PREFIX: Record<ScoreName, string> = { quality: 'qb', service: 'sb', trust: 'tb' };
/** Score bounds spanning more 0.05-wide buckets than this are left to the exact comparison only. */
export const MAX_SCORE_BUCKETS = 4;

/**
 * A filter split by how the indexes answer it:
 * - `gin`: conditions the GIN index over (search_terms, title_tsv) answers: all equality
 *   filters as one `search_terms @> terms` (site, channel, language, agent, label status,
 *   feedback, labels.all), each labels.any group and narrow score-bucket bands as
 *   `search_terms && group`, and the keywords as one tsquery;
 * - `range`: site, creation-time bounds and the cursor, answered by the
 *   (site_id, created_at DESC, id DESC) btree;
 * - `exact`: conditions checked row by row (score bounds, labels.none).
 * Every condition is exact, so any combination of them returns exactly the matches.
 */
export interface FilterSql {
  params: SqlParams;
  /** Whether anything besides the site and the creation-time range restricts the rows. */
  narrowed: boolean;
  /** The range conditions use parameters $1..$rangeParams only. */
  rangeParams: number;
  gin: string[];
  range: string[];
  exact: string[];
}

/** Builds the WHERE parts of a filter. `after` is the keyset position (strictly older rows follow it). */
export function buildFilterSql(siteId: string, filter: ConversationFilter, after?: ListingPosition, params = new SqlParams()): FilterSql {
  const gin: string[] = [];
  const range: string[] = [`site_id = ${params.add(siteId)}`];
  const exact: string[] = [];
  if (filter.from !== undefined) range.push(`created_at >= ${params.add(filter.from, '::timestamptz')}`);
  if (filter.to !== undefined) range.push(`created_at < ${params.add(filter.to, '::timestamptz')}`);
  if (after) range.push(`(created_at, id) < (${params.add(after.createdAt, '::timestamptz')}, ${params.add(after.id)})`);
  const rangeParams = params.values.length;

  const terms = [`site:${siteId}`];
  if (filter.channel) terms.push(`channel:${filter.channel}`);
  if (filter.language) terms.push(`language:${filter.language}`);
  if (filter.agentId) terms.push(`agent:${filter.agentId}`);
  if (filter.feedback) terms.push(`feedback:${filter.feedback}`);
  // Filter rule 2: a labels.* or score filter matches labeled conversations only.
  const status = filter.labelStatus ?? (hasLabelFilter(filter) ? 'labeled' : undefined);
  if (status) terms.push(`status:${status}`);
  terms.push(...filter.labelsAll);
  gin.push(`search_terms @> ${params.add(terms, '::text[]')}`);

  for (const group of filter.labelsAny) gin.push(`search_terms && ${params.add(group, '::text[]')}`);

  for (const name of SCORE_NAMES) {
    const bounds = filter.scores[name];
    if (!bounds) continue;
    const column = SCORE_COLUMN[name];
    // Filter rule 6: comparisons with a missing score (NULL) are never true.
    if (bounds.min !== undefined) exact.push(`${column} >= ${params.add(bounds.min, '::float8')}`);
    if (bounds.max !== undefined) exact.push(`${column} <= ${params.add(bounds.max, '::float8')}`);
    // Candidate narrowing through the index: the score's bucket floor(score * 20) is stored as a
    // term; floor is monotonic, so every score within the bounds lies in buckets low..high.
    const low = Math.floor((bounds.min ?? 0) * 20);
    const high = Math.floor((bounds.max ?? 1) * 20);
    if (high < low) exact.push('false');
    else if (high - low + 1 <= MAX_SCORE_BUCKETS) {
      const buckets = Array.from({ length: high - low + 1 }, (_, i) => `${BUCKET_PREFIX[name]}:${low + i}`);
      gin.push(`search_terms && ${params.add(buckets, '::text[]')}`);
    }
  }

  if (filter.keywords.length) {
    const query = filter.keywords.map((k) => `phraseto_tsquery('simple'::regconfig, ${params.add(k)})`).join(' && ');
    gin.push(`title_tsv @@ (${query})`);
  }

  if (filter.labelsNone.length) exact.push(`NOT (label_tokens && ${params.add(filter.labelsNone, '::text[]')})`);

  const narrowed = terms.length > 1 || gin.length > 1 || exact.length > 0;
  return { params, rangeParams, narrowed, gin, range, exact };
}

export const ORDER = 'ORDER BY created_at DESC, id DESC';

/** All conditions of a filter, ANDed. */
export function whereAll(sql: FilterSql): string {
  return [...sql.range, ...sql.gin, ...sql.exact].join(' AND ');
}

/** Conditions other than the range (what a walk of the creation-time index filters rows on). */
export function whereRowFilters(sql: FilterSql): string {
  return [...sql.gin, ...sql.exact].join(' AND ') || 'true';
}

/**
 * Walk plan, bounded: the newest `window` rows of the range by the btree, filtered, the first
 * `limit` matches. The LIMIT inside the subquery keeps the planner on the btree and bounds
 * the work whatever the filters' selectivity.
 */
export function walkWindowSql(sql: FilterSql, window: number, limit: number): Statement {
  const p = sql.params;
  const text = `SELECT id, created_at FROM (
    SELECT * FROM conversations WHERE ${sql.range.join(' AND ')} ${ORDER} LIMIT ${p.add(window)}
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
 * Index plan: the matches through the GIN index (bitmap), at most `probe` of them, sorted by
 * the listing order. `taken` tells whether the set was complete (taken < probe).
 */
export function ginSortedSql(sql: FilterSql, probe: number, limit: number): Statement {
  const p = sql.params;
  const text = `SELECT id, created_at, count(*) OVER ()::int AS taken FROM (
    SELECT id, created_at FROM conversations WHERE ${whereAll(sql)} LIMIT ${p.add(probe)}
  ) m ${ORDER} LIMIT ${p.add(limit)}`;
  return { text, values: p.values };
}

/** Unbounded walk of the creation-time index with the filters (matches known to be dense). */
export function walkSql(sql: FilterSql, limit: number): Statement {
  const p = sql.params;
  return { text: `SELECT id, created_at FROM conversations WHERE ${whereAll(sql)} ${ORDER} LIMIT ${p.add(limit)}`, values: p.values };
}

/** Count of matches, stopping at `cap` rows. */
export function cappedCountSql(sql: FilterSql, cap: number): Statement {
  const p = sql.params;
  return { text: `SELECT count(*)::int AS n FROM (SELECT 1 FROM conversations WHERE ${whereAll(sql)} LIMIT ${p.add(cap)}) c`, values: p.values };
}

/** Matches among the newest `window` rows of the range, and how many rows that window held. */
export function windowCountSql(sql: FilterSql, window: number): Statement {
  const p = sql.params;
  const text = `SELECT (count(*) FILTER (WHERE ${whereRowFilters(sql)}))::int AS hits, count(*)::int AS seen FROM (
    SELECT * FROM conversations WHERE ${sql.range.join(' AND ')} ${ORDER} LIMIT ${p.add(window)}
  ) w`;
  return { text, values: p.values };
}
