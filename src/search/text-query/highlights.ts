import type { LexemeLookup } from './lexeme-lookup';
import { TEXT_LANGUAGES, TextLanguage, TextQuery, TextTerm, termWords } from './text-query';

/** Entries of `highlights` per list item, at most. */
export const MAX_HIGHLIGHTS = 3;
/** Code points of an excerpt, at most. */
export const EXCERPT_LENGTH = 240;
/** Code points of context kept before the first match of a long text, at most. */
const LEAD = 60;
/** What of a message is searched (as the transcript's document: transcript_message_text). */
const MESSAGE_TEXT_LIMIT = 200_000;

export type MessageRole = 'shopper' | 'agent' | 'system';

/** The stored texts of one conversation: its title and its messages, oldest first. */
export interface TranscriptTexts {
  conversationId: string;
  language: string;
  title: string;
  messages: Array<{ id: string; role: MessageRole; blocks: unknown }>;
}

/** One entry of a list item's `highlights` (workflows-v1 §1). */
export interface Highlight {
  /** null for the title. */
  messageId: string | null;
  role: MessageRole | null;
  /** At most EXCERPT_LENGTH code points of the text, as stored (plain text). */
  text: string;
  /** [start, end) code-point offsets into `text` of the words that matched, in order. */
  matches: Array<[number, number]>;
}

/** A word of a text, with its code-point offsets. */
interface Word {
  key: string;
  start: number;
  end: number;
}

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const HAS_LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const SURROGATE = /[\uD800-\uDFFF]/;

/** The words of `text` (the same words as q's: letters, digits and marks), with code-point offsets. */
export function wordsWithOffsets(text: string): Word[] {
  const words: Word[] = [];
  // Without surrogates every UTF-16 unit is one code point: no counting needed.
  const count = SURROGATE.test(text) ? codePointsBetween : (_: string, from: number, to: number) => to - from;
  let unit = 0;
  let point = 0;
  for (const m of text.matchAll(WORD)) {
    point += count(text, unit, m.index);
    const length = count(text, m.index, m.index + m[0].length);
    if (HAS_LETTER_OR_DIGIT.test(m[0]))
      words.push({ key: m[0].toLowerCase(), start: point, end: point + length });
    point += length;
    unit = m.index + m[0].length;
  }
  return words;
}

function codePointsBetween(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point; a lone surrogate is one too.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < to) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** The searched text of a message: its text blocks' text and product cards' names, one per line. */
export function messageText(blocks: unknown): string {
  if (!Array.isArray(blocks)) return '';
  const parts: string[] = [];
  for (const b of blocks as Array<Record<string, unknown>>) {
    if (b?.type === 'text' && typeof b.text === 'string') parts.push(b.text);
    if (b?.type === 'product_cards' && Array.isArray(b.products))
      for (const p of b.products as Array<Record<string, unknown>>)
        if (typeof p?.name === 'string') parts.push(p.name);
  }
  const text = parts.join('\n');
  // A text of at most the limit in UTF-16 units holds at most as many code points.
  return text.length <= MESSAGE_TEXT_LIMIT ? text : [...text].slice(0, MESSAGE_TEXT_LIMIT).join('');
}

interface ScopedText {
  messageId: string | null;
  role: MessageRole | null;
  text: string;
  words: Word[];
}

/** The texts `q.in` searches, title first, then messages in the order given (oldest first). */
function textsInScope(c: TranscriptTexts, scope: TextQuery['scope']): ScopedText[] {
  const texts: ScopedText[] = [];
  if (scope === 'all') texts.push({ messageId: null, role: null, text: c.title, words: [] });
  for (const m of c.messages)
    if (scope === 'all' || m.role === scope)
      texts.push({ messageId: m.id, role: m.role, text: messageText(m.blocks), words: [] });
  for (const t of texts) t.words = wordsWithOffsets(t.text);
  return texts;
}

const ANY_INITIAL = '*';

/**
 * The first letter of a word as its stem keeps it: the configurations fold case and accents and
 * the Snowball stemmers only rewrite a word's ending, so two words whose first letters (case and
 * marks folded) are different ASCII letters or digits never share a stem. A word starting with
 * anything else (a ligature, a letter unaccent rewrites, another script) may: ANY_INITIAL.
 */
export function initialOf(word: string): string {
  // Most words start with an ASCII letter or digit, which no folding changes but case.
  const code = word.charCodeAt(0);
  if ((code >= 0x30 && code <= 0x39) || (code >= 0x61 && code <= 0x7a)) return word.charAt(0);
  if (code >= 0x41 && code <= 0x5a) return word.charAt(0).toLowerCase();
  const first = word
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .charAt(0)
    .toLowerCase();
  return /^[a-z0-9]$/.test(first) ? first : ANY_INITIAL;
}

const isTextLanguage = (l: string): l is TextLanguage => (TEXT_LANGUAGES as readonly string[]).includes(l);

