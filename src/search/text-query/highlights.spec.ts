import { describe, expect, it } from '@jest/globals';
import {
  EXCERPT_LENGTH,
  highlightsOf,
  initialOf,
  messageText,
  TranscriptTexts,
  wordsWithOffsets,
} from './highlights';
import type { LexemeLookup } from './lexeme-lookup';
import { TextLanguage } from './text-query';
import { isTextQueryFault, parseTextQuery } from './text-query-parser';

/**
 * A stand-in for Postgres's configurations: lowercase, no accents, a trailing s dropped (every
 * language), and for French a trailing x too: enough to tell stemming apart from equality.
 */
const calls: Array<{ language: TextLanguage; words: string[] }> = [];
const fakeLexemes: LexemeLookup = async (language, words) => {
  calls.push({ language, words });
  const stem = (w: string) => {
    const folded = w.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
    return language === 'fr' ? folded.replace(/[sx]$/, '') : folded.replace(/s$/, '');
  };
  return new Map(words.map((w) => [w, [stem(w)]]));
};

const query = (q: string, scope: 'all' | 'shopper' | 'agent' = 'all') => {
  const r = parseTextQuery(q, scope);
  if (isTextQueryFault(r)) throw new Error(r.fault);
  return r;
};
const text = (t: string) => [{ type: 'text', text: t }];
function conversation(
  title: string,
  messages: Array<[string, 'shopper' | 'agent' | 'system', string]>,
  language = 'en',
): TranscriptTexts {
  return {
    conversationId: 'conv_1',
    language,
    title,
    messages: messages.map(([id, role, t]) => ({ id, role, blocks: text(t) })),
  };
}
async function highlights(c: TranscriptTexts, q: string, scope: 'all' | 'shopper' | 'agent' = 'all') {
  return (await highlightsOf([c], query(q, scope), fakeLexemes)).get(c.conversationId)!;
}
/** The code points of `text` between [start, end). */
const at = (t: string, [s, e]: [number, number]) => [...t].slice(s, e).join('');

