import type { ConversationFilter, ReviewStatus, ScoreName } from '../listing/conversation-filter';
import { hasLabelFilter, SCORE_NAMES } from '../listing/conversation-filter';
import type { ListingPosition } from '../listing/conversation-search';
import { TAXONOMY_TOKENS } from '../../labels/taxonomy';
import { SqlParams } from '../../database/sql-statement';
import { transcriptExistsSql } from './text-query-sql';

/*
 * The one place a parsed ConversationFilter becomes SQL conditions and parameters on
 * `conversations` (or on its title-term postings): the listing's statements, the statistics
 * scans and the exports all build their WHERE clauses here, so a filter is added once and every
 * feature renders it from the same parsed form.
 */

/** The column of each score. */
export const SCORE_COLUMN: Record<ScoreName, string> = {
  quality: 'score_quality',
  service: 'score_service',
  trust: 'score_trust',
};
const BUCKET_PREFIX: Record<ScoreName, string> = { quality: 'qb', service: 'sb', trust: 'tb' };
/** Score bounds spanning more 0.05-wide buckets than this are left to the exact comparison only. */
export const MAX_SCORE_BUCKETS = 4;

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

/** Position of each taxonomy token in `label_bits` (CoveringListingIndex migration). */
const TOKEN_POSITIONS = new Map(TAXONOMY_TOKENS.map((token, i) => [token, i]));

/** A token's bit in `label_bits` (also the key of its rollup rows), undefined for a token without one. */
export function labelBit(token: string): number | undefined {
  return TOKEN_POSITIONS.get(token);
}

/**
 * The label conditions of a filter on `label_bits` (walk form): every labels.all token held, a
 * token of each labels.any group, no labels.none token.
 */
export function labelBitsConditions(filter: ConversationFilter, params: SqlParams): string[] {
  const conditions: string[] = [];
  if (filter.labelsAll.length) {
    const mask = params.add(labelMask(filter.labelsAll), '::bigint');
    conditions.push(`label_bits & ${mask} = ${mask}`);
  }
  for (const group of filter.labelsAny)
    conditions.push(`label_bits & ${params.add(labelMask(group), '::bigint')} <> 0`);
  if (filter.labelsNone.length)
    conditions.push(`label_bits & ${params.add(labelMask(filter.labelsNone), '::bigint')} = 0`);
  return conditions;
}

/** The bitmask of label tokens, as text for a `::bigint` parameter. */
export function labelMask(tokens: string[]): string {
  return tokens
    .reduce((mask, token) => {
      const bit = labelBit(token);
      return bit === undefined ? mask : mask | (1n << BigInt(bit));
    }, 0n)
    .toString();
}

/** Whether a score bound spans at most MAX_SCORE_BUCKETS buckets (a band a score index answers well). */
export function hasNarrowScoreBand(filter: ConversationFilter): boolean {
  return SCORE_NAMES.some((name) => {
    const bounds = filter.scores[name];
    return (
      bounds !== undefined &&
      Math.floor((bounds.max ?? 1) * 20) - Math.floor((bounds.min ?? 0) * 20) + 1 <= MAX_SCORE_BUCKETS
    );
  });
}

/**
 * The condition of `reviewStatus` (workflows-v1 §2) on `conversations.review_state` (migration
 * LabelReviews): reviewed, a current review applies; outdated, only an outdated review;
 * unreviewed, no review at all. Each also implies labeled (impliedLabelStatus). The column is not
 * in the covering index: a plan reading it needs the heap.
 */
export function reviewStatusSql(status: ReviewStatus, column = 'review_state'): string {
  switch (status) {
    case 'reviewed':
      return `${column} = 'current'`;
    case 'outdated':
      return `${column} = 'outdated'`;
    case 'unreviewed':
      return `${column} IS NULL`;
  }
}

/**
 * The label status every match of the filter has: the explicit `labelStatus`, or `labeled`
 * implied by a labels.* or score filter (filter rule 2: those match labeled conversations only).
 */
export function impliedLabelStatus(filter: ConversationFilter): string | undefined {
  return filter.labelStatus ?? (hasLabelFilter(filter) ? 'labeled' : undefined);
}

/**
 * Whether anything besides the site and the creation-time range restricts the rows: a filter
 * that does not is read straight off the creation-time index (FilterSql.narrowed).
 */
