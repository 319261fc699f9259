import { SqlParams } from '../../database/sql-statement';
import { hasNarrowScoreBand } from '../filters/fields/scores';
import { reviewStatusSql } from '../filters/fields/review-status';
import { FILTERS } from '../filters/filter-registry';
import type { ConversationFilter } from '../filters/filter-values';
import type { ListingPosition } from '../listing/conversation-search';

// Each field's own SQL is its registry entry's (src/search/filters/fields/); re-exported for the
// engines and features that read a part of it.
export { labelBit, labelBitsConditions, labelMask } from '../filters/fields/labels';
export { hasNarrowScoreBand, MAX_SCORE_BUCKETS, SCORE_COLUMN } from '../filters/fields/scores';
export { reviewStatusSql } from '../filters/fields/review-status';
export { impliedLabelStatus } from '../filters/filter-registry';

/*
 * The one place a parsed ConversationFilter becomes SQL conditions and parameters on
 * `conversations` (or on its title-term postings): the listing's statements, the statistics
 * scans and the exports all build their WHERE clauses here, from each field's SQL in the filter
 * registry (src/search/filters/), so a filter is added once and every feature renders it from
 * the same parsed form.
 */

/**
 * A filter as SQL for one kind of plan (every condition is exact in both; they are equivalent):
 * - walk (default): conditions on the columns the creation-time index carries
 *   (conversations_site_created_cover_idx: channel, language, agent, label status, feedback
 *   counts, scores and the label tokens as a bitmask), so walking it needs no heap unless
 *   keywords are given (the title's tsvector is not in that index);
 * - forIndex: conditions the GIN index over (search_terms, title_tsv) answers: the equality
 *   filters and labels.all as one `search_terms @> terms`, each labels.any group and narrow
 *   score-bucket bands as `search_terms && group`, the keywords as one tsquery.
 * `range` holds the site, creation-time bounds and the cursor; `rows` the other conditions.
 * Postgres needs every parameter of a statement used, so each plan builds its own FilterSql.
 */
export interface FilterSql {
  params: SqlParams;
  /** Whether anything besides the site and the creation-time range restricts the rows. */
  narrowed: boolean;
  /** Whether a condition needs a column the covering index lacks (the title's tsvector). */
  needsHeap: boolean;
  /** (Walk) the range conditions use parameters $1..$rangeParams only. */
  rangeParams: number;
  range: string[];
  rows: string[];
  /** The relation (and alias) the conditions are on: `conversations` when absent. */
  from?: string;
}

/**
 * Whether anything besides the site and the creation-time range restricts the rows: a filter
 * that does not is read straight off the creation-time index (FilterSql.narrowed).
 */
export function isNarrowed(filter: ConversationFilter): boolean {
  return FILTERS.narrows(filter);
}

/**
 * The equality terms a GIN plan can put in its `search_terms @>` condition, unscoped, in the
 * order buildFilterSql adds them (each field's `terms`, in the registry's order: channel,
 * language, agent, feedback, label status, each labels.all token).
 */
export function indexEqualityTerms(filter: ConversationFilter): string[] {
  return FILTERS.sql(filter, new SqlParams(), { siteId: '', index: true })
    .terms()
    .map((e) => e.term);
}

/** Builds the WHERE parts of a filter. `after` is the keyset position (strictly older rows follow it). */
export function buildFilterSql(
  siteId: string,
  filter: ConversationFilter,
  after?: ListingPosition,
  options: {
    forIndex?: boolean;
    /**
     * (forIndex) Equality terms (unscoped, as indexEqualityTerms spells them) checked on the
     * candidate row instead of in the GIN condition (index-terms.ts chooses them).
     */
    onRow?: ReadonlySet<string>;
  } = {},
): FilterSql {
  const params = new SqlParams();
  const index = options.forIndex === true;
  const parts = FILTERS.sql(filter, params, { siteId, index });
  const rows: string[] = [];
  const equal = index ? parts.terms() : [];
  // A GIN plan checks the site on the candidate rows, never through the creation-time btree:
  // ANDing the GIN bitmap with the site's (a million entries in a large site) took 1.1-1.4 s
  // for a common keyword or term. When the GIN condition holds a site-scoped term (every
  // equality filter, label and keyword is one: `<site_id>|…`), its matches are the site's and no
  // site check is left, so a count can skip the heap (all-visible pages). Otherwise `IS TRUE`
  // (site_id is never null: the same condition) keeps the btree out. A narrow score band keeps
  // the site indexable: the score's own btree (site_id, score_x) joins the bitmap on it.
  const narrowBand = hasNarrowScoreBand(filter);
  const scopedTerms = index && !narrowBand && (equal.length > 0 || parts.siteScoped);
  const range: string[] = [];
  if (!scopedTerms) {
    const site = params.add(siteId);
    range.push(index && !narrowBand ? `(site_id = ${site}) IS TRUE` : `site_id = ${site}`);
  }
  range.push(...parts.range());
  if (after)
    range.push(
      `(created_at, id COLLATE "C") < (${params.add(after.createdAt, '::timestamptz')}, ${params.add(after.id)})`,
    );
  const rangeParams = params.values.length;

  if (index) {
    // Terms are scoped to the site (`<site_id>|<term>`, see the SiteScopedSearchTerms migration).
    // Each equality term with its exact check on the row. A dense term (a posting list of a
    // large part of the site) may cost more to merge in the GIN index than it narrows the
    // candidates: those of options.onRow are checked on the candidate rows instead.
    const kept = equal.filter((e) => !options.onRow?.has(e.term));
    // The GIN condition must keep at least one term (the chooser keeps one; a fallback): the
    // other GIN conditions (labels.any groups, keywords, a narrow score band) may stand in.
    const otherIndexed = filter.labelsAny.length > 0 || filter.keywords.length > 0 || narrowBand;
    if (kept.length === 0 && equal.length > 0 && !otherIndexed) kept.push(equal[0]);
    if (kept.length)
      rows.push(
        `search_terms @> ${params.add(
          kept.map((e) => `${siteId}|${e.term}`),
          '::text[]',
        )}`,
      );
    for (const e of equal) if (!kept.includes(e)) rows.push(e.row(params));
    rows.push(...parts.index());
  } else rows.push(...parts.walk());
  rows.push(...parts.rows());

  return {
    params,
    rangeParams,
    narrowed: isNarrowed(filter),
    needsHeap: parts.needsHeap,
    range,
    rows,
  };
}

