import { describe, expect, it } from '@jest/globals';
import type { Statement } from '../../../database/sql-statement';
import { KIND } from '../../../database/stats-rollups';
import { labelBit } from '../../filter-sql/conversation-filter-sql';
import { ConversationFilter, emptyFilter } from '../../listing/conversation-filter';
import type { StatsQuery } from '../conversation-stats';
import {
  DEFAULT_STATS_TUNING,
  isSelective,
  planStats,
  rollupRanges,
  rollupRead,
  splitPoint,
  statsPlan,
  statsStrategy,
} from './stats-planner';

const filter = (part: Partial<ConversationFilter>): ConversationFilter => ({ ...emptyFilter(), ...part });
const query = (part: Partial<ConversationFilter>, scores: StatsQuery['scores'] = []): StatsQuery => ({
  filter: filter(part),
  facets: [],
  scores,
  bins: 10,
});
const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);

describe('statsStrategy (the plan a filter takes, from the filter alone)', () => {
  const on = { series: false, useRollups: true };

  it('sums the per-cell rollup for channel, language, labelStatus and feedback alone', () => {
    expect(statsStrategy(filter({ channel: 'web', feedback: 'negative' }), on)).toBe('cells');
    expect(statsStrategy(filter({ labelStatus: 'pending' }), on)).toBe('cells');
  });

  it('sums the per-agent rollup for an agent alone, unless a series is asked (it keeps no time)', () => {
    expect(statsStrategy(filter({ agentId: 'agt_a' }), on)).toBe('agent');
    expect(statsStrategy(filter({ agentId: 'agt_a' }), { ...on, series: true })).toBe('scan');
    expect(statsStrategy(filter({ agentId: 'agt_a', channel: 'web' }), on)).toBe('scan');
  });

  it('sums the daily rollups over a window, scanning the partial days at its ends', () => {
    expect(statsStrategy(emptyFilter(), on)).toBe('rollup');
    expect(statsStrategy(filter({ from: '2026-10-01T00:00:00Z', to: '2026-10-05T00:00:00Z' }), on)).toBe(
      'rollup',
    );
    expect(statsStrategy(filter({ from: '2026-10-01T05:00:00Z' }), on)).toBe('rollup+scan');
    // No whole UTC day inside: all scanned.
    expect(statsStrategy(filter({ from: '2026-10-01T05:00:00Z', to: '2026-10-01T09:00:00Z' }), on)).toBe(
      'scan',
    );
  });

  it('scans any other filter, and every filter with the rollups off', () => {
    expect(statsStrategy(filter({ keywords: ['order'] }), on)).toBe('scan');
    expect(statsStrategy(filter({ channel: 'web', from: '2026-10-01T00:00:00Z' }), on)).toBe('scan');
    expect(statsStrategy(filter({ scores: { quality: { min: 0.5 } } }), on)).toBe('scan');
    expect(statsStrategy(filter({ channel: 'web' }), { ...on, useRollups: false })).toBe('scan');
    expect(statsPlan(filter({ agentId: 'agt_a' }))).toBe('agent');
  });
});

describe('rollupRanges (whole UTC days from the rollups, partial days scanned)', () => {
  it('takes the whole days of the window and scans the hours before the first midnight and after the last', () => {
    expect(rollupRanges(filter({ from: '2026-10-24T05:00:00Z', to: '2026-10-27T09:00:00Z' }))).toEqual({
      days: { from: '2026-10-25', to: '2026-10-27' },
      edges: [
        { from: '2026-10-24T05:00:00Z', to: '2026-10-25T00:00:00.000Z' },
        { from: '2026-10-27T00:00:00.000Z', to: '2026-10-27T09:00:00Z' },
      ],
    });
    expect(rollupRanges(emptyFilter())).toEqual({ days: {}, edges: [] });
  });
});

describe('rollupRead (the days inside the window, or the site minus the days outside it)', () => {
  const span = { first: '2026-01-01', last: '2026-12-31' };

  it('subtracts the days outside from the site when they are fewer', () => {
    expect(rollupRead(span, { from: '2026-02-01' })).toEqual({ sum: 'site', minus: [{ to: '2026-02-01' }] });
    expect(rollupRead(span, {})).toEqual({ sum: 'site', minus: [] });
  });

  it('sums the days inside when they are fewer, and nothing for a window outside the site', () => {
    expect(rollupRead(span, { from: '2026-03-01', to: '2026-03-08' })).toEqual({
      sum: 'days',
      days: { from: '2026-03-01', to: '2026-03-08' },
    });
    expect(rollupRead(span, { from: '2027-03-01' })).toEqual({ sum: 'none' });
    expect(rollupRead({}, {})).toEqual({ sum: 'none' });
  });
});

describe('isSelective (matches through an index below 5 % of the site)', () => {
  const counts = new Map([
    [`${KIND.all}|`, 1000],
    [`${KIND.labels}|${labelBit('grounded:fail')}`, 40],
    [`${KIND.labels}|${labelBit('resolution:resolved')}`, 400],
    [`${KIND.agentId}|agt_a`, 900],
  ]);

  it('is selective for keywords, and for a token, a labels.any group or an agent held by less than 5 %', () => {
    expect(isSelective(filter({ keywords: ['order'] }))).toBe(true);
    expect(isSelective(filter({ labelsAll: ['resolution:resolved', 'grounded:fail'] }), counts)).toBe(true);
    expect(isSelective(filter({ agentId: 'agt_unknown' }), counts)).toBe(true);
  });

  it('is not for dense ones, nor without the counts', () => {
    expect(isSelective(filter({ labelsAll: ['resolution:resolved'] }), counts)).toBe(false);
    expect(isSelective(filter({ labelsAny: [['grounded:fail', 'resolution:resolved']] }), counts)).toBe(
      false,
    );
    expect(isSelective(filter({ agentId: 'agt_a' }), counts)).toBe(false);
    expect(isSelective(filter({ channel: 'web' }))).toBe(false);
  });
});

