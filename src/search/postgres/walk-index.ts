import { buildFilterSql, type FilterSql } from '../filter-sql/conversation-filter-sql';
import type { ConversationFilter } from '../listing/conversation-filter';
import type { ListingPosition } from '../listing/conversation-search';
import { impliedLabelStatus } from '../filters/filter-registry';
import type { SiteDensities } from './site-densities';

/**
 * Which index a plan's walks of the listing order read (migration LivingSiteWalkIndexes;
 * docs/query-engine.md, "Walk indexes"):
 * - `created`: conversations_site_created_cover_idx, every conversation of the site;
 * - `labeled`: conversations_site_labeled_created_idx, the labeled ones only;
 * - `negative` / `positive`: conversations_site_{negative,positive}_created_idx, those with at
 *   least one rating of that kind.
 * On a living site the newest conversations are pending and unrated: a label filter's walk of the
 * whole order reads all of them (and the dead versions their labeling left) before its first
 * match. The same columns in the same order, so a walk of any of them is index-only.
 */
export type WalkIndex = 'created' | 'labeled' | 'negative' | 'positive';

/**
 * The rows each partial walk index holds: its predicate, spelled as the migration spells it, so
 * PostgreSQL proves the index usable from the statement's own condition.
 */
export const WALK_INDEX_ROWS: Record<Exclude<WalkIndex, 'created'>, string> = {
  labeled: "label_status = 'labeled'",
  negative: 'feedback_negative > 0',
  positive: 'feedback_positive > 0',
};

/** The density term of each partial walk index (site-densities.ts). */
const WALK_INDEX_TERM: Record<Exclude<WalkIndex, 'created'>, string> = {
  labeled: 'status:labeled',
  negative: 'feedback:negative',
  positive: 'feedback:positive',
};

/** The partial walk indexes holding every match of `filter` (its fixed rating, its label status). */
export function walkIndexesFor(filter: ConversationFilter): Exclude<WalkIndex, 'created'>[] {
  const out: Exclude<WalkIndex, 'created'>[] = [];
  if (filter.feedback) out.push(filter.feedback);
  if (impliedLabelStatus(filter) === 'labeled') out.push('labeled');
  return out;
}

/**
 * The walk index for `filter`: of the partial indexes holding every match, the one with the
 * fewest rows by the site's exact counts (the rating's when they cannot be read), else `created`.
 * The smaller index holds no more rows the filter cannot match than the larger.
 */
export function chooseWalkIndex(filter: ConversationFilter, densities?: SiteDensities): WalkIndex {
  const candidates = walkIndexesFor(filter);
  if (candidates.length === 0) return 'created';
  if (!densities) return candidates[0];
  const rows = (index: Exclude<WalkIndex, 'created'>) =>
    densities.terms.get(WALK_INDEX_TERM[index]) ?? Number.POSITIVE_INFINITY;
  return [...candidates].sort((a, b) => rows(a) - rows(b))[0];
}

/**
 * The walk form of a filter (buildFilterSql) on `index`: its rows' predicate joins the range, so
 * every bounded walk, edge and density sample of the plan reads that index's entries only. The
 * predicate is implied by the filter: the same rows match.
 */
export function walkFilterSql(
  siteId: string,
  filter: ConversationFilter,
  index: WalkIndex,
  after?: ListingPosition,
): FilterSql {
  const sql = buildFilterSql(siteId, filter, after);
  if (index !== 'created') sql.range.push(WALK_INDEX_ROWS[index]);
  return sql;
}
