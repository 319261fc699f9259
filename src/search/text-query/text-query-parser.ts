import { TextQuery, TextScope, TextTerm, termWords } from './text-query';

/** `q` is 1 to this many characters (code points). */
export const MAX_TEXT_QUERY_LENGTH = 500;
/** Words, phrases and exclusions of a `q`, together (`OR` does not count). */
export const MAX_TEXT_TERMS = 32;

/** A `q` that parses to no query: the detail of the 400 invalid_filter naming `q`. */
export interface TextQueryFault {
  fault: string;
}

/**
 * A word: a run of letters, digits and combining marks holding at least one letter or digit.
 * Every other character (punctuation, symbols, emoji, a lone surrogate, a control character)
 * separates words: `e-mail` is the two words `e` and `mail`.
 */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const HAS_LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const SPACE = /\s/u;

/** The words of a piece of `q`, in order. */
export function wordsOf(text: string): string[] {
  return (text.match(WORD) ?? []).filter((w) => HAS_LETTER_OR_DIGIT.test(w));
}

/** A term of one or several words: a one-word phrase is a word. */
function termOf(words: string[]): TextTerm | undefined {
  if (words.length === 0) return undefined;
  return words.length === 1 ? { kind: 'word', word: words[0] } : { kind: 'phrase', words };
}

type Item = { kind: 'term'; term: TextTerm; excluded: boolean } | { kind: 'or' };

/**
 * Reads `q` into terms and `OR`s, left to right:
 * - spaces separate; `"` opens a phrase anywhere, which runs to the next `"` (or to the end);
 * - `-` at the start of a space-separated piece excludes what follows it: a quoted phrase
 *   (`-"a b"`) or the rest of the piece up to a space or `"` (`-late`; `-e-mail` excludes the
 *   phrase "e mail", as written, not every conversation with an "e");
 * - a piece that is exactly `OR` (capitals) is the operator; `or`, `Or` and `"OR"` are words;
 * - any other piece gives its words, each a term of its own (`e-mail` = `e` and `mail`).
 * Pieces without a word (a lone `-`, `""`, punctuation) give nothing.
 */
function readItems(q: string): Item[] {
  const items: Item[] = [];
  const chars = [...q];
  let i = 0;
  const push = (words: string[], excluded: boolean) => {
    const term = termOf(words);
    if (term) items.push({ kind: 'term', term, excluded });
  };
  /** The phrase opened at chars[i] === '"': its words, and the index after its closing quote. */
  const phrase = () => {
    const end = chars.indexOf('"', i + 1);
    const stop = end === -1 ? chars.length : end;
    const words = wordsOf(chars.slice(i + 1, stop).join(''));
    i = stop + 1;
    return words;
  };
  while (i < chars.length) {
    const c = chars[i];
    if (SPACE.test(c)) {
      i++;
    } else if (c === '"') {
      push(phrase(), false);
    } else if (c === '-' && (i === 0 || SPACE.test(chars[i - 1]))) {
      i++;
      if (chars[i] === '"') {
        push(phrase(), true);
      } else {
        const start = i;
        while (i < chars.length && !SPACE.test(chars[i]) && chars[i] !== '"') i++;
        push(wordsOf(chars.slice(start, i).join('')), true);
      }
    } else {
      const start = i;
      while (i < chars.length && !SPACE.test(chars[i]) && chars[i] !== '"') i++;
      const piece = chars.slice(start, i).join('');
      if (piece === 'OR' && (i === chars.length || SPACE.test(chars[i]))) items.push({ kind: 'or' });
      else for (const w of wordsOf(piece)) push([w], false);
    }
  }
  return items;
}

/**
 * Parses `q` (workflows-v1 §1) into the query both engines render, with `scope` from `q.in`.
 * Never throws: any text gives a query or a fault.
 * - Words separated by spaces are all required; `OR` binds tighter than that implicit AND
 *   (`refund late OR delayed` = refund AND (late OR delayed)); chains group (`a OR b OR c`).
 * - `OR` joins the positive terms right beside it only: at the start or the end of `q`, beside
 *   another `OR` (`a OR OR b` = `a OR b`) or beside an exclusion (`a OR -b` = a AND NOT b) it joins
 *   nothing and is dropped. `OR` alone is thus no positive term (quote it, `"OR"`, to search it).
 * - Repeated terms, groups and exclusions count towards the limit as written, then are kept once.
 * Faults: no positive term, or more than MAX_TEXT_TERMS terms.
 */
export function parseTextQuery(q: string, scope: TextScope = 'all'): TextQuery | TextQueryFault {
  const items = readItems(q);
  const terms = items.filter((it) => it.kind === 'term').length;
  if (terms > MAX_TEXT_TERMS)
    return {
      fault: `q has ${terms} terms; at most ${MAX_TEXT_TERMS} words, phrases and exclusions are allowed (OR does not count).`,
    };
  const all: TextTerm[][] = [];
  const none: TextTerm[] = [];
  for (let k = 0; k < items.length; k++) {
    const it = items[k];
    if (it.kind !== 'term') continue;
    if (it.excluded) {
      none.push(it.term);
      continue;
    }
    // Joined to the clause before when one or more ORs stand between it and a positive term.
    let j = k - 1;
    while (j >= 0 && items[j].kind === 'or') j--;
    const left = items[j];
    if (j < k - 1 && left?.kind === 'term' && !left.excluded) all[all.length - 1].push(it.term);
    else all.push([it.term]);
  }
  if (all.length === 0)
    return {
      fault:
        none.length > 0
          ? 'q has only exclusions; give at least one word or phrase to find.'
          : 'q has no word to search (letters or digits); OR alone is an operator, quote it ("OR") to search the word.',
    };
  return { all: dedupeClauses(all.map(dedupeTerms)), none: dedupeTerms(none), scope };
}

export function isTextQueryFault(v: TextQuery | TextQueryFault): v is TextQueryFault {
  return 'fault' in v;
}

const termKey = (t: TextTerm) => `${t.kind}:${JSON.stringify(termWords(t).map((w) => w.toLowerCase()))}`;

function dedupeTerms(terms: TextTerm[]): TextTerm[] {
  const seen = new Set<string>();
  return terms.filter((t) => !seen.has(termKey(t)) && !!seen.add(termKey(t)));
}

function dedupeClauses(clauses: TextTerm[][]): TextTerm[][] {
  const seen = new Set<string>();
  return clauses.filter((c) => {
    const key = c.map(termKey).sort().join('|');
    return !seen.has(key) && !!seen.add(key);
  });
}

/**
 * The query's canonical text for cursor binding: equal for queries that match the same
 * conversations by construction (case, order of clauses, of a clause's terms and of exclusions,
 * repeats), different otherwise. Engines fold case, so words compare lowercased.
 */
export function canonicalTextQuery(query: TextQuery): string {
  const clauses = query.all.map((c) => [...new Set(c.map(termKey))].sort().join('|'));
  const none = [...new Set(query.none.map(termKey))].sort();
  return JSON.stringify({ all: [...new Set(clauses)].sort(), none, scope: query.scope });
}
