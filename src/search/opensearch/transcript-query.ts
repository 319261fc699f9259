import { TEXT_LANGUAGES, TextLanguage, TextQuery, TextScope, TextTerm } from '../text-query/text-query';
import { transcriptAnalyzer, transcriptField, TranscriptPart } from './transcript-fields';

/** The transcript fields each scope (`q.in`) searches. */
const SCOPE_PARTS: Record<TextScope, readonly TranscriptPart[]> = {
  all: ['title', 'shopper', 'agent', 'system'],
  shopper: ['shopper'],
  agent: ['agent'],
};

/**
 * The queries matching one term in any of the fields in scope of `languages` (a conversation's
 * transcript is only in its language's fields, so the term is analysed and stemmed as that
 * language): `match` with operator `and` for a word (all of its tokens, should the standard
 * tokenizer split it), `match_phrase` with slop 0 for a phrase (its words next to each other in
 * one message: messages are MESSAGE_POSITION_GAP positions apart). The analyzer is named, so an
 * index without the transcript fields (mapping version 1) fails the search instead of matching
 * nothing.
 */
function termQueries(term: TextTerm, scope: TextScope, languages: readonly TextLanguage[]): object[] {
  const out: object[] = [];
  for (const language of languages) {
    const analyzer = transcriptAnalyzer(language);
    for (const part of SCOPE_PARTS[scope]) {
      const field = `${transcriptField(language)}.${part}`;
      out.push(
        term.kind === 'word'
          ? { match: { [field]: { query: term.word, operator: 'and', analyzer } } }
          : { match_phrase: { [field]: { query: term.words.join(' '), slop: 0, analyzer } } },
      );
    }
  }
  return out;
}

/**
 * The clauses of a transcript query (`q`), for a filter-context bool: one `filter` entry per
 * clause of `all` (a bool should of its terms' queries, at least one matching), and every query
 * of an excluded term in `must_not`. `language` (the listing's language filter, when given)
 * narrows the fields searched to that language's: the others hold no conversation it keeps.
 */
export function transcriptClauses(
  text: TextQuery,
  language?: TextLanguage,
): { filter: object[]; mustNot: object[] } {
  const languages = language ? [language] : TEXT_LANGUAGES;
  const filter = text.all.map((clause) => ({
    bool: {
      should: clause.flatMap((term) => termQueries(term, text.scope, languages)),
      minimum_should_match: 1,
    },
  }));
  const mustNot = text.none.flatMap((term) => termQueries(term, text.scope, languages));
  return { filter, mustNot };
}
