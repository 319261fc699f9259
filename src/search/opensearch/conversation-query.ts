import type { ConversationFilter, ScoreName } from '../listing/conversation-filter';
import { hasLabelFilter, SCORE_NAMES } from '../listing/conversation-filter';
import type { ListingPosition } from '../listing/conversation-search';
import { transcriptClauses } from './transcript-query';

/** Index field of each score (also read by the stats aggregations). */
export const SCORE_FIELD: Record<ScoreName, string> = {
  quality: 'score_quality',
  service: 'score_service',
  trust: 'score_trust',
};
/** Index field counting each kind of rating (also read by the stats aggregations). */
export const FEEDBACK_FIELD = { positive: 'feedback_positive', negative: 'feedback_negative' } as const;

/**
 * The listing's order: newest first by creation time, id descending as tie-break (byte order, as
 * Postgres orders `id COLLATE "C"`). The site comes first although every hit has the same one:
 * Lucene stops a sorted search early only when the search sort is a prefix of the index sort
 * (TopFieldCollector.canEarlyTerminate), and the index is sorted by (site_id, created_at desc,
 * id desc) (INDEX_SORT in conversation-index.ts).
 */
export const LISTING_SORT = [
  { site_id: { order: 'asc' } },
  { created_at: { order: 'desc' } },
  { id: { order: 'desc' } },
];

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?)(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * Epoch milliseconds of a filter bound such that, for creation times stored in whole
 * milliseconds, `created_at >= ms` ⇔ `created_at >= bound` and `created_at < ms` ⇔
 * `created_at < bound`, as Postgres evaluates them: the bound is first rounded to microseconds
 * (timestamptz precision), then any remainder below a millisecond moves it up to the next one.
 */
export function boundToEpochMillis(bound: string): number {
  const m = TIMESTAMP.exec(bound);
  if (!m) throw new Error(`not an ISO 8601 timestamp with offset: ${bound}`);
  const nanos = Number((m[2] ?? '').padEnd(9, '0'));
  const micros = Math.round(nanos / 1000);
  const base = Date.parse(`${m[1]}${m[3].toUpperCase()}`);
  return base + Math.ceil(micros / 1000);
}

/**
 * The bool query of a filter, all in filter context (no scoring): the same conditions as the
 * Postgres engine's buildFilterSql.
 */
export function buildFilterQuery(
  siteId: string,
  filter: ConversationFilter,
): { bool: { filter: object[]; must_not?: object[] } } {
  const clauses: object[] = [{ term: { site_id: siteId } }];
  if (filter.channel) clauses.push({ term: { channel: filter.channel } });
  if (filter.language) clauses.push({ term: { language: filter.language } });
  if (filter.agentId) clauses.push({ term: { agent_id: filter.agentId } });
  if (filter.feedback) clauses.push({ range: { [FEEDBACK_FIELD[filter.feedback]]: { gte: 1 } } });
  // Filter rule 2: a labels.* or score filter matches labeled conversations only.
  const status = filter.labelStatus ?? (hasLabelFilter(filter) ? 'labeled' : undefined);
  if (status) clauses.push({ term: { label_status: status } });
  for (const token of filter.labelsAll) clauses.push({ term: { label_tokens: token } });
  for (const group of filter.labelsAny) clauses.push({ terms: { label_tokens: group } });
  for (const name of SCORE_NAMES) {
    const bounds = filter.scores[name];
    if (!bounds || (bounds.min === undefined && bounds.max === undefined)) continue;
    // Filter rule 6: a missing score is not indexed, so no range matches it.
    clauses.push({
      range: {
        [SCORE_FIELD[name]]: {
          ...(bounds.min !== undefined ? { gte: bounds.min } : {}),
          ...(bounds.max !== undefined ? { lte: bounds.max } : {}),
        },
      },
    });
  }
  for (const keyword of filter.keywords)
    clauses.push({ match_phrase: { title: { query: keyword, slop: 0 } } });
  if (filter.from !== undefined || filter.to !== undefined) {
    clauses.push({
      range: {
        created_at: {
          ...(filter.from !== undefined ? { gte: boundToEpochMillis(filter.from) } : {}),
          ...(filter.to !== undefined ? { lt: boundToEpochMillis(filter.to) } : {}),
          format: 'epoch_millis',
        },
      },
    });
  }
  const mustNot: object[] = [];
  if (filter.labelsNone.length) mustNot.push({ terms: { label_tokens: filter.labelsNone } });
  // reviewStatus (workflows-v1 §2): review_state is indexed only when the conversation has a review.
  if (filter.reviewStatus === 'reviewed') clauses.push({ term: { review_state: 'current' } });
  if (filter.reviewStatus === 'outdated') clauses.push({ term: { review_state: 'outdated' } });
  if (filter.reviewStatus === 'unreviewed') mustNot.push({ exists: { field: 'review_state' } });
  if (filter.text) {
    const text = transcriptClauses(filter.text, filter.language);
    clauses.push(...text.filter);
    mustNot.push(...text.mustNot);
  }
  const bool: { filter: object[]; must_not?: object[] } = { filter: clauses };
  if (mustNot.length) bool.must_not = mustNot;
  return { bool };
}

/** `search_after` values of a listing position: the sort values [site_id, created_at in ms, id]. */
export function searchAfter(siteId: string, position: ListingPosition): [string, number, string] {
  return [siteId, Date.parse(position.createdAt), position.id];
}

/**
 * Body of one page: `limit + 1` hits to know whether more follow, strictly after `after`
 * (`size` overrides the number of hits asked for, when a page is being filled).
 */
export function buildPageBody(
  siteId: string,
  filter: ConversationFilter,
  options: { limit: number; after?: ListingPosition; size?: number },
) {
  return {
    query: buildFilterQuery(siteId, filter),
    sort: LISTING_SORT,
    size: options.size ?? options.limit + 1,
    ...(options.after ? { search_after: searchAfter(siteId, options.after) } : {}),
    track_total_hits: false,
    _source: false,
  };
}

/**
 * Body of a capped count. Totals are tracked up to `cap + 1`, as the Postgres engine counts: an
 * exact total of `cap` then reads `eq`, and only `cap + 1` or more is capped. (With
 * `track_total_hits: cap`, OpenSearch may answer `gte` at exactly `cap` hits when its collector
 * stops early with segments left, which would read as capped.)
 */
export function buildCountBody(siteId: string, filter: ConversationFilter, cap: number) {
  return { query: buildFilterQuery(siteId, filter), size: 0, track_total_hits: cap + 1 };
}

/** The count of a count search's `hits.total` (track_total_hits: cap + 1). */
export function countFromTotal(
  total: { value: number; relation: 'eq' | 'gte' } | number | undefined,
  cap: number,
): { value: number; capped: boolean } {
  if (total === undefined) throw new Error('OpenSearch answered without hits.total');
  const value = typeof total === 'number' ? total : total.value;
  const relation = typeof total === 'number' ? 'eq' : total.relation;
  if (value > cap) return { value: cap, capped: true };
  // A lower bound at or below the cap says nothing exact: not a count to show.
  if (relation === 'gte')
    throw new Error(`OpenSearch answered a lower bound (gte ${value}) below the count cap`);
  return { value, capped: false };
}