export function isNarrowed(filter: ConversationFilter): boolean {
  // Each is a condition buildFilterSql adds on the rows (label and score filters imply a status).
  return Boolean(
    filter.channel ||
    filter.language ||
    filter.agentId ||
    filter.feedback ||
    impliedLabelStatus(filter) ||
    filter.keywords.length > 0 ||
    filter.reviewStatus !== undefined ||
    filter.text !== undefined,
  );
}

/**
 * The equality terms a GIN plan can put in its `search_terms @>` condition, unscoped, in the
 * order buildFilterSql adds them: channel, language, agent, feedback, label status (explicit,
 * or `labeled` implied by a label or score filter), each labels.all token.
 */
export function indexEqualityTerms(filter: ConversationFilter): string[] {
  const status = impliedLabelStatus(filter);
  return [
    ...(filter.channel ? [`channel:${filter.channel}`] : []),
    ...(filter.language ? [`language:${filter.language}`] : []),
    ...(filter.agentId ? [`agent:${filter.agentId}`] : []),
    ...(filter.feedback ? [`feedback:${filter.feedback}`] : []),
    ...(status ? [`status:${status}`] : []),
    ...filter.labelsAll,
  ];
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
  const rows: string[] = [];
  const status = impliedLabelStatus(filter);
  // A GIN plan checks the site on the candidate rows, never through the creation-time btree:
  // ANDing the GIN bitmap with the site's (a million entries in a large site) took 1.1-1.4 s
  // for a common keyword or term. When the GIN condition holds a site-scoped term (every
  // equality filter, label and keyword is one: `<site_id>|…`), its matches are the site's and no
  // site check is left, so a count can skip the heap (all-visible pages). Otherwise `IS TRUE`
  // (site_id is never null: the same condition) keeps the btree out. A narrow score band keeps
  // the site indexable: the score's own btree (site_id, score_x) joins the bitmap on it.
  const narrowBand = hasNarrowScoreBand(filter);
  const scopedTerms =
    index &&
    !narrowBand &&
    (status !== undefined ||
      filter.channel !== undefined ||
      filter.language !== undefined ||
      filter.agentId !== undefined ||
      filter.feedback !== undefined ||
      filter.labelsAll.length > 0 ||
      filter.labelsAny.length > 0 ||
      filter.keywords.length > 0);
  const range: string[] = [];
  if (!scopedTerms) {
    const site = params.add(siteId);
    range.push(index && !narrowBand ? `(site_id = ${site}) IS TRUE` : `site_id = ${site}`);
  }
  if (filter.from !== undefined) range.push(`created_at >= ${params.add(filter.from, '::timestamptz')}`);
  if (filter.to !== undefined) range.push(`created_at < ${params.add(filter.to, '::timestamptz')}`);
  if (after)
    range.push(
      `(created_at, id COLLATE "C") < (${params.add(after.createdAt, '::timestamptz')}, ${params.add(after.id)})`,
    );
  const rangeParams = params.values.length;

  if (index) {
    // Terms are scoped to the site (`<site_id>|<term>`, see the SiteScopedSearchTerms migration).
    const scope = (terms: string[]) => terms.map((term) => `${siteId}|${term}`);
    // Each equality term with its exact check on the row. A dense term (a posting list of a
    // large part of the site) may cost more to merge in the GIN index than it narrows the
    // candidates: those of options.onRow are checked on the candidate rows instead.
    const equal: { term: string; row: () => string }[] = [];
    if (filter.channel) {
      const channel = filter.channel;
      equal.push({ term: `channel:${channel}`, row: () => `channel = ${params.add(channel)}` });
    }
    if (filter.language) {
      const language = filter.language;
      equal.push({ term: `language:${language}`, row: () => `language = ${params.add(language)}` });
    }
    if (filter.agentId) {
      const agentId = filter.agentId;
      equal.push({ term: `agent:${agentId}`, row: () => `agent_id = ${params.add(agentId)}` });
    }
    if (filter.feedback)
      equal.push({
        term: `feedback:${filter.feedback}`,
        row: () => (filter.feedback === 'positive' ? 'feedback_positive > 0' : 'feedback_negative > 0'),
      });
    if (status) equal.push({ term: `status:${status}`, row: () => `label_status = ${params.add(status)}` });
    for (const token of filter.labelsAll)
      equal.push({ term: token, row: () => `label_tokens @> ${params.add([token], '::text[]')}` });
    const kept = equal.filter((e) => !options.onRow?.has(e.term));
    const otherIndexed =
      filter.labelsAny.length > 0 || filter.keywords.length > 0 || hasNarrowScoreBand(filter);
    // The GIN condition must keep at least one term (the chooser keeps one; a fallback).
    if (kept.length === 0 && equal.length > 0 && !otherIndexed) kept.push(equal[0]);
    if (kept.length) rows.push(`search_terms @> ${params.add(scope(kept.map((e) => e.term)), '::text[]')}`);
    for (const e of equal) if (!kept.includes(e)) rows.push(e.row());
    for (const group of filter.labelsAny)
      rows.push(`search_terms && ${params.add(scope(group), '::text[]')}`);
    for (const name of SCORE_NAMES) {
      const bounds = filter.scores[name];
      if (!bounds) continue;
      // Candidate narrowing through the index: the score's bucket floor(score * 20) is stored as
      // a term; floor is monotonic, so every score within the bounds lies in buckets low..high.
      const low = Math.floor((bounds.min ?? 0) * 20);
      const high = Math.floor((bounds.max ?? 1) * 20);
      if (high >= low && high - low + 1 <= MAX_SCORE_BUCKETS) {
        const buckets = Array.from({ length: high - low + 1 }, (_, i) => `${BUCKET_PREFIX[name]}:${low + i}`);
        rows.push(`search_terms && ${params.add(scope(buckets), '::text[]')}`);
      }
    }
    if (filter.labelsNone.length)
      rows.push(`NOT (label_tokens && ${params.add(filter.labelsNone, '::text[]')})`);
  } else {
    if (filter.channel) rows.push(`channel = ${params.add(filter.channel)}`);
    if (filter.language) rows.push(`language = ${params.add(filter.language)}`);
    if (filter.agentId) rows.push(`agent_id = ${params.add(filter.agentId)}`);
    if (filter.feedback)
      rows.push(filter.feedback === 'positive' ? 'feedback_positive > 0' : 'feedback_negative > 0');
    if (status) rows.push(`label_status = ${params.add(status)}`);
    rows.push(...labelBitsConditions(filter, params));
  }

  for (const name of SCORE_NAMES) {
    const bounds = filter.scores[name];
    if (!bounds) continue;
    const column = SCORE_COLUMN[name];
    // Filter rule 6: comparisons with a missing score (NULL) are never true.
    if (bounds.min !== undefined) rows.push(`${column} >= ${params.add(bounds.min, '::float8')}`);
    if (bounds.max !== undefined) rows.push(`${column} <= ${params.add(bounds.max, '::float8')}`);
    if (bounds.min !== undefined && bounds.max !== undefined && bounds.min > bounds.max) rows.push('false');
  }

  if (filter.keywords.length) {
    const query = () =>
      filter.keywords.map((k) => `phraseto_tsquery('simple'::regconfig, ${params.add(k)})`).join(' && ');
    if (index) {
      // The keywords' site-scoped title terms (SiteScopedTitleTerms migration), in the GIN index
      // beside search_terms; the functions run once, at planning (immutable, constant arguments).
      // Terms match exactly a keyword of one word or of two adjacent ones: then the recheck folds
      // to `true` at planning and no tsvector is read; longer phrases keep it (pairs in any order).
      const site = params.add(siteId);
      const keywords = params.add(filter.keywords, '::text[]');
      rows.push(
        `conversation_title_terms(site_id, title) @> conversation_keyword_terms(${site}, ${keywords})`,
        `(conversation_keywords_exact(${keywords}) OR title_tsv @@ (${query()}))`,
      );
    } else rows.push(`title_tsv @@ (${query()})`);
  }

  if (filter.reviewStatus) rows.push(reviewStatusSql(filter.reviewStatus));

  // Transcript search (`q`): the conversation's transcript row, probed by primary key
  // (text-query-sql.ts). Its own plans (the GIN index over the transcripts) are the listing's.
  if (filter.text) rows.push(transcriptExistsSql(filter.text, params));

  return {
    params,
    rangeParams,
    narrowed: isNarrowed(filter),
    needsHeap: filter.keywords.length > 0 || filter.reviewStatus !== undefined,
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
  // The postings carry the covering index's columns, not review_state: reviewStatus is probed
  // on the conversation by primary key (its implied label status stays on the posting).
  const onPostings: ConversationFilter = { ...filter, keywords: [], reviewStatus: undefined };
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
