import { ParamFault } from '../../../common/query/query-params';
import { codePoints, dedupe, defineField } from '../filter-field';
import { MAX_KEYWORD_LENGTH, MAX_KEYWORDS } from '../filter-values';

/*
 * `keywords`: case-insensitive whole words or phrases of the title, all of which must appear.
 * Walked, the title's tsvector is read from the heap (it is not in the covering index); in the
 * GIN form, the site-scoped title terms (SiteScopedTitleTerms migration).
 */

function keyword(value: string): string | ParamFault {
  // Characters are code points: an emoji or a CJK extension character counts once, not twice.
  if (codePoints(value) > MAX_KEYWORD_LENGTH)
    return new ParamFault(`must be at most ${MAX_KEYWORD_LENGTH} characters.`);
  const trimmed = value.trim().replace(/\s+/g, ' ');
  if (!/[\p{L}\p{N}]/u.test(trimmed)) return new ParamFault('must contain at least one word.');
  return trimmed;
}

export const keywordsField = defineField({
  key: 'keywords',
  example: { keywords: ['refund', 'late delivery'] },
  params: {
    keywords: {
      repeatable: true,
      parse: keyword,
      json: 'strings',
      doc: {
        description: `Case-insensitive whole word or phrase in the title; with several, all must appear. Up to ${MAX_KEYWORDS} occurrences of at most ${MAX_KEYWORD_LENGTH} characters each. Repeatable: give the parameter once per value.`,
        style: 'form',
        explode: true,
        schema: {
          type: 'array',
          items: { type: 'string', minLength: 1, maxLength: MAX_KEYWORD_LENGTH },
          maxItems: MAX_KEYWORDS,
        },
      },
    },
  },
  read(v, ctx) {
    const keywords = (v.keywords as string[] | undefined) ?? [];
    if (keywords.length > MAX_KEYWORDS)
      ctx.faults.push({
        code: 'too_many_values',
        detail: `keywords may be given at most ${MAX_KEYWORDS} times.`,
        parameter: 'keywords',
      });
    return dedupe(keywords);
  },
  isSet: (f) => f.keywords.length > 0,
  empty: () => [],
  // Keywords compare case-insensitively, as they match.
  canonical: (f) => f.keywords.map((k) => k.toLowerCase()),
  publicForm: (f) => (f.keywords.length ? { keywords: f.keywords } : {}),
  combine: { conflicts: () => [], merge: (view, own) => dedupe([...view.keywords, ...own.keywords]) },
  answeredBy: {},
  sql: {
    rows(f, p, { siteId, index }) {
      if (!f.keywords.length) return [];
      const query = () =>
        f.keywords.map((k) => `phraseto_tsquery('simple'::regconfig, ${p.add(k)})`).join(' && ');
      if (!index) return [`title_tsv @@ (${query()})`];
      // The keywords' site-scoped title terms (SiteScopedTitleTerms migration), in the GIN index
      // beside search_terms; the functions run once, at planning (immutable, constant arguments).
      // Terms match exactly a keyword of one word or of two adjacent ones: then the recheck folds
      // to `true` at planning and no tsvector is read; longer phrases keep it (pairs in any order).
      const site = p.add(siteId);
      const keywords = p.add(f.keywords, '::text[]');
      return [
        `conversation_title_terms(site_id, title) @> conversation_keyword_terms(${site}, ${keywords})`,
        `(conversation_keywords_exact(${keywords}) OR title_tsv @@ (${query()}))`,
      ];
    },
    siteScoped: true,
    needsHeap: true,
  },
  openSearch: (f) => ({
    filter: f.keywords.map((keyword) => ({ match_phrase: { title: { query: keyword, slop: 0 } } })),
    mustNot: [],
  }),
});
