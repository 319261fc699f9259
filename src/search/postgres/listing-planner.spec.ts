import { describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { ConversationFilter, emptyFilter } from '../listing/conversation-filter';
import { ListingKnowledge } from './listing-knowledge';
import { choosePostings, countsFromRollups, jointCountStrategy, ListingPlanner } from './listing-planner';
import { DEFAULT_TUNING, tuned } from './listing-tuning';
import { SiteDensities, SiteDensityCache } from './site-densities';
import { countingDensityCache, siteDensities } from '../../../test/support/site-densities';
import { TermWeights } from './term-weights';

/** The planner over `knowledge`, with its term weights. */
const plannerOn = (knowledge: ListingKnowledge) => new ListingPlanner(knowledge, new TermWeights(knowledge));

/**
 * A planner over known figures: pg_stats of the title terms (site `s`: `rare` in 100 rows,
 * `common` in 200,000 of 1,000,000; a term not listed is below 0.0001) and the site's exact
 * term counts. `reads` counts the figures it read.
 */
function plannerOver(densities: SiteDensities | Error = siteDensities(1_000_000)) {
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
  const cache = countingDensityCache(densities, reads);
  return { planner: plannerOn(new ListingKnowledge(dataSource, cache)), reads };
}

const filter = (part: Partial<ConversationFilter>): ConversationFilter => ({ ...emptyFilter(), ...part });

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
    const densities = siteDensities(1_000_000, { 'channel:playground': 5000 });
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

  it("walks a time range whole when its rows cost less than the GIN count's candidates", async () => {
    const densities = siteDensities(1_000_000, {
      'channel:web': 700_000,
      'language:en': 167_000,
      'feedback:positive': 220_000,
    });
    const { planner } = plannerOver(densities);
    const t = tuned({ walkRowsPerHeapVisit: 10, postingsPerHeapVisit: 250, cellsCount: 0 });
    const from = '2026-01-01T00:00:00Z';
    const stacked = filter({ channel: 'web', language: 'en', feedback: 'positive', from });
    // 1,000,000 · 0.7 · 0.167 · 0.22 = 25,718 candidates and 1,087,000 entries merged (4,348
    // visits' worth): a walk of up to 300,660 rows costs no more.
    expect(await planner.planCount('s', stacked, 10_000, t)).toMatchObject({
      strategy: 'sample',
      walkRange: 300_660,
    });
    // No lower bound, or keywords (a walk reads their titles on the heap): the density alone.
    const { from: _unbounded, ...open } = stacked;
    expect(await planner.planCount('s', { ...open, to: from }, 10_000, t)).not.toHaveProperty('walkRange');
  });

  it('samples the newest rows, a narrow score band walking from a quarter of the dense share', async () => {
    const { planner } = plannerOver();
    const t = tuned({ countWindow: 1000, denseShare: 0.1, cellsCount: 0 });
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

describe('ListingPlanner.planCount: the cell index (counts of stacked columns)', () => {
  const densities = siteDensities(1_000_000, {
    'agent:agt_a': 150_000,
    'channel:hosted': 333_000,
    'language:nl': 167_000,
    'status:labeled': 600_000,
    'feedback:negative': 100_000,
    'resolution:unresolved': 160_000,
    'visitor_frustrated:true': 96_000,
    'abusive_visitor:true': 12_000,
  });

  it("reads the fixed columns' entries when the site's counts put them under cellsCount", async () => {
    const { planner } = plannerOver(densities);
    const stacked = filter({ agentId: 'agt_a', channel: 'hosted', labelsAny: [['resolution:unresolved']] });
    // 1,000,000 · 0.15 · 0.333 · 0.6 (labeled, implied by the token) = 29,970 entries.
    expect(await planner.planCount('s', stacked, 10_000, tuned())).toMatchObject({
      strategy: 'cells',
      entries: 29_970,
    });
    // A time range too (checked on the entries); the bound lowered under them: the other plans.
    const since = { ...stacked, from: '2026-01-01T00:00:00Z' };
    expect((await planner.planCount('s', since, 10_000, tuned())).strategy).toBe('cells');
    expect((await planner.planCount('s', since, 10_000, tuned({ cellsCount: 29_000 }))).strategy).toBe(
      'sample',
    );
  });

  it("leaves a problem token rarer than the columns' entries to its postings", async () => {
    const { planner } = plannerOver(densities);
    const flagged = filter({
      channel: 'hosted',
      labelsAll: ['abusive_visitor:true'],
      from: '2026-01-01T00:00:00Z',
    });
    // 333,000 · 0.6 = 199,800 entries, more than the bound and than the token's 12,000 postings.
    expect(await planner.planCount('s', flagged, 10_000, tuned({ cellsCount: Infinity }))).toMatchObject({
      strategy: 'postings',
      driver: 't:abusive_visitor:true',
    });
  });

  it('declines without the site counts, and for what the index does not hold', async () => {
    const failed = plannerOver(new Error('connection terminated')).planner;
    const columns = filter({ language: 'nl', feedback: 'negative', from: '2026-01-01T00:00:00Z' });
    expect((await failed.planCount('s', columns, 10_000, tuned())).strategy).toBe('sample');
    const { planner } = plannerOver(densities);
    expect((await planner.planCount('s', columns, 10_000, tuned())).strategy).toBe('cells');
    const scored = { ...columns, scores: { quality: { min: 0.9 } } };
    expect((await planner.planCount('s', scored, 10_000, tuned())).strategy).toBe('sample');
  });
});

describe('plans for a transcript query (q)', () => {
  /**
   * A planner over known transcript figures: of 1,000,000 transcripts, the lexeme `commun` is
   * in 300,000, `mitte` in 5,000 and `rar` is not listed (below 0.0001); the site has 1,000,000
   * conversations.
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
          { term: 'mitte', share: 0.005 },
          { term: null, share: 0.0001 },
          { term: null, share: 0.3 },
        ];
      },
    } as unknown as DataSource;
    const cache = new SiteDensityCache(async () => siteDensities(1_000_000));
    return plannerOn(new ListingKnowledge(dataSource, cache));
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

  it('walks the transcripts for a word within a probe that their first window is expected to fill twice', async () => {
    // 5,000 expected matches: 100 in a window of 20,000 transcripts, twice a page of 26 and more.
    const plan = await textPlanner().planPage('s', text('mitten'), DEFAULT_TUNING);
    expect(plan).toMatchObject({ strategy: 'window', walkIndex: 'transcripts', window: 20_000 });
    // A page of 101 rows is not expected twice in that window: the probe.
    expect(await textPlanner().planPage('s', text('mitten'), DEFAULT_TUNING, 101)).toMatchObject({
      strategy: 'transcript',
      walkIndex: 'transcripts',
    });
    // Beside a channel the walk probes each conversation's transcript: the probe.
    expect(
      await textPlanner().planPage('s', { ...text('mitten'), channel: 'web' }, DEFAULT_TUNING),
    ).toMatchObject({ strategy: 'transcript', walkIndex: 'created' });
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

describe('counts of stacked column filters, planned from their joint figures', () => {
  const UNRESOLVED = 'resolution:unresolved';
  const RESOLVED = 'resolution:resolved';
  const FRUSTRATED = 'visitor_frustrated:true';
  /**
   * A planner whose rollups hold, for site `s` of 1,000,000 conversations (800,000 labeled):
   * the cells asked (`cell` rows, `cellAgent` of the agent, `cellToken` holding each token), the
   * agent (`agentLabeled`, `agentToken`) and the site (`siteToken`); `reads.joint` counts reads.
   */
  function jointPlanner(f: {
    cell: number;
    cellAgent?: number;
    cellToken: number[];
    agentLabeled?: number;
    agentToken?: number[];
    siteToken: number[];
    fail?: boolean;
  }) {
    const reads = { joint: 0 };
    const dataSource = {
      query: async (sql: string, values: unknown[]) => {
        if (!sql.includes('conversation_stats_cell')) return [];
        reads.joint++;
        if (f.fail) throw new Error('relation "conversation_stats_cell" is locked');
        const bits = values[1] as string[];
        const rows = [
          { src: 'c', kind: 0, key: '', n: f.cell },
          { src: 's', kind: 0, key: '', n: 1_000_000 },
          { src: 's', kind: 4, key: 'labeled', n: 800_000 },
          ...bits.flatMap((key, i) => [
            { src: 'c', kind: 6, key, n: f.cellToken[i] },
            { src: 's', kind: 6, key, n: f.siteToken[i] },
          ]),
        ];
        if (f.cellAgent !== undefined) {
          rows.push({ src: 'c', kind: 3, key: 'agt_a', n: f.cellAgent });
          rows.push({ src: 'a', kind: 4, key: 'labeled', n: f.agentLabeled! });
          bits.forEach((key, i) => rows.push({ src: 'a', kind: 6, key, n: f.agentToken![i] }));
        }
        return rows;
      },
    } as unknown as DataSource;
    const cache = new SiteDensityCache(async () => siteDensities(1_000_000));
    return { planner: plannerOn(new ListingKnowledge(dataSource, cache)), reads };
  }
  /**
   * Stacked columns whose figures do not settle the count: C∧A 20,000 rows, 5,000 matches
   * expected (a hosted agent with `resolution:unresolved`).
   */
  const SPARSE = {
    cell: 200_000,
    cellAgent: 20_000,
    cellToken: [60_000],
    agentLabeled: 120_000,
    agentToken: [30_000],
    siteToken: [240_000],
  };
  /** The tuning without the cell index's count (cellsCount 0): the figures' own choices. */
  const noCells = (overrides: Parameters<typeof tuned>[0] = {}) => tuned({ cellsCount: 0, ...overrides });

  it('settles an agent with one token from the agent rollup, exactly', async () => {
    const { planner, reads } = jointPlanner({
      cell: 800_000,
      cellAgent: 120_000,
      cellToken: [240_000],
      agentLabeled: 120_000,
      agentToken: [5_338],
      siteToken: [240_000],
    });
    const plan = await planner.planCount(
      's',
      filter({ agentId: 'agt_a', labelsAll: [UNRESOLVED] }),
      10_000,
      tuned(),
    );
    expect(plan).toMatchObject({ strategy: 'joint', n: 5_338 });
    expect(reads.joint).toBe(1);
  });

  it('answers capped when the exact lower bound exceeds the cap', async () => {
    // Web rows of the agent: 60,000 of its 120,000 labeled; resolved: 70,000 of them. At least 10,000 both.
    const { planner } = jointPlanner({
      cell: 500_000,
      cellAgent: 60_000,
      cellToken: [250_000],
      agentLabeled: 120_000,
      agentToken: [70_000],
      siteToken: [400_000],
    });
    const plan = await planner.planCount(
      's',
      filter({ agentId: 'agt_a', channel: 'web', labelsAll: [RESOLVED] }),
      5_000,
      tuned(),
    );
    expect(plan).toMatchObject({ strategy: 'joint', n: 10_000, joint: { lower: 10_000 } });
  });

  it('walks when the matches expected are dense, counts through the GIN index when sparse', async () => {
    const stacked = filter({ agentId: 'agt_a', channel: 'hosted', labelsAll: [UNRESOLVED] });
    const sparse = jointPlanner(SPARSE);
    const plan = await sparse.planner.planCount('s', stacked, 10_000, noCells());
    // 20,000 · 0.3 · (0.25 / 0.3) = 5,000 expected: a walk would read the whole site.
    expect(plan).toMatchObject({ strategy: 'gin', joint: { lower: 0, upper: 20_000 } });
    expect((plan as { joint: { expected: number } }).joint.expected).toBeCloseTo(5_000, 6);
    // The same with every covering-index entry priced at nothing: the walk.
    const walk = await sparse.planner.planCount(
      's',
      stacked,
      10_000,
      noCells({ walkRowsPerHeapVisit: Infinity }),
    );
    expect(walk.strategy).toBe('walk');
    // 400,000 expected of 1,000,000: the walk reaches the cap within about 25,000 entries.
    const dense = jointPlanner({
      cell: 600_000,
      cellAgent: 500_000,
      cellToken: [480_000],
      agentLabeled: 600_000,
      agentToken: [480_000],
      siteToken: [640_000],
    });
    expect((await dense.planner.planCount('s', stacked, 5, noCells())).strategy).toBe('joint');
    expect((await dense.planner.planCount('s', stacked, 500_000, noCells())).strategy).toBe('walk');
  });

  it("reads the cell index's entries of C with the agent, counted exactly by the figures", async () => {
    const { planner, reads } = jointPlanner(SPARSE);
    const stacked = filter({ agentId: 'agt_a', channel: 'hosted', labelsAll: [UNRESOLVED] });
    // The site's term counts know nothing of the agent (0 rows): the figures' 20,000 count.
    expect(await planner.planCount('s', stacked, 10_000, tuned())).toMatchObject({
      strategy: 'cells',
      entries: 20_000,
      joint: { lower: 0, upper: 20_000 },
    });
    expect(reads.joint).toBe(1);
    // More entries than the bound: the figures' own choice.
    expect((await planner.planCount('s', stacked, 10_000, tuned({ cellsCount: 19_999 }))).strategy).toBe(
      'gin',
    );
  });

  it("takes a problem token's postings when the figures do not settle the count", async () => {
    const { planner } = jointPlanner({
      cell: 500_000,
      cellToken: [200_000, 40_000],
      siteToken: [400_000, 96_000],
    });
    const plan = await planner.planCount(
      's',
      filter({ channel: 'web', labelsAll: [RESOLVED, FRUSTRATED] }),
      10_000,
      noCells(),
    );
    expect(plan).toMatchObject({ strategy: 'postings', driver: `t:${FRUSTRATED}` });
  });

  it('goes on with the sample when the figures cannot be read', async () => {
    const { planner, reads } = jointPlanner({ cell: 0, cellToken: [], siteToken: [], fail: true });
    const plan = await planner.planCount(
      's',
      filter({ channel: 'web', labelsAll: [RESOLVED, UNRESOLVED] }),
      10_000,
      noCells(),
    );
    expect(plan.strategy).toBe('sample');
    expect(reads.joint).toBe(1);
  });

  it('prices a walk to the cap against the GIN count of the expected matches', () => {
    const t = tuned({ walkRowsPerHeapVisit: 30, postingsPerHeapVisit: 250 });
    const at = (expected: number) => ({ lower: 0, upper: 1_000_000, expected });
    // 5,000 expected: the walk reads 1,000,000 entries (33,333 visits' worth), the GIN count 5,000 visits.
    expect(jointCountStrategy(at(5_000), 1_000_000, 100_000, 10_000, t)).toBe('gin');
    // 400,000 expected: the walk reads 25,000 entries (834), the GIN count 10,001 visits.
    expect(jointCountStrategy(at(400_000), 1_000_000, 100_000, 10_000, t)).toBe('walk');
  });
});
