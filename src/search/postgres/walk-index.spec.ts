import { describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { ConversationFilter, emptyFilter } from '../listing/conversation-filter';
import { ListingKnowledge } from './listing-knowledge';
import { ListingPlanner } from './listing-planner';
import { tuned } from './listing-tuning';
import type { SiteDensities } from './site-densities';
import { countingDensityCache, siteDensities } from '../../../test/support/site-densities';
import { TermWeights } from './term-weights';
import { chooseWalkIndex, WALK_INDEX_ROWS, walkFilterSql, walkIndexesFor } from './walk-index';

const filter = (part: Partial<ConversationFilter>): ConversationFilter => ({ ...emptyFilter(), ...part });

/** A site whose newest rows are pending and unrated: 80 % labeled, 10 % rated negative, 30 % positive. */
const LIVING = siteDensities(100_000, {
  'status:labeled': 80_000,
  'feedback:negative': 10_000,
  'feedback:positive': 30_000,
});

function plannerOver(densities: SiteDensities | Error = LIVING) {
  const reads = { densities: 0 };
  const dataSource = {
    query: async (sql: string) => (sql.includes('pg_class') ? [{ rows: 100_000 }] : []),
  } as unknown as DataSource;
  const cache = countingDensityCache(densities, reads);
  const knowledge = new ListingKnowledge(dataSource, cache);
  return { planner: new ListingPlanner(knowledge, new TermWeights(knowledge)), reads };
}

describe('walk indexes: a walk meets only rows the fixed status allows', () => {
  it('a label, score or review filter and labelStatus=labeled walk the labeled rows', () => {
    for (const part of [
      { labelsAll: ['resolution:unresolved'] },
      { labelsAny: [['resolution:unresolved', 'resolution:abandoned']] },
      { labelsNone: ['visitor_frustrated:true'], from: '2026-01-01T00:00:00Z' },
      { scores: { quality: { min: 0.8 } } },
      { labelStatus: 'labeled' as const },
      { language: 'de' as const, labelStatus: 'labeled' as const },
    ])
      expect(chooseWalkIndex(filter(part))).toBe('labeled');
  });

  it('a rating walks the rated rows of that kind', () => {
    expect(chooseWalkIndex(filter({ feedback: 'negative' }))).toBe('negative');
    expect(chooseWalkIndex(filter({ feedback: 'positive', channel: 'web' }))).toBe('positive');
  });

  it('every other filter walks every row', () => {
    for (const part of [
      {},
      { channel: 'web' as const },
      { language: 'de' as const },
      { agentId: 'agt_a' },
      { labelStatus: 'pending' as const },
      { keywords: ['order'] },
    ])
      expect(chooseWalkIndex(filter(part))).toBe('created');
  });

  it('a rating with a label filter walks the smaller index by the site’s exact counts', () => {
    const both = filter({ feedback: 'positive', labelsAll: ['resolution:resolved'] });
    expect(walkIndexesFor(both)).toEqual(['positive', 'labeled']);
    expect(chooseWalkIndex(both, LIVING)).toBe('positive');
    const ratedOften = siteDensities(100, {
      'status:labeled': 10,
      'feedback:positive': 90,
    });
    expect(chooseWalkIndex(both, ratedOften)).toBe('labeled');
    // Without the counts: the rating's.
    expect(chooseWalkIndex(both)).toBe('positive');
  });

  it('puts the index’s predicate, as the migration spells it, in the range of the walk form', () => {
    const sql = walkFilterSql('s', filter({ labelsAll: ['resolution:unresolved'] }), 'labeled');
    expect(sql.range).toContain(WALK_INDEX_ROWS.labeled);
    expect(WALK_INDEX_ROWS).toEqual({
      labeled: "label_status = 'labeled'",
      negative: 'feedback_negative > 0',
      positive: 'feedback_positive > 0',
    });
    // The predicate is a literal: the range's parameters are unchanged.
    expect(sql.params.values.length).toBeGreaterThanOrEqual(sql.rangeParams);
    expect(walkFilterSql('s', filter({ channel: 'web' }), 'created').range.join(' ')).not.toMatch(
      /label_status|feedback_/,
    );
  });
});

describe('ListingPlanner: the walk index of each plan that walks', () => {
  it('a window page of a label filter walks the labeled rows', async () => {
    const { planner } = plannerOver();
    const plan = await planner.planPage('s', filter({ labelsAll: ['resolution:unresolved'] }), tuned());
    expect(plan).toMatchObject({ strategy: 'window', walkIndex: 'labeled' });
  });

  it('a window page of a rating walks the rated rows; a channel every row', async () => {
    const { planner } = plannerOver();
    expect(await planner.planPage('s', filter({ feedback: 'negative' }), tuned())).toMatchObject({
      strategy: 'window',
      walkIndex: 'negative',
    });
    expect(await planner.planPage('s', filter({ channel: 'web' }), tuned())).toMatchObject({
      strategy: 'window',
      walkIndex: 'created',
    });
  });

  it('a rating and a label filter: the smaller by the counts, the rating when they cannot be read', async () => {
    const both = filter({ feedback: 'positive', labelsAll: ['resolution:resolved'] });
    expect(await plannerOver().planner.planPage('s', both, tuned())).toMatchObject({ walkIndex: 'positive' });
    expect(await plannerOver(new Error('down')).planner.planPage('s', both, tuned())).toMatchObject({
      walkIndex: 'positive',
    });
  });

  it('a sampled count of label exclusions over 30 days samples and walks the labeled rows', async () => {
    const { planner } = plannerOver();
    const exclusions = filter({
      labelsNone: ['visitor_frustrated:true'],
      labelsAll: ['resolution:resolved'],
      from: '2026-01-01T00:00:00Z',
    });
    expect(await planner.planCount('s', exclusions, 10_000, tuned({ cellsCount: 0 }))).toMatchObject({
      strategy: 'sample',
      walkIndex: 'labeled',
    });
  });

  it('an unnarrowed count walks every row', async () => {
    const { planner } = plannerOver();
    expect(
      await planner.planCount('s', filter({ from: '2026-01-01T00:00:00Z' }), 10_000, tuned()),
    ).toMatchObject({ strategy: 'walk', walkIndex: 'created' });
  });
});

describe('ListingPlanner: a window without a match seeks the newest match when matches are dense', () => {
  const counts = siteDensities(100_000, {
    'language:de': 16_000,
    'channel:web': 60_000,
    'agent:agt_rare': 900,
    'status:labeled': 80_000,
  });

  it('seeks for column filters the counts expect in two probes or more', async () => {
    const { planner } = plannerOver(counts);
    for (const part of [{ language: 'de' as const }, { channel: 'web' as const, language: 'de' as const }])
      expect(await planner.planPage('s', filter(part), tuned())).toMatchObject({
        strategy: 'window',
        seek: true,
      });
  });

  it('takes the GIN probe for sparse matches (16,000 × 0.009 = 144 < 2,000) or without the counts', async () => {
    expect(
      await plannerOver(counts).planner.planPage(
        's',
        filter({ language: 'de', agentId: 'agt_rare' }),
        tuned(),
      ),
    ).toMatchObject({ seek: false });
    expect(
      await plannerOver(new Error('down')).planner.planPage('s', filter({ language: 'de' }), tuned()),
    ).toMatchObject({ seek: false });
  });

  it('never seeks for what the cell index does not hold (keywords, scores)', async () => {
    const { planner } = plannerOver(counts);
    expect(
      await planner.planPage('s', filter({ language: 'de', scores: { quality: { min: 0.5 } } }), tuned()),
    ).toMatchObject({ seek: false });
  });
});