describe('splitPoint (a dense scan cut at the midnight that best halves it)', () => {
  const days = [
    { at: day('2026-10-01'), n: 30 },
    { at: day('2026-10-02'), n: 30 },
    { at: day('2026-10-03'), n: 10 },
    { at: day('2026-10-04'), n: 30 },
  ];

  it('cuts at the midnight inside the range closest to half the conversations', () => {
    expect(splitPoint(days, {}, 100)).toBe('2026-10-03T00:00:00.000Z');
    expect(splitPoint(days, { from: '2026-10-02T12:00:00Z' }, 100)).toBe('2026-10-03T00:00:00.000Z');
  });

  it('does not split below splitScanRows or without a midnight inside the range', () => {
    expect(splitPoint(days, {}, 101)).toBeUndefined();
    expect(splitPoint(days, { from: '2026-10-04T01:00:00Z' }, 1)).toBeUndefined();
  });
});

describe('planStats (reads only what the choice needs, in the request transaction)', () => {
  /** A reader of the site's rollups: the statements it was asked, and fixed answers. */
  function reader(
    dayCounts: Array<{ day: string; n: number }>,
    siteCounts: Array<Record<string, unknown>> = [],
  ) {
    const asked: string[] = [];
    const read = async (statement: Statement) => {
      asked.push(statement.text);
      if (statement.text.includes('min(day)')) return [{ first: '2026-10-01', last: '2026-10-30' }];
      if (statement.text.includes('conversation_stats_site')) return siteCounts;
      return dayCounts;
    };
    return { read, asked };
  }
  const dense = [
    { day: '2026-10-01', n: 40_000 },
    { day: '2026-10-02', n: 40_000 },
  ];

  it('reads nothing for the per-cell and per-agent rollups', async () => {
    const { read, asked } = reader(dense);
    const cells = await planStats(read, 's', query({ channel: 'web' }), [], DEFAULT_STATS_TUNING);
    expect(cells).toMatchObject({ strategy: 'cells', cells: { channel: 'web' } });
    const agent = await planStats(read, 's', query({ agentId: 'agt_a' }), [], DEFAULT_STATS_TUNING);
    expect(agent).toMatchObject({ strategy: 'agent', agentId: 'agt_a' });
    expect(asked).toEqual([]);
  });

  it("reads the site's day span for a rollup, and takes the series from the hourly rollup on UTC hours only", async () => {
    const { read } = reader(dense);
    const window = query({ from: '2026-10-05T00:00:00Z', to: '2026-10-07T00:00:00Z' });
    const hourly = [new Date('2026-10-05T00:00:00Z'), new Date('2026-10-06T00:00:00Z')];
    expect(await planStats(read, 's', window, hourly, DEFAULT_STATS_TUNING)).toMatchObject({
      strategy: 'rollup',
      read: { sum: 'days', days: { from: '2026-10-05', to: '2026-10-07' } },
      series: 'hourly',
    });
    const kolkata = [new Date('2026-10-05T18:30:00Z'), new Date('2026-10-06T18:30:00Z')];
    expect(await planStats(read, 's', window, kolkata, DEFAULT_STATS_TUNING)).toMatchObject({
      series: 'scan',
    });
  });

  it('splits a dense walk at a midnight, its scores from bounded walks', async () => {
    const { read, asked } = reader(dense);
    const labeled = query({ channel: 'web', from: '2026-10-01T00:00:00Z' }, ['quality']);
    expect(await planStats(read, 's', labeled, [], DEFAULT_STATS_TUNING)).toMatchObject({
      strategy: 'scan',
      access: 'walk',
      splitAt: '2026-10-02T00:00:00.000Z',
      minMax: 'walks',
    });
    // No site counts read without a token, labels.any group or agent to weigh.
    expect(asked.filter((text) => text.includes('conversation_stats_site'))).toEqual([]);
    const small = await planStats(read, 's', labeled, [], { ...DEFAULT_STATS_TUNING, splitScanRows: 80_001 });
    expect(small).toMatchObject({ strategy: 'scan', access: 'walk', minMax: 'scan' });
    expect(small).not.toHaveProperty('splitAt');
  });

  it('fetches a selective filter through an index, without reading the daily counts', async () => {
    const { read, asked } = reader(dense, [
      { kind: KIND.all, key: '', n: '1000' },
      { kind: KIND.labels, key: String(labelBit('grounded:fail')), n: '10' },
    ]);
    const rare = query({ labelsAll: ['grounded:fail'] }, ['quality']);
    expect(await planStats(read, 's', rare, [], DEFAULT_STATS_TUNING)).toMatchObject({
      strategy: 'scan',
      access: 'index',
      minMax: 'scan',
    });
    expect(asked).toHaveLength(1);
    const rollupsOff = { ...DEFAULT_STATS_TUNING, useRollups: false };
    expect((await planStats(read, 's', query({ channel: 'web' }), [], rollupsOff)).strategy).toBe('scan');
  });
});
