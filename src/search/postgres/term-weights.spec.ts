import { describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { ConversationFilter, emptyFilter } from '../listing/conversation-filter';
import { ListingKnowledge } from './listing-knowledge';
import { tuned } from './listing-tuning';
import type { SiteDensities } from './site-densities';
import { countingDensityCache, siteDensities } from '../../../test/support/site-densities';
import { expectedKeywordRows, keywordTermGroups, TermWeights } from './term-weights';

/**
 * Term weights over the site's exact term counts `densities` (or a failed read of them), with no
 * title-term statistics (no keywords here). `reads` counts the reads of the counts.
 */
function weightsOver(densities: SiteDensities | Error) {
  const reads = { densities: 0 };
  const cache = countingDensityCache(densities, reads);
  const noStatistics = {
    query: async () => {
      throw new Error('no title-term statistics in these tests');
    },
  } as unknown as DataSource;
  return { weights: new TermWeights(new ListingKnowledge(noStatistics, cache)), reads };
}

const filter = (part: Partial<ConversationFilter>): ConversationFilter => ({ ...emptyFilter(), ...part });

describe('keywordTermGroups (title terms the plan chooser weighs)', () => {
  it("spells a word's term and a phrase's adjacent pairs as conversation_keyword_terms does, keyword by keyword", () => {
    expect(keywordTermGroups('s', ['Retour', 'Red  running shoes'])).toEqual([
      { words: ['retour'], terms: ['s|w:retour'] },
      { words: ['red', 'running', 'shoes'], terms: ['s|p:red running', 's|p:running shoes'] },
    ]);
  });

  it('gives up on keywords the parser splits in its own way (punctuation, hyphens) and on none', () => {
    expect(keywordTermGroups('s', ['e-mail'])).toBeUndefined();
    expect(keywordTermGroups('s', ['ok', 'size 4.5'])).toBeUndefined();
    expect(keywordTermGroups('s', ['!!!'])).toBeUndefined();
    expect(keywordTermGroups('s', [])).toBeUndefined();
  });
});

describe('expectedKeywordRows (keywords weighed as independent of each other)', () => {
  it("multiplies the rarest keyword's rows by the site's share holding each other keyword", () => {
    // retour and order on the benched site: 43,155 and 40,786 of 1,000,000 rows.
    expect(expectedKeywordRows([43_155, 40_786], 1_000_000)).toBeCloseTo(43_155 * 0.040786, 6);
    expect(expectedKeywordRows([500, 100_000, 200_000], 1_000_000)).toBeCloseTo(10, 6);
    // Order of the keywords does not matter.
    expect(expectedKeywordRows([200_000, 500, 100_000], 1_000_000)).toBeCloseTo(10, 6);
  });

  it("is the rarest keyword's rows for one keyword or without the site's row count", () => {
    expect(expectedKeywordRows([43_155], 1_000_000)).toBe(43_155);
    expect(expectedKeywordRows([43_155, 40_786])).toBe(40_786);
    expect(expectedKeywordRows([43_155, 40_786], 0)).toBe(40_786);
  });

  it('never weighs a keyword held by more rows than the site has as more than all of them', () => {
    // pg_stats estimates can exceed a small site's exact count: a share is at most 1.
    expect(expectedKeywordRows([30, 50], 40)).toBe(30);
  });
});

describe('TermWeights.indexTerms (which equality terms the GIN condition holds)', () => {
  it("checks a dense term on the candidate rows, from the site's exact counts", async () => {
    const densities = siteDensities(1_000_000, {
      'channel:web': 900_000,
      'language:fr': 2_000,
    });
    const { weights } = weightsOver(densities);
    const onRow = await weights.indexTerms('s', filter({ channel: 'web', language: 'fr' }), 1001, tuned());
    expect(onRow).toEqual(['channel:web']);
    // Merging posting lists priced at nothing: every term stays in the index.
    const free = await weights.indexTerms(
      's',
      filter({ channel: 'web', language: 'fr' }),
      1001,
      tuned({ postingsPerHeapVisit: Infinity }),
    );
    expect(free).toEqual([]);
  });

  it('keeps every term in the index when the counts cannot be read', async () => {
    const { weights, reads } = weightsOver(new Error('locked'));
    expect(await weights.indexTerms('s', filter({ channel: 'web', language: 'fr' }), 1001, tuned())).toEqual(
      [],
    );
    expect(reads.densities).toBe(1);
  });
});
