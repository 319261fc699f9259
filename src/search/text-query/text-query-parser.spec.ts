import { describe, expect, it } from '@jest/globals';
import { TextQuery } from './text-query';
import { canonicalTextQuery, isTextQueryFault, MAX_TEXT_TERMS, parseTextQuery } from './text-query-parser';

const w = (word: string) => ({ kind: 'word' as const, word });
const p = (...words: string[]) => ({ kind: 'phrase' as const, words });

function parsed(q: string): TextQuery {
  const result = parseTextQuery(q);
  if (isTextQueryFault(result)) throw new Error(`fault for ${JSON.stringify(q)}: ${result.fault}`);
  return result;
}
const faultOf = (q: string) => {
  const result = parseTextQuery(q);
  return isTextQueryFault(result) ? result.fault : undefined;
};

describe('parseTextQuery (workflows-v1 §1 grammar)', () => {
  describe('words separated by spaces must all appear', () => {
    it('gives one clause per word', () => {
      expect(parsed('refund  late\tdelivery')).toEqual({
        all: [[w('refund')], [w('late')], [w('delivery')]],
        none: [],
        scope: 'all',
      });
    });
    it('keeps words as sent (case, accents, non-Latin scripts, digits)', () => {
      expect(parsed('Lieferung élève 東京 12345 naïve').all).toEqual([
        [w('Lieferung')],
        [w('élève')],
        [w('東京')],
        [w('12345')],
        [w('naïve')],
      ]);
    });
    it('keeps combining marks inside their word (decomposed accents)', () => {
      expect(parsed('cafe\u0301 ok').all).toEqual([[w('cafe\u0301')], [w('ok')]]);
    });
    it('takes the scope given (q.in)', () => {
      expect(parseTextQuery('refund', 'shopper')).toEqual({
        all: [[w('refund')]],
        none: [],
        scope: 'shopper',
      });
    });
  });

  describe('any other punctuation separates words', () => {
    it('e-mail is two words, both required', () => {
      expect(parsed('e-mail').all).toEqual([[w('e')], [w('mail')]]);
    });
    it('splits on apostrophes, dots, slashes, underscores, emoji and symbols', () => {
      expect(parsed("l'avion a.b/c running_shoes 🛒x €5").all).toEqual([
        [w('l')],
        [w('avion')],
        [w('a')],
        [w('b')],
        [w('c')],
        [w('running')],
        [w('shoes')],
        [w('x')],
        [w('5')],
      ]);
    });
    it('a lone surrogate separates words and never reaches a term', () => {
      expect(parsed('ab\uD800cd \uDC00').all).toEqual([[w('ab')], [w('cd')]]);
    });
  });

  describe('"two words" is a phrase', () => {
    it('keeps its words in order', () => {
      expect(parsed('"late delivery" refund').all).toEqual([[p('late', 'delivery')], [w('refund')]]);
    });
    it('an unmatched quote closes at the end of q', () => {
      expect(parsed('refund "late delivery').all).toEqual([[w('refund')], [p('late', 'delivery')]]);
    });
    it('a one-word phrase is a word; an empty phrase is nothing', () => {
      expect(parsed('"refund" "" " , "').all).toEqual([[w('refund')]]);
    });
    it('punctuation inside a phrase separates its words', () => {
      expect(parsed('"e-mail address"').all).toEqual([[p('e', 'mail', 'address')]]);
    });
    it('a quote also ends the piece before it', () => {
      expect(parsed('refund"late delivery"now').all).toEqual([
        [w('refund')],
        [p('late', 'delivery')],
        [w('now')],
      ]);
    });
  });

  describe('-word and -"a phrase" exclude', () => {
    it('excludes words and phrases', () => {
      expect(parsed('refund -late -"gift card"')).toEqual({
        all: [[w('refund')]],
        none: [w('late'), p('gift', 'card')],
        scope: 'all',
      });
    });
    it('an exclusion split by punctuation excludes its words as a phrase', () => {
      expect(parsed('refund -e-mail').none).toEqual([p('e', 'mail')]);
    });
    it('a dash inside or at the end of a word is punctuation, not an exclusion', () => {
      expect(parsed('refund- late-night')).toEqual({
        all: [[w('refund')], [w('late')], [w('night')]],
        none: [],
        scope: 'all',
      });
    });
    it('a dash alone, or dashes only, exclude nothing', () => {
      expect(parsed('refund - -- -"" -,')).toEqual({ all: [[w('refund')]], none: [], scope: 'all' });
    });
  });

  describe('OR binds tighter than the implicit AND', () => {
    it('refund late OR delayed = refund AND (late OR delayed)', () => {
      expect(parsed('refund late OR delayed').all).toEqual([[w('refund')], [w('late'), w('delayed')]]);
    });
    it('chains and phrases: a OR "b c" OR d', () => {
      expect(parsed('a OR "b c" OR d').all).toEqual([[w('a'), p('b', 'c'), w('d')]]);
    });
    it('only the capital word on its own is the operator', () => {
      expect(parsed('a or b').all).toEqual([[w('a')], [w('or')], [w('b')]]);
      expect(parsed('a Or b').all).toEqual([[w('a')], [w('Or')], [w('b')]]);
      expect(parsed('a "OR" b').all).toEqual([[w('a')], [w('OR')], [w('b')]]);
      expect(parsed('a OR, b').all).toEqual([[w('a')], [w('OR')], [w('b')]]);
    });
    it('a dangling OR joins nothing: at the start, at the end, doubled', () => {
      expect(parsed('OR refund OR').all).toEqual([[w('refund')]]);
      expect(parsed('a OR OR b').all).toEqual([[w('a'), w('b')]]);
    });
    it('an OR beside an exclusion joins nothing', () => {
      expect(parsed('a OR -b')).toEqual({ all: [[w('a')]], none: [w('b')], scope: 'all' });
      expect(parsed('-a OR b')).toEqual({ all: [[w('b')]], none: [w('a')], scope: 'all' });
      expect(parsed('a OR -x OR b')).toEqual({ all: [[w('a')], [w('b')]], none: [w('x')], scope: 'all' });
    });
  });

  describe('a q with no positive term is a fault naming q', () => {
    it.each([
      ['punctuation only', '!?,;:'],
      ['quotes and dashes only', '"-"--"""-'],
      ['OR alone', 'OR'],
      ['ORs alone', 'OR OR OR'],
      ['spaces', '   '],
      ['lone surrogates', '\uD800\uDC00\uDFFF'.slice(0, 1) + '\uDFFF'],
    ])('%s', (_name, q) => {
      expect(faultOf(q)).toMatch(/no word/);
    });
    it('only exclusions', () => {
      expect(faultOf('-refund -"late delivery"')).toMatch(/only exclusions/);
    });
  });

  describe('more than 32 terms is a fault naming q (words, phrases and exclusions count; OR does not)', () => {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`);
    it('32 terms pass, 33 fail', () => {
      expect(faultOf(words(MAX_TEXT_TERMS).join(' '))).toBeUndefined();
      expect(faultOf(words(MAX_TEXT_TERMS + 1).join(' '))).toMatch(/33 terms/);
    });
    it('ORs do not count', () => {
      const q = words(MAX_TEXT_TERMS).join(' OR ');
      expect(parsed(q).all).toEqual([words(MAX_TEXT_TERMS).map(w)]);
    });
    it('exclusions and phrases count, and punctuation-split words each count', () => {
      expect(faultOf(`${words(30).join(' ')} -x "a b" c`)).toMatch(/33 terms/);
      expect(faultOf(`${words(31).join(' ')} e-mail`)).toMatch(/33 terms/);
    });
    it('repeats count as written, then are kept once', () => {
      expect(parsed('a a A OR b b OR a -x -x')).toEqual({
        all: [[w('a')], [w('A'), w('b')]],
        none: [w('x')],
        scope: 'all',
      });
      expect(faultOf(Array(33).fill('a').join(' '))).toMatch(/33 terms/);
    });
  });

  it('never throws on hostile text', () => {
    const hostile = [
      '"'.repeat(500),
      '-'.repeat(500),
      'x'.repeat(500),
      '\uD800'.repeat(500),
      Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)).join(''),
      '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
      Array(32).fill('OR').join(' '),
    ];
    for (const q of hostile) expect(() => parseTextQuery(q)).not.toThrow();
  });
});

describe('canonicalTextQuery (cursor binding)', () => {
  const canon = (q: string, scope: 'all' | 'shopper' = 'all') => {
    const r = parseTextQuery(q, scope);
    if (isTextQueryFault(r)) throw new Error(r.fault);
    return canonicalTextQuery(r);
  };
  it('is the same for the same query written differently', () => {
    expect(canon('Refund late OR delayed -x -"y z"')).toBe(canon('delayed OR late  refund -"Y Z" -X refund'));
  });
  it('differs for other words, phrase order, grouping, exclusions or scope', () => {
    const base = canon('refund late');
    expect(canon('refund later')).not.toBe(base);
    expect(canon('refund OR late')).not.toBe(base);
    expect(canon('"refund late"')).not.toBe(canon('"late refund"'));
    expect(canon('"refund late"')).not.toBe(base);
    expect(canon('refund -late')).not.toBe(canon('refund'));
    expect(canon('refund late', 'shopper')).not.toBe(base);
  });
});
