import type { TextQuery, TextScope, TextTerm } from '../../src/search/text-query/text-query';

/** A word of a parsed `q`. */
export const word = (w: string): TextTerm => ({ kind: 'word', word: w });

/** A quoted phrase of a parsed `q`. */
export const phrase = (...words: string[]): TextTerm => ({ kind: 'phrase', words });

/** A parsed `q`: groups of alternatives that must all match, excluded terms, the roles searched. */
export const textQuery = (all: TextTerm[][], none: TextTerm[] = [], scope: TextScope = 'all'): TextQuery => ({
  all,
  none,
  scope,
});