describe('highlights (workflows-v1 §1)', () => {
  it('title first (messageId and role null), then messages oldest first, with the matched words', async () => {
    const c = conversation('Shoes refund', [
      ['msg_1', 'shopper', 'I want a refund for my shoes'],
      ['msg_2', 'agent', 'Nothing here'],
      ['msg_3', 'agent', 'The refund is on its way'],
    ]);
    expect(await highlights(c, 'refund')).toEqual([
      { messageId: null, role: null, text: 'Shoes refund', matches: [[6, 12]] },
      { messageId: 'msg_1', role: 'shopper', text: 'I want a refund for my shoes', matches: [[9, 15]] },
      { messageId: 'msg_3', role: 'agent', text: 'The refund is on its way', matches: [[4, 10]] },
    ]);
  });

  it('at most 3 entries', async () => {
    const c = conversation('refund', [
      ['m1', 'shopper', 'refund'],
      ['m2', 'shopper', 'refund'],
      ['m3', 'shopper', 'refund'],
    ]);
    expect((await highlights(c, 'refund')).map((h) => h.messageId)).toEqual([null, 'm1', 'm2']);
  });

  it('matches inflected forms through the lexemes, case- and accent-insensitively', async () => {
    const c = conversation(
      'Livraisons',
      [['m1', 'shopper', 'La LIVRAISON était prévue, les Élèves aussi']],
      'fr',
    );
    const h = await highlights(c, 'livraison eleve');
    expect(h.map((e) => e.matches.map((m) => at(e.text, m)))).toEqual([
      ['Livraisons'],
      ['LIVRAISON', 'Élèves'],
    ]);
  });

  it('asks the lexemes of the words in the conversation language, once per language of the page; never of a word that cannot share a stem with a query word', async () => {
    calls.length = 0;
    const en = conversation('shoes', []);
    const fr = { ...conversation('chaussures souliers', []), conversationId: 'conv_2', language: 'fr' };
    const de = { ...conversation('Schuhe', []), conversationId: 'conv_3', language: 'de' };
    await highlightsOf([en, fr, de], query('shoe'), fakeLexemes);
    expect(calls.map((c) => c.language).sort()).toEqual(['de', 'en', 'fr']);
    // `chaussures` starts with another letter than `shoe`: no stem of it can equal shoe's.
    expect(calls.find((c) => c.language === 'fr')!.words.sort()).toEqual(['shoe', 'souliers']);
  });

  it('a phrase matches consecutive words inside one text, never across two messages', async () => {
    const c = conversation('x', [
      ['m1', 'shopper', 'my parcel arrived late delivery'],
      ['m2', 'shopper', 'late'],
      ['m3', 'agent', 'delivery was fine'],
    ]);
    const h = await highlights(c, '"late delivery"');
    expect(h).toEqual([
      {
        messageId: 'm1',
        role: 'shopper',
        text: 'my parcel arrived late delivery',
        matches: [
          [18, 22],
          [23, 31],
        ],
      },
    ]);
  });

  it('OR: either term marks; all positive terms are marked', async () => {
    const c = conversation('x', [['m1', 'shopper', 'refund came late, then delayed again']]);
    const [h] = await highlights(c, 'refund late OR delayed');
    expect(h.matches.map((m) => at(h.text, m))).toEqual(['refund', 'late', 'delayed']);
  });

  it('never marks an excluded word, nor the words of an excluded phrase', async () => {
    const c = conversation('x', [['m1', 'shopper', 'gift card refund, not a card refund']]);
    const [h] = await highlights(c, 'refund card -"gift card"');
    expect(h.matches.map((m) => at(h.text, m))).toEqual(['refund', 'card', 'refund']);
    expect(h.matches[0]).toEqual([10, 16]);
  });

  it('only texts inside q.in: shopper or agent messages, without the title', async () => {
    const c = conversation('refund', [
      ['m1', 'shopper', 'refund please'],
      ['m2', 'agent', 'refund done'],
      ['m3', 'system', 'refund logged'],
    ]);
    expect((await highlights(c, 'refund', 'shopper')).map((h) => h.messageId)).toEqual(['m1']);
    expect((await highlights(c, 'refund', 'agent')).map((h) => h.messageId)).toEqual(['m2']);
    expect((await highlights(c, 'refund')).map((h) => h.role)).toEqual([null, 'shopper', 'agent']);
  });

  it('offsets count code points: accents, non-Latin scripts, emoji and decomposed accents', async () => {
    const t = '🛒🛒 Café 東京 e\u0301te\u0301 👍🏽 refund';
    const c = conversation('x', [['m1', 'shopper', t]]);
    const [h] = await highlights(c, 'cafe 東京 ete refund');
    expect(h.matches).toEqual([
      [3, 7],
      [8, 10],
      [11, 16],
      // 👍🏽 is two code points (the hand and its skin tone).
      [20, 26],
    ]);
    expect(h.matches.map((m) => at(h.text, m))).toEqual(['Café', '東京', 'e\u0301te\u0301', 'refund']);
  });

  it('excerpts a long text to at most 240 code points around the first match, without cutting words', async () => {
    const before = Array.from({ length: 80 }, (_, i) => `w${i}`).join(' ');
    const after = Array.from({ length: 80 }, (_, i) => `z${i}`).join(' ');
    const t = `${before} 🛒 refund ${after}`;
    const c = conversation('x', [['m1', 'shopper', t]]);
    const [h] = await highlights(c, 'refund');
    expect([...h.text].length).toBeLessThanOrEqual(EXCERPT_LENGTH);
    expect(t.includes(h.text)).toBe(true);
    expect(h.text).toMatch(/^w\d+ /);
    expect(h.text).toMatch(/ z\d+$/);
    expect(h.matches.map((m) => at(h.text, m))).toEqual(['refund']);
  });

  it('excerpts the end of a long text when the match is near its end', async () => {
    const t = `${'lorem '.repeat(100)}refund end`;
    const [h] = await highlights(conversation('x', [['m1', 'shopper', t]]), 'refund');
    expect(h.text.endsWith('refund end')).toBe(true);
    expect([...h.text].length).toBeLessThanOrEqual(EXCERPT_LENGTH);
    expect(h.matches.map((m) => at(h.text, m))).toEqual(['refund']);
  });

  it('cuts a word longer than the excerpt, clipping its match', async () => {
    const long = 'x'.repeat(500);
    const [h] = await highlights(conversation('x', [['m1', 'shopper', `a ${long} b`]]), long);
    expect([...h.text].length).toBe(EXCERPT_LENGTH);
    expect(h.matches).toEqual([[2, EXCERPT_LENGTH]]);
  });

  it('no entry for a conversation without a match, nor in a language without a configuration', async () => {
    expect(await highlights(conversation('x', [['m1', 'shopper', 'nothing']]), 'refund')).toEqual([]);
    expect(await highlights(conversation('refund', [], 'pt'), 'refund')).toEqual([]);
  });

  it('searches text blocks and product card names, one per line', () => {
    expect(
      messageText([
        { type: 'text', text: 'See these' },
        { type: 'product_cards', products: [{ name: 'Red shoe' }, { name: 'Blue shoe' }] },
        { type: 'unknown' },
      ]),
    ).toBe('See these\nRed shoe\nBlue shoe');
    expect(messageText(null)).toBe('');
  });

  it('words are letters, digits and marks; lone surrogates separate them', () => {
    expect(wordsWithOffsets('a\uD800b 🛒c-d').map((w) => [w.key, w.start, w.end])).toEqual([
      ['a', 0, 1],
      ['b', 2, 3],
      ['c', 5, 6],
      ['d', 7, 8],
    ]);
  });
});

describe('initialOf: the first letter a stem keeps', () => {
  it('folds case and accents of ASCII letters, and gives the wildcard for anything else', () => {
    expect(initialOf('Lieferung')).toBe('l');
    expect(initialOf('école')).toBe('e');
    expect(initialOf('Élan')).toBe('e');
    expect(initialOf('30')).toBe('3');
    expect(initialOf('œuvre')).toBe('*');
    expect(initialOf('ßtraße')).toBe('*');
    expect(initialOf('日本')).toBe('*');
  });
});