/**
 * The `highlights` of each conversation of a page (workflows-v1 §1), by conversation id: one
 * function over the stored text for both engines. Each text inside `q.in` is split into words;
 * a word matches a query word when the conversation language's configuration gives both the
 * same lexemes (`lexemes`: one lookup per language of the page); a phrase matches on consecutive
 * words of one text. Words inside an occurrence of an excluded term are never marked. At most
 * MAX_HIGHLIGHTS texts with a match, the title first, each excerpted around its first matches.
 */
export async function highlightsOf(
  conversations: TranscriptTexts[],
  query: TextQuery,
  lexemes: LexemeLookup,
): Promise<Map<string, Highlight[]>> {
  const texts = new Map(conversations.map((c) => [c.conversationId, textsInScope(c, query.scope)]));
  const queryKeys = [...query.all.flat(), ...query.none].flatMap((t) =>
    termWords(t).map((w) => w.toLowerCase()),
  );
  // Only words that can share a stem with a query word are looked up (most of a page's words
  // cannot): see initialOf.
  const initials = new Set(queryKeys.map(initialOf));
  const candidate = (key: string) => {
    const initial = initialOf(key);
    return initial === ANY_INITIAL || initials.has(initial) || initials.has(ANY_INITIAL);
  };
  const wanted = new Map<TextLanguage, Set<string>>();
  for (const c of conversations) {
    if (!isTextLanguage(c.language)) continue;
    const set = wanted.get(c.language) ?? new Set(queryKeys);
    for (const t of texts.get(c.conversationId)!)
      for (const w of t.words) if (candidate(w.key)) set.add(w.key);
    wanted.set(c.language, set);
  }
  const stems = new Map(
    await Promise.all(
      [...wanted].map(async ([language, words]) => {
        const found = await lexemes(language, [...words]);
        const byWord = new Map<string, string>();
        for (const [word, l] of found) if (l.length) byWord.set(word, [...l].sort().join(' '));
        return [language, byWord] as const;
      }),
    ),
  );

  const out = new Map<string, Highlight[]>();
  for (const c of conversations) {
    const byWord = isTextLanguage(c.language) ? stems.get(c.language) : undefined;
    const entries: Highlight[] = [];
    if (byWord) {
      const stemmed = (t: TextTerm) => termWords(t).map((w) => byWord.get(w.toLowerCase()));
      const positive = query.all.flat().map(stemmed);
      const excluded = query.none.map(stemmed);
      for (const t of texts.get(c.conversationId)!) {
        if (entries.length === MAX_HIGHLIGHTS) break;
        const stemsOfText = t.words.map((w) => byWord.get(w.key));
        const marked = occurrences(stemsOfText, positive);
        for (const i of occurrences(stemsOfText, excluded)) marked.delete(i);
        if (marked.size === 0) continue;
        const matches = [...marked]
          .sort((a, b) => a - b)
          .map((i) => [t.words[i].start, t.words[i].end] as const);
        entries.push({ messageId: t.messageId, role: t.role, ...excerpt(t.text, t.words, matches) });
      }
    }
    out.set(c.conversationId, entries);
  }
  return out;
}

/** Indexes of the words of `text` inside an occurrence of any of `terms` (stems; undefined never matches). */
function occurrences(text: Array<string | undefined>, terms: Array<Array<string | undefined>>): Set<number> {
  const found = new Set<number>();
  for (const term of terms) {
    if (term.some((s) => s === undefined)) continue;
    for (let i = 0; i + term.length <= text.length; i++) {
      let k = 0;
      while (k < term.length && text[i + k] === term[k]) k++;
      if (k === term.length) for (let j = 0; j < k; j++) found.add(i + j);
    }
  }
  return found;
}

/**
 * At most EXCERPT_LENGTH code points of `text` around its first matches: the whole text when
 * short enough; otherwise from a word start up to LEAD code points before the first match, to the
 * end of the last whole word that fits (a word longer than the excerpt is cut). Matches are
 * offsets into the excerpt, clipped to it.
 */
export function excerpt(
  text: string,
  words: Word[],
  matches: ReadonlyArray<readonly [number, number]>,
): { text: string; matches: Array<[number, number]> } {
  const points = [...text];
  if (points.length <= EXCERPT_LENGTH) return { text, matches: matches.map(([s, e]) => [s, e]) };
  const first = matches[0][0];
  const wordStartFrom = (from: number) => words.find((w) => w.start >= from)?.start ?? first;
  let start = wordStartFrom(Math.max(0, first - LEAD));
  let end = Math.min(points.length, start + EXCERPT_LENGTH);
  if (end === points.length) {
    start = Math.min(start, wordStartFrom(points.length - EXCERPT_LENGTH));
  } else {
    // Back to the end of the last word that fits, unless that would drop the first match.
    let fit = -1;
    for (const w of words) if (w.end <= end && w.end > fit) fit = w.end;
    if (fit >= Math.min(end, matches[0][1])) end = fit;
  }
  const kept = matches
    .filter(([s]) => s >= start && s < end)
    .map(([s, e]) => [s - start, Math.min(e, end) - start] as [number, number]);
  return { text: points.slice(start, end).join(''), matches: kept };
}
