import { describe, expect, it } from '@jest/globals';
import { isTextQueryFault, parseTextQuery } from '../text-query/text-query-parser';
import type { LexemeStats, WordStems } from './listing-knowledge';
import { DEFAULT_TRANSCRIPT_PROBE } from './listing-tuning';
import { expectedTextRows, lexemeShare, wordShare } from './transcript-planner';

/** The bench's figures: the least common of the listed lexemes is held by 0.65 % of transcripts. */
const stats: LexemeStats = {
  at: 0,
  shares: new Map([
    ['dag', 0.0924],
    ['retourbeleid', 0.0244],
    ['warranti', 0.0474],
  ]),
  floor: 0.0065,
  rows: 2_000_000,
};

/** A word's lexemes per language, as stemsSql returns them. */
const stems = (byLanguage: Record<string, string[]>): WordStems => new Map(Object.entries(byLanguage));
const sixWays = (fr: string, en: string, de: string, it: string, es: string, nl: string) =>
  stems({ fr: [fr], en: [en], de: [de], it: [it], es: [es], nl: [nl] });

const query = (q: string) => {
  const parsed = parseTextQuery(q);
  if (isTextQueryFault(parsed)) throw new Error(parsed.fault);
  return parsed;
};

describe('the expected matches of a transcript query', () => {
  it('a listed lexeme counts its share; one not listed half the floor, as Postgres estimates it', () => {
    expect(lexemeShare(stats, 'dag')).toBe(0.0924);
    expect(lexemeShare(stats, 'firarra')).toBe(0.00325);
  });

  it("a word's share sums its distinct lexemes over the languages, each counted once", () => {
    const warranty = sixWays('warranty', 'warranti', 'warranty', 'warranty', 'warranty', 'warranty');
    expect(wordShare(warranty, stats)).toBeCloseTo(0.0474 + 0.00325, 10);
    expect(wordShare(undefined, stats)).toBe(0);
  });

  it('a rare name stemmed two ways is expected within the transcript probe at 1,000,000 conversations', () => {
    const firarrao = sixWays('firarrao', 'firarrao', 'firarrao', 'firarra', 'firarra', 'firarrao');
    const rows = expectedTextRows(query('firarrao'), new Map([['firarrao', firarrao]]), stats, 1_000_000);
    expect(rows).toBeCloseTo(6_500, 6);
    expect(rows).toBeLessThanOrEqual(DEFAULT_TRANSCRIPT_PROBE);
  });

  it('a phrase is its rarest word; clauses multiply', () => {
    const words = new Map([
      [
        'retourbeleid',
        sixWays('retourbeleid', 'retourbeleid', 'retourbeleid', 'retourbeleid', 'retourbel', 'retourbeleid'),
      ],
      ['dagen', sixWays('dagen', 'dagen', 'dag', 'dagen', 'dag', 'dag')],
    ]);
    const phrase = expectedTextRows(query('"retourbeleid dagen"'), words, stats, 1_000_000);
    expect(phrase).toBeCloseTo((0.0244 + 0.00325) * 1_000_000, 6);
    const both = expectedTextRows(query('retourbeleid dagen'), words, stats, 1_000_000);
    expect(both).toBeCloseTo(phrase * (0.00325 + 0.0924), 6);
  });
});