/**
 * The listing order. The id tie-break is in byte order (`COLLATE "C"`), as OpenSearch orders
 * keyword ids, whatever the database collation: a cursor may move between the engines. The
 * covering index carries `id COLLATE "C" DESC` (migration ByteOrderListingIndex).
 */
export const ORDER = 'ORDER BY created_at DESC, id COLLATE "C" DESC';

/** All conditions of a filter, ANDed. */
export function whereAll(sql: FilterSql): string {
  return [...sql.range, ...sql.rows].join(' AND ');
}

/** Conditions other than the range (what a walk of the creation-time index filters rows on). */
export function whereRowFilters(sql: FilterSql): string {
  return sql.rows.join(' AND ') || 'true';
}
/**
 * Longest term body (bytes) held as such: conversation_title_terms stores a longer one as its
 * md5 (migration SiteScopedTitleTerms, HASHED_BODY_BYTES), so its keyword is left to the GIN plan.
 */
const POSTING_BODY_BYTES = 200;

/**
 * The title terms (unscoped, as the postings hold them) that match exactly the keywords, when
 * each keyword is one or two words, each of ASCII letters or of digits, separated by spaces: `w:<word>`
 * for a word, `p:<first> <second>` for a pair, lower-cased, deduplicated. For such keywords the
 * parser of `phraseto_tsquery('simple', …)` makes one lexeme per word, spelled so (the property
 * test in keyword-terms.e2e-spec.ts compares with conversation_keyword_terms). Undefined for any
 * other keyword (its terms are left to the SQL functions and the GIN plan) or none.
 */
export function postingTerms(keywords: string[]): string[] | undefined {
  if (keywords.length === 0) return undefined;
  const terms = new Set<string>();
  for (const keyword of keywords) {
    const words = keyword.trim().split(/ +/u);
    // Letters and digits mixed are not always one lexeme (`0e0a` is the number `0e0` and `a`).
    if (words.length > 2 || !words.every((w) => /^(?:[A-Za-z]+|[0-9]+)$/u.test(w))) return undefined;
    const body = words.join(' ').toLowerCase();
    if (body.length > POSTING_BODY_BYTES) return undefined;
    terms.add(words.length === 1 ? `w:${body}` : `p:${body}`);
  }
  return [...terms];
}

/**
 * A filter for the postings plan (migration ConversationPostings): the matches are the postings of
 * `driver` (the rarest title term of the keywords or `t:` problem token of labels.all) in the
 * site, in the listing order, each checked on the index tuple against every other filter (the
 * covering index's columns), and against the keywords' `others` terms by a probe of the same
 * index (site, term, creation time, id). Title terms come from postingTerms, so the keywords
 * are matched exactly.
 */
export function postingsFilterSql(
  siteId: string,
  filter: ConversationFilter,
  terms: { driver: string; others: string[] },
  after?: ListingPosition,
): FilterSql {
  // The postings carry the covering index's columns, not review_state nor converted: those are
  // probed on the conversation by primary key (the implied label status stays on the posting).
  const onPostings: ConversationFilter = {
    ...filter,
    keywords: [],
    reviewStatus: undefined,
    converted: undefined,
  };
  if (filter.reviewStatus) onPostings.labelStatus = 'labeled';
  const sql = buildFilterSql(siteId, onPostings, after);
  const p = sql.params;
  const range = [...sql.range, `term = ${p.add(terms.driver)}`];
  const rows = [
    ...sql.rows,
    ...(filter.reviewStatus
      ? [
          `EXISTS (SELECT 1 FROM conversations r WHERE r.id = p.id AND ${reviewStatusSql(filter.reviewStatus, 'r.review_state')})`,
        ]
      : []),
    ...(filter.converted !== undefined
      ? [
          `EXISTS (SELECT 1 FROM conversations r WHERE r.id = p.id AND r.converted = ${p.add(filter.converted)})`,
        ]
      : []),
    ...terms.others.map(
      (term) => `EXISTS (SELECT 1 FROM conversation_postings o
        WHERE o.site_id = p.site_id AND o.term = ${p.add(term)} AND o.created_at = p.created_at AND o.id = p.id)`,
    ),
  ];
  return {
    params: p,
    rangeParams: p.values.length,
    narrowed: true,
    needsHeap: false,
    range,
    rows,
    from: 'conversation_postings p',
  };
}
