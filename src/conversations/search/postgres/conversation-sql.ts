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
 * - `gin`: conditions the GIN index over (search_terms, title_tsv) answers: the equality
 *   filters as one `search_terms @> terms` (channel, language, agent, label status other than
 *   labeled, feedback, labels.all), each labels.any group and narrow score-bucket bands as
 *   `search_terms && group`, and the keywords as one tsquery;
 * - `range`: site, creation-time bounds and the cursor, answered by the
 *   (site_id, created_at DESC, id DESC) btree;
 * - `exact`: conditions checked row by row (label_status = 'labeled', score bounds, labels.none).
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

/**
 * Row check equivalent to one search term, for terms too dense to be worth the GIN index:
 * a plain column comparison, or for a label token a containment on the unindexed label_tokens.
 */
export function termRowCheck(term: string, params: SqlParams): string {
  const colon = term.indexOf(':');
  const kind = term.slice(0, colon);
  const value = term.slice(colon + 1);
  switch (kind) {
    case 'channel':
      return `channel = ${params.add(value)}`;
    case 'language':
      return `language = ${params.add(value)}`;
    case 'agent':
      return `agent_id = ${params.add(value)}`;
    case 'status':
      return `label_status = ${params.add(value)}`;
    case 'feedback':
      return value === 'positive' ? 'feedback_positive > 0' : 'feedback_negative > 0';
    default:
      return `label_tokens @> ${params.add([term], '::text[]')}`;
  }
}

/**
 * Builds the WHERE parts of a filter. `after` is the keyset position (strictly older rows
 * follow it). `dense` gives the share of rows of terms known to be dense (from the planner's
 * statistics): those are checked on the row rather than through the GIN index, because merging
 * posting lists of hundreds of thousands of entries costs tens to hundreds of milliseconds per
 * query (bench/notes.md) while the rarer terms already narrow the candidates.
 */
export function buildFilterSql(
  siteId: string,
  filter: ConversationFilter,
  after?: ListingPosition,
  params = new SqlParams(),
  dense: ReadonlyMap<string, number> = new Map(),
): FilterSql {
  const gin: string[] = [];
  const range: string[] = [`site_id = ${params.add(siteId)}`];
  const exact: string[] = [];
  if (filter.from !== undefined) range.push(`created_at >= ${params.add(filter.from, '::timestamptz')}`);
  if (filter.to !== undefined) range.push(`created_at < ${params.add(filter.to, '::timestamptz')}`);
  if (after) range.push(`(created_at, id) < (${params.add(after.createdAt, '::timestamptz')}, ${params.add(after.id)})`);
  const rangeParams = params.values.length;

  // Never the site's own term: half the table or more, and site_id = $1 is already a range
  // condition; nor status:labeled (80% of rows): a check on the row.
  const terms: string[] = [];
  if (filter.channel) terms.push(`channel:${filter.channel}`);
  if (filter.language) terms.push(`language:${filter.language}`);
  if (filter.agentId) terms.push(`agent:${filter.agentId}`);
  if (filter.feedback) terms.push(`feedback:${filter.feedback}`);
  // Filter rule 2: a labels.* or score filter matches labeled conversations only.
  const status = filter.labelStatus ?? (hasLabelFilter(filter) ? 'labeled' : undefined);
  if (status === 'labeled') exact.push(`label_status = 'labeled'`);
  else if (status) terms.push(`status:${status}`);
  terms.push(...filter.labelsAll);
  const rowTerms = terms.filter((t) => dense.has(t)).sort((a, b) => dense.get(a)! - dense.get(b)!);
  const indexed = terms.filter((t) => !dense.has(t));
  // Keep one term for the index when nothing else would narrow it: the rarest of the dense ones.
  const onlyDense = indexed.length === 0 && rowTerms.length > 0 && !filter.keywords.length && !filter.labelsAny.length;
  if (onlyDense) indexed.push(rowTerms.shift()!);
  if (indexed.length) gin.push(`search_terms @> ${params.add(indexed, '::text[]')}`);
  for (const term of rowTerms) exact.push(termRowCheck(term, params));

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

  const narrowed = gin.length > 0 || exact.length > 0;
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
    SELECT id, created_at FROM ${ginCandidates(sql)} LIMIT ${p.add(probe)}
  ) m ${ORDER} LIMIT ${p.add(limit)}`;
  return { text, values: p.values };
}

/**
 * The rows matching the filter, taken through the GIN conditions only: the site and range
 * conditions are applied to the GIN candidates, fenced off by OFFSET 0 so the planner cannot
 * AND the GIN bitmap with a bitmap of the site's whole btree range (a million entries, 270 ms
 * measured, for nothing: the candidates are few). Without GIN conditions, the plain filter.
 */
function ginCandidates(sql: FilterSql): string {
  if (!sql.gin.length) return `conversations WHERE ${whereAll(sql)}`;
  return `(SELECT * FROM conversations WHERE ${sql.gin.join(' AND ')} OFFSET 0) g WHERE ${[...sql.range, ...sql.exact].join(' AND ')}`;
}

/** Unbounded walk of the creation-time index with the filters (matches known to be dense). */
export function walkSql(sql: FilterSql, limit: number): Statement {
  const p = sql.params;
  return { text: `SELECT id, created_at FROM conversations WHERE ${whereAll(sql)} ${ORDER} LIMIT ${p.add(limit)}`, values: p.values };
}

/** Count of matches, stopping at `cap` rows. */
export function cappedCountSql(sql: FilterSql, cap: number): Statement {
  const p = sql.params;
  return { text: `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${ginCandidates(sql)} LIMIT ${p.add(cap)}) c`, values: p.values };
}

/** Matches among the newest `window` rows of the range, and how many rows that window held. */
export function windowCountSql(sql: FilterSql, window: number): Statement {
  const p = sql.params;
  const text = `SELECT (count(*) FILTER (WHERE ${whereRowFilters(sql)}))::int AS hits, count(*)::int AS seen FROM (
    SELECT * FROM conversations WHERE ${sql.range.join(' AND ')} ${ORDER} LIMIT ${p.add(window)}
  ) w`;
  return { text, values: p.values };
}
