import { emptyFilter, ConversationFilter, SCORE_NAMES } from '../search/listing/conversation-filter';
import { TextQuery, TextTerm } from '../search/text-query/text-query';

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

/**
 * A parsed filter in the public form of exports' `filters` (analytics-v1 §2): the listing's
 * parameter names, repeatable ones as arrays of strings (a `labels.any` group as its tokens
 * joined by `|`), score bounds as numbers, the others as strings, filters not set absent.
 * Parsing the result again gives the same filter.
 */
export function publicFilters(filter: ConversationFilter): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const set = (name: string, value: unknown) => {
    if (value === undefined || (Array.isArray(value) && value.length === 0)) return;
    out[name] = value;
  };
  set('from', filter.from);
  set('to', filter.to);
  set('channel', filter.channel);
  set('agentId', filter.agentId);
  set('language', filter.language);
  set('feedback', filter.feedback);
  set('keywords', filter.keywords);
  set('labels.all', filter.labelsAll);
  set(
    'labels.any',
    filter.labelsAny.map((group) => group.join('|')),
  );
  set('labels.none', filter.labelsNone);
  for (const name of SCORE_NAMES) {
    set(`${name}.min`, filter.scores[name]?.min);
    set(`${name}.max`, filter.scores[name]?.max);
  }
  set('labelStatus', filter.labelStatus);
  set('reviewStatus', filter.reviewStatus);
  if (filter.text) {
    set('q', textQueryText(filter.text));
    if (filter.text.scope !== 'all') set('q.in', filter.text.scope);
  }
  return out;
}

/**
 * A filter as stored (the parsed form as JSON), with the fields a later version added filled
 * with their empty value: a view or alert saved before them keeps its meaning.
 */
export function storedFilter(json: unknown): ConversationFilter {
  const stored = (typeof json === 'string' ? JSON.parse(json) : json) as Partial<ConversationFilter>;
  return { ...emptyFilter(), ...stored };
}
