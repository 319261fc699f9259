import type { SqlParams } from '../../database/sql-statement';
import { TEXT_LANGUAGES, textSearchConfig, TextQuery, TextScope, TextTerm } from '../text-query/text-query';

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
 * immutable with constant arguments: Postgres stems each query once, at planning.
 */
export function transcriptMatchSql(text: TextQuery, params: SqlParams, alias = 't'): string {
  const query = params.add(tsqueryText(text));
  return `(${TEXT_LANGUAGES.map(
    (lang) =>
      `(${alias}.language = '${lang}' AND ${alias}.document @@ to_tsquery('${textSearchConfig(lang)}'::regconfig, ${query}))`,
  ).join(' OR ')})`;
}

/**
 * The condition that the conversation of the row being filtered (its `id`, unqualified: the
 * transcripts table has no `id` column, so it names the outer row whatever its alias) has a
 * transcript matching the query: one primary-key probe of the transcripts per row.
 */
export function transcriptExistsSql(text: TextQuery, params: SqlParams): string {
  return `EXISTS (SELECT 1 FROM conversation_transcripts t WHERE t.conversation_id = id AND ${transcriptMatchSql(text, params)})`;
}
