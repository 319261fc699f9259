import { describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { ConversationFilter, emptyFilter } from '../listing/conversation-filter';
import { ListingKnowledge } from './listing-knowledge';
import {
  choosePostings,
  countsFromRollups,
  expectedKeywordRows,
  furtherWindow,
  keywordTermGroups,
  ListingPlanner,
} from './listing-planner';
import { DEFAULT_TUNING, tuned } from './listing-tuning';
import { SiteDensities, SiteDensityCache } from './site-densities';

/**
 * A planner over known figures: pg_stats of the title terms (site `s`: `rare` in 100 rows,
 * `common` in 200,000 of 1,000,000; a term not listed is below 0.0001) and the site's exact
 * term counts. `reads` counts the figures it read.
 */
function plannerOver(densities: SiteDensities | Error = { rows: 1_000_000, terms: new Map() }) {
  const reads = { titleTerms: 0, densities: 0 };
  const dataSource = {
    query: async (sql: string) => {
      if (sql.includes('pg_class')) return [{ rows: 1_000_000 }];
      reads.titleTerms++;
      return [
        { term: 's|w:rare', share: 0.0001 },
        { term: 's|w:common', share: 0.2 },
        { term: null, share: 0.0001 },
        { term: null, share: 0.2 },
      ];
    },
  } as unknown as DataSource;
  const cache = new SiteDensityCache(async () => {
    reads.densities++;
    if (densities instanceof Error) throw densities;
    return densities;
  });
  return { planner: new ListingPlanner(new ListingKnowledge(dataSource, cache)), reads };
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

describe('choosePostings (the postings plan takes the rarest posting term)', () => {
  it('drives with the rarest term and probes the other title terms, not the other tokens', () => {
    expect(
      choosePostings(
        [
          { term: 'w:order', rows: 900, title: true },
          { term: 't:grounded:fail', rows: 40, title: false },
          { term: 'w:refund', rows: 300, title: true },
          { term: 't:safe_response:fail', rows: 50, title: false },
        ],
        150_000,
      ),
    ).toEqual({ driver: 't:grounded:fail', others: ['w:order', 'w:refund'] });
  });

  it('declines a driver held by postingsWalk rows or more, a quarter of it with terms to probe', () => {
    expect(
      choosePostings(
        [{ term: 'w:a', rows: 999 }].map((c) => ({ ...c, title: true })),
        1000,
      ),
    ).toEqual({
      driver: 'w:a',
      others: [],
    });
    expect(choosePostings([{ term: 'w:a', rows: 1000, title: true }], 1000)).toBeUndefined();
    const two = [
      { term: 'w:a', rows: 250, title: true },
      { term: 'w:b', rows: 5000, title: true },
    ];
    expect(choosePostings(two, 1000)).toBeUndefined();
    expect(choosePostings(two, 1001)).toEqual({ driver: 'w:a', others: ['w:b'] });
    expect(choosePostings([], 1000)).toBeUndefined();
  });
});

describe('furtherWindow (walk on while the rest of the page is expected close by)', () => {
  it('walks 1.5 times the rows the rest of the page is expected in, at most `further`', () => {
    // 10 of 26 in 2,000 rows: 16 more expected within 3,200 rows.
    expect(furtherWindow(10, 26, 2000, 30_000)).toBe(4800);
    expect(furtherWindow(1, 26, 2000, 60_000)).toBe(60_000);
  });

  it('turns to the GIN index when the rest is expected beyond `further`, or nothing matched yet', () => {
    expect(furtherWindow(1, 26, 2000, 30_000)).toBeUndefined();
    expect(furtherWindow(0, 26, 2000, 30_000)).toBeUndefined();
  });
});

describe('countsFromRollups (exact counts of column filters from the statistics rollups)', () => {
  it('takes column filters with at most one agent or one label token', () => {
    expect(countsFromRollups(filter({ channel: 'web', language: 'en', feedback: 'positive' }))).toBe(true);
    expect(countsFromRollups(filter({ agentId: 'agt_a', labelStatus: 'labeled' }))).toBe(true);
    expect(countsFromRollups(filter({ labelsAll: ['grounded:fail', 'grounded:fail'] }))).toBe(true);
    expect(countsFromRollups(emptyFilter())).toBe(true);
  });

  it('declines what the rollups do not hold', () => {
    const declined = [
      { from: '2026-01-01T00:00:00Z' },
      { keywords: ['order'] },
      { labelsAll: ['grounded:fail', 'grounded:pass'] },
      { labelsAll: ['grounded:fail'], agentId: 'agt_a' },
      { labelsAll: ['not_a:token'] },
      { labelsAny: [['grounded:fail']] },
      { labelsNone: ['visitor_frustrated:true'] },
      { scores: { quality: { min: 0.5 } } },
    ];
    for (const part of declined) expect(countsFromRollups(filter(part))).toBe(false);
  });
});

describe('ListingPlanner.planPage', () => {
  it('walks the creation-time index when nothing narrows the rows, reading nothing', async () => {
    const { planner, reads } = plannerOver();
    const plan = await planner.planPage('s', filter({ from: '2026-01-01T00:00:00Z' }), tuned());
    expect(plan.strategy).toBe('walk');
    expect(reads).toEqual({ titleTerms: 0, densities: 0 });
  });

  it('takes the postings of a keyword held by few rows', async () => {
    const { planner } = plannerOver();
    expect(
      await planner.planPage('s', filter({ keywords: ['Rare'], channel: 'web' }), tuned()),
    ).toMatchObject({
      strategy: 'postings',
      driver: 'w:rare',
      others: [],
    });
  });

  it('starts with the GIN index when the keywords are expected within two probes, postings off', async () => {
    const { planner } = plannerOver();
    const plan = await planner.planPage('s', filter({ keywords: ['rare'] }), tuned({ postingsWalk: 0 }));
    expect(plan).toMatchObject({ strategy: 'gin', probe: 2 * DEFAULT_TUNING.ginProbe });
  });

  it('weighs a common keyword by the share of the site holding its equality terms (stacked filters)', async () => {
    const densities = { rows: 1_000_000, terms: new Map([['channel:playground', 5000]]) };
    const { planner } = plannerOver(densities);
    // 200,000 × 0.005 = 1,000 expected: within a probe of 2,000.
    const stacked = await planner.planPage(
      's',
      filter({ keywords: ['common'], channel: 'playground' }),
      tuned(),
    );
    expect(stacked.strategy).toBe('gin');
    // Alone, 200,000: the bounded walk first, with the tuning's figures.
    expect(
      await planner.planPage('s', filter({ keywords: ['common'] }), tuned({ walkWindow: 7 })),
    ).toMatchObject({
      strategy: 'window',
      window: 7,
      further: DEFAULT_TUNING.walkFurther,
      probe: DEFAULT_TUNING.ginProbe,
    });
  });

  it('walks a window first for equality filters, without reading the title terms', async () => {
    const { planner, reads } = plannerOver();
    expect((await planner.planPage('s', filter({ channel: 'web' }), tuned())).strategy).toBe('window');
    expect(reads.titleTerms).toBe(0);
  });
});

describe('ListingPlanner.planCount', () => {
  it('sums the rollups for column filters alone, whatever else the tuning says', async () => {
    const { planner, reads } = plannerOver();
    expect((await planner.planCount('s', filter({ channel: 'web' }), 10_000, tuned())).strategy).toBe(
      'rollup',
    );
    expect(reads).toEqual({ titleTerms: 0, densities: 0 });
  });

  it('walks the creation-time index when only a time range narrows', async () => {
    const { planner } = plannerOver();
    const plan = await planner.planCount('s', filter({ from: '2026-01-01T00:00:00Z' }), 10_000, tuned());
    expect(plan.strategy).toBe('walk');
  });

  it('counts keywords over the whole site through the GIN index, a time range through the sample', async () => {
    const { planner } = plannerOver();
    const noPostings = tuned({ postingsWalk: 0 });
    expect(await planner.planCount('s', filter({ keywords: ['common'] }), 10_000, noPostings)).toMatchObject({
      strategy: 'gin',
      onRow: [],
    });
    const windowed = filter({ keywords: ['common'], from: '2026-01-01T00:00:00Z' });
    expect((await planner.planCount('s', windowed, 10_000, noPostings)).strategy).toBe('sample');
  });

  it('samples the newest rows, a narrow score band walking from a quarter of the dense share', async () => {
    const { planner } = plannerOver();
    const t = tuned({ countWindow: 1000, denseShare: 0.1 });
    const from = '2026-01-01T00:00:00Z';
    expect(await planner.planCount('s', filter({ channel: 'web', from }), 10_000, t)).toMatchObject({
      strategy: 'sample',
      window: 1000,
      denseHits: 100,
    });
    const band = filter({ from, scores: { quality: { min: 0.5, max: 0.52 } } });
    expect(await planner.planCount('s', band, 10_000, t)).toMatchObject({ denseHits: 25 });
  });
});

describe('ListingPlanner.indexTerms (which equality terms the GIN condition holds)', () => {
  it("checks a dense term on the candidate rows, from the site's exact counts", async () => {
    const densities = {
      rows: 1_000_000,
      terms: new Map([
        ['channel:web', 900_000],
        ['language:fr', 2_000],
      ]),
    };
    const { planner } = plannerOver(densities);
    const onRow = await planner.indexTerms('s', filter({ channel: 'web', language: 'fr' }), 1001, tuned());
    expect(onRow).toEqual(['channel:web']);
    // Merging posting lists priced at nothing: every term stays in the index.
    const free = await planner.indexTerms(
      's',
      filter({ channel: 'web', language: 'fr' }),
      1001,
      tuned({ postingsPerHeapVisit: Infinity }),
    );
    expect(free).toEqual([]);
  });

  it('keeps every term in the index when the counts cannot be read', async () => {
    const { planner, reads } = plannerOver(new Error('locked'));
    expect(await planner.indexTerms('s', filter({ channel: 'web', language: 'fr' }), 1001, tuned())).toEqual(
      [],
    );
    expect(reads.densities).toBe(1);
  });
});

describe('plans for a transcript query (q)', () => {
  /**
   * A planner over known transcript figures: of 1,000,000 transcripts, the lexeme `commun` is
   * in 300,000 and `rar` is not listed (below 0.0001); the site has 1,000,000 conversations.
   */
  function textPlanner() {
    const dataSource = {
      query: async (sql: string, values?: unknown[]) => {
        if (sql.includes('pg_class')) return [{ rows: 1_000_000 }];
        if (sql.includes('to_tsvector')) {
          const [words, langs] = values as [string[], string[]];
          return words.flatMap((word) => langs.map((lang) => ({ word, lang, lexemes: [word.slice(0, -1)] })));
        }
        return [
          { term: 'commun', share: 0.3 },
          { term: null, share: 0.0001 },
          { term: null, share: 0.3 },
        ];
      },
    } as unknown as DataSource;
    const cache = new SiteDensityCache(async () => ({ rows: 1_000_000, terms: new Map() }));
    return new ListingPlanner(new ListingKnowledge(dataSource, cache));
  }
  const text = (...words: string[]): ConversationFilter =>
    filter({ text: { all: words.map((word) => [{ kind: 'word', word }]), none: [], scope: 'all' } });

  it('reads the transcripts’ GIN index for a word no statistics list (rare)', async () => {
    const plan = await textPlanner().planPage('s', text('rare'), DEFAULT_TUNING);
    expect(plan).toMatchObject({ strategy: 'transcript', probe: 10_000 });
  });

  it('walks the newest rows for a common word', async () => {
    const plan = await textPlanner().planPage('s', text('communs'), DEFAULT_TUNING);
    expect(plan.strategy).toBe('window');
  });

  it('weighs words together: a common word beside a rare one is rare', async () => {
    const plan = await textPlanner().planPage('s', text('communs', 'rare'), DEFAULT_TUNING);
    expect(plan.strategy).toBe('transcript');
  });

  it('counts through the transcripts’ bitmap, never the rollups', async () => {
    expect(countsFromRollups(text('rare'))).toBe(false);
    const plan = await textPlanner().planCount('s', text('communs'), 10_000, DEFAULT_TUNING);
    expect(plan.strategy).toBe('transcript');
  });
});
