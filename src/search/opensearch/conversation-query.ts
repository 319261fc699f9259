import { FILTERS } from '../filters/filter-registry';
import type { ConversationFilter } from '../filters/filter-values';
import type { ListingPosition } from '../listing/conversation-search';

// The index fields the filter's clauses read are their registry entries' (src/search/filters/).
export { FEEDBACK_FIELD } from '../filters/fields/columns';
export { SCORE_FIELD } from '../filters/fields/scores';
export { boundToEpochMillis } from '../filters/fields/window';

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

/**
 * The bool query of a filter, all in filter context (no scoring): the site, then each field's
 * clauses from the filter registry, the same conditions as the Postgres engine's buildFilterSql.
 */
export function buildFilterQuery(
  siteId: string,
  filter: ConversationFilter,
): { bool: { filter: object[]; must_not?: object[] } } {
  const clauses = FILTERS.clauses(filter);
  const bool: { filter: object[]; must_not?: object[] } = {
    filter: [{ term: { site_id: siteId } }, ...clauses.filter],
  };
  if (clauses.mustNot.length) bool.must_not = clauses.mustNot;
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
