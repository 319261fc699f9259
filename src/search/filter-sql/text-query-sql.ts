import type { SqlParams } from '../../database/sql-statement';
import {
  TEXT_LANGUAGES,
  TextLanguage,
  textSearchConfig,
  TextQuery,
  TextScope,
  TextTerm,
} from '../text-query/text-query';

/*
 * Transcript search (`q`, workflows-v1 §1) in SQL: the parsed TextQuery as one `to_tsquery` text,
 * matched against `conversation_transcripts.document` (migration TranscriptSearch) under the
 * configuration of the conversation's language (unaccent + the language's Snowball stemmer, no
 * stop words), so each word matches its inflected forms in that language.
 */

/** The weight `q.in` restricts every word to: the title is A, shopper B, agent C, system D. */
const SCOPE_WEIGHT: Record<TextScope, string> = { all: '', shopper: ':B', agent: ':C' };

/** A term in tsquery syntax: a word, or a phrase as its words joined by `<->` (adjacent, in order). */
function termText(term: TextTerm, weight: string): string {
  if (term.kind === 'word') return `${term.word}${weight}`;
  const words = term.words.map((w) => `${w}${weight}`);
  return words.length === 1 ? words[0] : `(${words.join(' <-> ')})`;
}

/**
 * The tsquery text of a query: each clause's terms ORed, the clauses ANDed, each exclusion
 * negated; `q.in` as a weight restriction on every word. Words hold only letters, digits and
 * combining marks (the parser of q keeps nothing else), so they cannot spell an operator; the
 * text is still bound as a parameter, never put into the statement.
 */
export function tsqueryText(text: TextQuery): string {
  const weight = SCOPE_WEIGHT[text.scope];
  const clauses = text.all.map((clause) => {
    const terms = clause.map((term) => termText(term, weight));
    return terms.length === 1 ? terms[0] : `(${terms.join(' | ')})`;
  });
  const exclusions = text.none.map((term) => `!${termText(term, weight)}`);
  return [...clauses, ...exclusions].join(' & ');
}

/**
 * The condition that the transcript row `alias` (conversation_transcripts) matches the query in
 * its conversation's language: one `document @@ to_tsquery('transcript_<lang>', $n)` per
 * language, each guarded by the row's language, all on the same bound text. The function is
 * immutable with constant arguments: Postgres stems each query once, at planning. Every arm is
 * a condition of the GIN index over (site_id, language, document) (migration
 * TranscriptLanguageIndex): a bitmap scan tests no document again, but for the recheck GIN
 * itself asks (a phrase's adjacency, a `q.in` weight).
 *
 * When the six stemmings give the same tsquery (`de`, `colis`, most rare words and names), the
 * CASE folds at planning to that one match with no language test: a language is always one of
 * the six (the conversations' CHECK, copied to the transcripts), so it is the same condition,
 * and a bitmap scan then has nothing left to check on the row (a count skips all-visible heap
 * pages). Statements are planned with their bound values (unnamed statements), so the fold is
 * made for every query.
 */
export function transcriptMatchSql(text: TextQuery, params: SqlParams, alias = 't'): string {
  const query = params.add(tsqueryText(text));
  const tsquery = (lang: TextLanguage) => `to_tsquery('${textSearchConfig(lang)}'::regconfig, ${query})`;
  const [first, ...others] = TEXT_LANGUAGES;
  const same = others.map((lang) => `${tsquery(first)} = ${tsquery(lang)}`).join(' AND ');
  const arms = TEXT_LANGUAGES.map(
    (lang) => `(${alias}.language = '${lang}' AND ${alias}.document @@ ${tsquery(lang)})`,
  ).join(' OR ');
  return `(CASE WHEN ${same} THEN ${alias}.document @@ ${tsquery(first)} ELSE (${arms}) END)`;
}

/**
 * The condition that the conversation of the row being filtered (its `id`, unqualified: the
 * transcripts table has no `id` column, so it names the outer row whatever its alias) has a
 * transcript matching the query: one primary-key probe of the transcripts per row. The form for
 * a walk that stops at a page; what reads every match (statistics) takes transcriptSetSql.
 */
export function transcriptExistsSql(text: TextQuery, params: SqlParams): string {
  return `EXISTS (SELECT 1 FROM conversation_transcripts t WHERE t.conversation_id = id AND ${transcriptMatchSql(text, params)})`;
}

/**
 * The ids of the site's conversations whose transcript matches the query: one bitmap scan of
 * the transcripts' GIN index (its site, language and words), no document read but for GIN's
 * own recheck (transcriptMatchSql).
 */
export function transcriptIdsSql(siteId: string, text: TextQuery, params: SqlParams): string {
  return `SELECT t.conversation_id FROM conversation_transcripts t WHERE t.site_id = ${params.add(siteId)} AND ${transcriptMatchSql(text, params)}`;
}

/**
 * The condition that the row being filtered (`id`, unqualified) is among the matches of the
 * query as a set (transcriptIdsSql): the same rows as transcriptExistsSql, which Postgres joins
 * as a whole (a hash join with the conversations' covering index for many matches, a
 * primary-key probe of the conversations per match for few) instead of probing a transcript
 * per conversation.
 */
export function transcriptSetSql(siteId: string, text: TextQuery, params: SqlParams): string {
  return `id IN (${transcriptIdsSql(siteId, text, params)})`;
}

/**
 * The site's conversations whose transcript matches the query, created in `range`, as a FROM
 * clause whose rows are the conversations' own columns under the name `conversations` (the
 * conditions of the shared filter builder apply to them unchanged): the matches from one bitmap
 * scan of the transcripts' GIN index (transcriptIdsSql), sorted by creation time, each then
 * probed in the conversations' covering index by its full key (site, created_at, id COLLATE
 * "C"), index-only. The transcript carries its conversation's site and creation time (the
 * refresh copies them), so the probe finds exactly that conversation. The cost is one sorted
 * probe per match, whatever Postgres estimates the matches to be: a hash join walks the whole
 * site's covering index, a primary-key probe reads the conversation's wide heap row
 * (docs/query-engine.md, "Transcript search"). The caller runs it as a nested loop
 * (hash and merge joins off): its planner cannot tell a few matches from half the site. The
 * matches are sorted by an expression of their creation time that no index provides: with
 * sorting off (the statistics' scan settings), the transcripts' listing-order index
 * (TranscriptListingOrderIndex) would otherwise spare the sort by walking every transcript of
 * the site and testing its document (3.1 s against 0.34 for `de` on the 2 × 200,000 bench copy).
 */
export function transcriptProbesSql(
  siteId: string,
  text: TextQuery,
  params: SqlParams,
  range: { from?: string; to?: string } = {},
): string {
  const site = params.add(siteId);
  const where = [`t.site_id = ${site}`];
  if (range.from !== undefined) where.push(`t.created_at >= ${params.add(range.from, '::timestamptz')}`);
  if (range.to !== undefined) where.push(`t.created_at < ${params.add(range.to, '::timestamptz')}`);
  where.push(transcriptMatchSql(text, params));
  return `(SELECT t.conversation_id AS match_id, t.created_at AS match_at FROM conversation_transcripts t
      WHERE ${where.join(' AND ')} ORDER BY t.created_at + interval '0' DESC OFFSET 0) matches
    CROSS JOIN LATERAL (SELECT * FROM conversations c WHERE c.site_id = ${site}
      AND c.created_at = matches.match_at AND c.id COLLATE "C" = matches.match_id COLLATE "C") conversations`;
}
