/**
 * The transcript search query (`q`, workflows-v1 §1), parsed once into this form; each search
 * engine renders it (Postgres: a tsquery per conversation language; OpenSearch: a bool query over
 * the per-language transcript fields). Words are kept as sent (letters and digits only, never
 * empty): each engine folds case and accents and stems them in the conversation's language.
 */

/** Which texts `q` searches (`q.in`): the title and every message, or one role's messages. */
export const TEXT_SCOPES = ['all', 'shopper', 'agent'] as const;
export type TextScope = (typeof TEXT_SCOPES)[number];

/** One word, or a phrase: its words in this order, next to each other, inside one text. */
export type TextTerm = { kind: 'word'; word: string } | { kind: 'phrase'; words: string[] };

export interface TextQuery {
  /**
   * Every clause must match; a clause matches when at least one of its terms does (`OR` binds
   * tighter than the implicit AND). Never empty: a query has at least one positive term.
   */
  all: TextTerm[][];
  /** Conversations containing any of these are excluded (`-word`, `-"a phrase"`). */
  none: TextTerm[];
  /** `q.in`: `all` (default) searches the title and every message. */
  scope: TextScope;
}

/** The languages with a text search configuration (the conversation's `language`). */
export const TEXT_LANGUAGES = ['fr', 'en', 'de', 'it', 'es', 'nl'] as const;
export type TextLanguage = (typeof TEXT_LANGUAGES)[number];

/**
 * Postgres text search configuration of a language: unaccent, then the language's Snowball
 * stemmer, no stop words (created by migration).
 */
export const textSearchConfig = (language: TextLanguage): string => `transcript_${language}`;

/** Every word of a term, in order. */
export const termWords = (term: TextTerm): string[] => (term.kind === 'word' ? [term.word] : term.words);
