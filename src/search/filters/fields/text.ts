import { ParamFault, params } from '../../../common/query/query-params';
import { transcriptExistsSql } from '../../filter-sql/text-query-sql';
import { transcriptClauses } from '../../opensearch/transcript-query';
import { TEXT_SCOPES, TextQuery, TextScope, TextTerm } from '../../text-query/text-query';
import {
  canonicalTextQuery,
  isTextQueryFault,
  MAX_TEXT_QUERY_LENGTH,
  MAX_TEXT_TERMS,
  parseTextQuery,
} from '../../text-query/text-query-parser';
import { codePoints, defineField } from '../filter-field';

/*
 * Transcript search (`q` with its `q.in`, workflows-v1 §1): the title and the messages' text,
 * stemmed in the conversation's language. One field of two parameters: `q.in` says which texts
 * `q` searches. On Postgres a probe of the conversation's transcript row (text-query-sql.ts);
 * its own plans are the listing's (the transcript planner).
 */

/** `q` as sent, 1 to 500 code points; its grammar is checked with `q.in` (read). */
function textQuery(value: string): string | ParamFault {
  const n = codePoints(value);
  return n >= 1 && n <= MAX_TEXT_QUERY_LENGTH
    ? value
    : new ParamFault(`must be 1 to ${MAX_TEXT_QUERY_LENGTH} characters (code points); it has ${n}.`);
}

/** A term as `q` writes it: a word as is (`OR` quoted, or it would be the operator), a phrase quoted. */
function termText(term: TextTerm): string {
  if (term.kind === 'phrase') return `"${term.words.join(' ')}"`;
  return term.word === 'OR' ? '"OR"' : term.word;
}

/**
 * `q` text that parses back to this query (workflows-v1 §1 grammar): clauses separated by spaces,
 * the terms of a clause joined by `OR`, exclusions after them with `-`.
 */
export function textQueryText(query: TextQuery): string {
  const clauses = query.all.map((clause) => clause.map(termText).join(' OR '));
  const exclusions = query.none.map((term) => `-${term.kind === 'phrase' ? termText(term) : term.word}`);
  return [...clauses, ...exclusions].join(' ');
}

export const textField = defineField({
  key: 'text',
  example: { q: 'refund late OR delayed -"gift card"', 'q.in': 'shopper' },
  params: {
    q: {
      parse: textQuery,
      json: 'string',
      doc: {
        description: [
          "Transcript search: the title, every message's text blocks and product card names, matched case- and accent-insensitively and with the inflected forms of each word in the conversation's own language (Snowball stemming of fr, en, de, it, es, nl; no stop words).",
          'Words separated by spaces must all appear; `"two words"` is a phrase (in this order, next to each other, inside one message or the title; an unmatched `"` closes at the end); `-word` and `-"a phrase"` exclude; `OR` in capitals, on its own between two terms, matches either and binds tighter than the implicit AND (`refund late OR delayed` = refund AND (late OR delayed)); any other punctuation separates words (`e-mail` is `e` and `mail`).',
          `${MAX_TEXT_QUERY_LENGTH} characters at most (code points), else 400 invalid_request. No positive term (only exclusions, or no word at all), or more than ${MAX_TEXT_TERMS} words, phrases and exclusions, is 400 invalid_filter. Part of the cursor: a cursor used with another q is 400 cursor_mismatch.`,
        ].join(' '),
        schema: {
          type: 'string',
          minLength: 1,
          maxLength: MAX_TEXT_QUERY_LENGTH,
          example: 'refund late OR delayed -"gift card"',
        },
      },
    },
    'q.in': {
      ...params.oneOf(TEXT_SCOPES),
      json: 'string',
      doc: {
        description:
          'Which texts q searches: all (the title and every message), shopper (messages of role shopper only), agent (messages of role agent only). Without q: 400 invalid_filter.',
        schema: { type: 'string', enum: [...TEXT_SCOPES], default: 'all' },
      },
    },
  },
  read(v, ctx) {
    if (v.q !== undefined) {
      const parsed = parseTextQuery(v.q as string, (v['q.in'] as TextScope | undefined) ?? 'all');
      if (!isTextQueryFault(parsed)) return parsed;
      ctx.filterFaults.push({ code: 'invalid_filter', detail: parsed.fault, parameter: 'q' });
    } else if (ctx.given('q.in') && !ctx.given('q')) {
      ctx.filterFaults.push({
        code: 'invalid_filter',
        detail: 'q.in says which texts q searches; it needs q alongside.',
        parameter: 'q.in',
      });
    }
    return undefined;
  },
  isSet: (f) => f.text !== undefined,
  // `q` compares as canonicalTextQuery spells it, with its `q.in`.
  canonical: (f) => (f.text ? canonicalTextQuery(f.text) : undefined),
  publicForm: (f) =>
    f.text ? { q: textQueryText(f.text), ...(f.text.scope !== 'all' ? { 'q.in': f.text.scope } : {}) } : {},
  combine: {
    conflicts: (view, own) => (view.text !== undefined && own.text !== undefined ? ['q'] : []),
    merge: (view, own) => own.text ?? view.text,
  },
  answeredBy: {},
  sql: { rows: (f, p) => (f.text ? [transcriptExistsSql(f.text, p)] : []) },
  openSearch: (f) => {
    if (!f.text) return { filter: [], mustNot: [] };
    const text = transcriptClauses(f.text, f.language);
    return { filter: text.filter, mustNot: text.mustNot };
  },
});
