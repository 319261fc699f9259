import { describe, expect, it } from '@jest/globals';
import { chooseIndexTerms } from './index-terms';
import { siteDensitiesFrom } from './site-densities';
import { TAXONOMY_TOKENS } from '../../labels/taxonomy';

/** Densities of the bench site (2 × 1,000,000 conversations, docs/query-engine.md). */
const SITE = 1_000_000;
const rows: Record<string, number> = {
  'channel:web': 700_700,
  'channel:hosted': 120_000,
  'language:en': 420_000,
  'language:de': 90_000,
  'agent:agt_top': 153_776,
  'feedback:positive': 219_465,
  'status:labeled': 800_000,
  'resolution:resolved': 399_058,
};
const terms = (...names: string[]) => names.map((term) => ({ term, rows: rows[term] }));

describe('chooseIndexTerms', () => {
  it('keeps the rare terms of a stacked filter in the GIN condition and leaves the dense ones to the row', () => {
    const kept = chooseIndexTerms({
      siteRows: SITE,
      base: 42_718, // the keyword's rows
      terms: terms(
        'channel:web',
        'language:en',
        'agent:agt_top',
        'feedback:positive',
        'status:labeled',
        'resolution:resolved',
      ),
      stopAfter: 1000,
      postingsPerHeapVisit: 250,
      implied: new Set(['status:labeled']),
    });
    expect(kept).toEqual(['agent:agt_top', 'feedback:positive']);
  });

  it('never merges a term every candidate holds (status:labeled beside a label token)', () => {
    const kept = chooseIndexTerms({
      siteRows: SITE,
      base: 42_718,
      terms: terms('status:labeled', 'resolution:resolved'),
      stopAfter: 10_001,
      postingsPerHeapVisit: 250,
      implied: new Set(['status:labeled']),
    });
    expect(kept).toEqual(['resolution:resolved']);
  });

  it('prices heap visits only up to the LIMIT: dense matches need fewer terms', () => {
    const input = {
      siteRows: SITE,
      base: 42_718,
      terms: terms('channel:web', 'language:en'),
      postingsPerHeapVisit: 250,
    };
    // 12,571 matches expected: a LIMIT of 100 visits 0.8 % of the candidates, whatever they are.
    expect(chooseIndexTerms({ ...input, stopAfter: 100 })).toEqual([]);
    expect(chooseIndexTerms({ ...input, stopAfter: 1000 })).toEqual(['language:en']);
    expect(chooseIndexTerms({ ...input, stopAfter: 100_000 })).toEqual(['language:en', 'channel:web']);
  });

  it('keeps at least the rarest term when nothing else uses the index', () => {
    const kept = chooseIndexTerms({
      siteRows: SITE,
      base: undefined,
      terms: terms('channel:web', 'status:labeled'),
      stopAfter: 1000,
      postingsPerHeapVisit: 0,
    });
    expect(kept).toEqual(['channel:web']);
  });

  it('keeps every term when a density is unknown, none at all when merging is free or heap visits are', () => {
    const base = { siteRows: SITE, base: 42_718, stopAfter: 1000 };
    expect(
      chooseIndexTerms({
        ...base,
        terms: [...terms('channel:web'), { term: 'x:y', rows: undefined }],
        postingsPerHeapVisit: 250,
      }),
    ).toEqual(['x:y', 'channel:web']);
    expect(
      chooseIndexTerms({ ...base, terms: terms('channel:web', 'language:de'), postingsPerHeapVisit: 0 }),
    ).toEqual([]);
    expect(
      chooseIndexTerms({
        ...base,
        terms: terms('channel:web', 'language:de'),
        postingsPerHeapVisit: Number.POSITIVE_INFINITY,
      }),
    ).toEqual(['language:de', 'channel:web']);
  });
});

describe('siteDensitiesFrom', () => {
  it('names the rollup keys as search terms, label tokens by their bit', () => {
    const d = siteDensitiesFrom([
      { kind: 0, key: '', n: 10 },
      { kind: 1, key: 'web', n: 7 },
      { kind: 2, key: 'fr', n: 3 },
      { kind: 3, key: 'agt_1', n: 2 },
      { kind: 4, key: 'labeled', n: 8 },
      { kind: 5, key: 'negative', n: 1 },
      { kind: 6, key: '0', n: 4 },
    ]);
    expect(d.rows).toBe(10);
    expect(Object.fromEntries(d.terms)).toEqual({
      'channel:web': 7,
      'language:fr': 3,
      'agent:agt_1': 2,
      'status:labeled': 8,
      'feedback:negative': 1,
      [TAXONOMY_TOKENS[0]]: 4,
    });
  });
});
