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
 * - `transcripts`: conversation_transcripts_site_created_idx, every transcript of the site, for a
 *   filter of `q` with at most a language and a time range (walksTranscripts, transcript-sql.ts):
 *   its walks test each transcript's document in the listing order, with no probe per
 *   conversation; a campaign of newest conversations without the word is passed at about a third
 *   of a microsecond a row. Its statements are transcript-sql.ts's; a walk of the conversations
 *   for such a plan (walkFilterSql) reads the whole order, as `created`.
 */
export type WalkIndex = 'created' | 'labeled' | 'negative' | 'positive' | 'transcripts';

/** The walk indexes over `conversations` that hold only some rows (a predicate). */
type PartialWalkIndex = Exclude<WalkIndex, 'created' | 'transcripts'>;

/**
 * The rows each partial walk index holds: its predicate, spelled as the migration spells it, so
 * PostgreSQL proves the index usable from the statement's own condition.
 */
export const WALK_INDEX_ROWS: Record<PartialWalkIndex, string> = {
  labeled: "label_status = 'labeled'",
  negative: 'feedback_negative > 0',
  positive: 'feedback_positive > 0',
};

/** The density term of each partial walk index (site-densities.ts). */
const WALK_INDEX_TERM: Record<PartialWalkIndex, string> = {
  labeled: 'status:labeled',
  negative: 'feedback:negative',
  positive: 'feedback:positive',
};

/** The partial walk indexes holding every match of `filter` (its fixed rating, its label status). */
export function walkIndexesFor(filter: ConversationFilter): PartialWalkIndex[] {
  const out: PartialWalkIndex[] = [];
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
  const rows = (index: PartialWalkIndex) =>
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
  if (index !== 'created' && index !== 'transcripts') sql.range.push(WALK_INDEX_ROWS[index]);
  return sql;
}
