import { describe, expect, it } from '@jest/globals';
import type { Statement } from '../../../database/sql-statement';
import { KIND } from '../../../database/stats-rollups';
import { labelBit } from '../../filter-sql/conversation-filter-sql';
import { ConversationFilter, emptyFilter } from '../../listing/conversation-filter';
import type { StatsQuery } from '../conversation-stats';
import { complementCells, labelShare } from './stats-complement';
import { LabelValue, labelRuns, labelTest } from './stats-label-values';
import { DEFAULT_STATS_TUNING } from './stats-plan';
import { planStats, rollupRanges, rollupRead, seriesSource, statsPlan, statsStrategy } from './stats-planner';

const filter = (part: Partial<ConversationFilter>): ConversationFilter => ({ ...emptyFilter(), ...part });
const query = (part: Partial<ConversationFilter>, scores: StatsQuery['scores'] = []): StatsQuery => ({
  filter: filter(part),
  facets: [],
  scores,
  bins: 10,
});

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

  it('scans a transcript query (`text`) as it scans keywords, alone or beside rollup-able filters', () => {
    const text = { all: [[{ kind: 'word' as const, word: 'refund' }]], none: [], scope: 'all' as const };
    expect(statsStrategy(filter({ text }), on)).toBe('scan');
    expect(statsStrategy(filter({ text, channel: 'web' }), on)).toBe('scan');
    expect(statsStrategy(filter({ text, agentId: 'agt_a' }), on)).toBe('scan');
    expect(statsStrategy(filter({ text, from: '2026-10-01T00:00:00Z' }), on)).toBe('scan');
  });
});

describe('seriesSource (where a rollup plan reads its series)', () => {
  const at = (...iso: string[]) => iso.map((s) => new Date(s));

  it('reads the hourly rollup when every bucket edge is on a UTC hour (UTC, Paris, New York)', () => {
    expect(seriesSource(at('2026-10-24T22:00:00Z', '2026-10-25T23:00:00Z', '2026-10-26T23:00:00Z'))).toBe(
      'hourly',
    );
  });

  it('adds the quarter-hour rollup when an edge is on a quarter hour (Kolkata, Kathmandu, Adelaide, St. John’s)', () => {
    expect(seriesSource(at('2026-10-24T18:30:00Z', '2026-10-25T18:30:00Z'))).toBe('quarter');
    expect(seriesSource(at('2026-10-24T18:15:00Z', '2026-10-25T18:15:00Z'))).toBe('quarter');
    // Adelaide across its DST start: +09:30 then +10:30, both on half hours.
    expect(seriesSource(at('2026-10-03T14:30:00Z', '2026-10-04T13:30:00Z'))).toBe('quarter');
    // Hourly buckets in a zone a whole hour off with one edge on a half hour: still the quarter rows.
    expect(seriesSource(at('2026-11-01T03:00:00Z', '2026-11-01T03:30:00Z'))).toBe('quarter');
  });

  it('scans when an edge is not on a quarter hour (a historical local mean time, +05:53:20)', () => {
    expect(seriesSource(at('1900-01-01T18:06:40Z', '1900-01-02T18:06:40Z'))).toBe('scan');
  });
});

describe('rollupRanges (whole UTC days from the rollups, at most half of a partial day scanned)', () => {
  it('scans the part of a partial day inside the window when it is at most half the day', () => {
    expect(rollupRanges(filter({ from: '2026-10-24T20:00:00Z', to: '2026-10-27T09:00:00Z' }))).toEqual({
      days: { from: '2026-10-25', to: '2026-10-27' },
      edges: [
        { from: '2026-10-24T20:00:00Z', to: '2026-10-25T00:00:00.000Z' },
        { from: '2026-10-27T00:00:00.000Z', to: '2026-10-27T09:00:00Z' },
      ],
      minus: [],
    });
    expect(rollupRanges(emptyFilter())).toEqual({ days: {}, edges: [], minus: [] });
  });

  it('reads a partial day whole and subtracts the part outside the window when the window holds more than half of it', () => {
    // America/St_Johns' midnight is 02:30 UTC: 21.5 hours of the first UTC day are in the window.
    expect(rollupRanges(filter({ from: '2026-10-24T00:00:00-02:30', to: '2026-10-27T21:00:00Z' }))).toEqual({
      days: { from: '2026-10-24', to: '2026-10-28' },
      edges: [],
      minus: [
        { from: '2026-10-24T00:00:00.000Z', to: '2026-10-24T00:00:00-02:30' },
        { from: '2026-10-27T21:00:00Z', to: '2026-10-28T00:00:00.000Z' },
      ],
    });
  });

  it('exactly half a day is scanned inside the window; a window within one day is not rolled up', () => {
    expect(rollupRanges(filter({ from: '2026-10-24T12:00:00Z' }))).toEqual({
      days: { from: '2026-10-25' },
      edges: [{ from: '2026-10-24T12:00:00Z', to: '2026-10-25T00:00:00.000Z' }],
      minus: [],
    });
    expect(
      rollupRanges(filter({ from: '2026-10-24T01:00:00Z', to: '2026-10-24T23:00:00Z' })),
    ).toBeUndefined();
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

  it("reads the site's day span for a rollup, and takes the series from the hourly and quarter-hour rollups on quarter hours", async () => {
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
      strategy: 'rollup',
      series: 'quarter',
    });
    const lmt = [new Date('1900-01-01T18:06:40Z'), new Date('1900-01-02T18:06:40Z')];
    expect(await planStats(read, 's', window, lmt, DEFAULT_STATS_TUNING)).toMatchObject({ series: 'scan' });
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

  it('scans a transcript query as one statement over its matches (a set from the GIN index): never split, reading nothing to plan', async () => {
    const { read, asked } = reader(dense);
    const text = { all: [[{ kind: 'word' as const, word: 'refund' }]], none: [], scope: 'all' as const };
    const filters: Array<Partial<ConversationFilter>> = [
      { text },
      { text, channel: 'web', from: '2026-10-01T00:00:00Z' },
    ];
    for (const filter of filters) {
      const plan = await planStats(read, 's', query(filter, ['quality']), [], DEFAULT_STATS_TUNING);
      expect(plan).toMatchObject({ strategy: 'scan', access: 'walk', minMax: 'scan' });
      expect(plan).not.toHaveProperty('splitAt');
      expect(plan.why).toMatch(/transcript.*probed in the covering index/);
    }
    expect(asked).toEqual([]);
  });

  it('fetches a selective filter through an index, without reading the daily counts', async () => {
    const { read, asked } = reader(dense, [
      { kind: KIND.all, key: '', n: '1000' },
      { kind: KIND.labels, key: String(labelBit('grounded:fail')), n: '10' },
    ]);
    // With a window (label tokens alone are read by label value: the complement plan's tests).
    const rare = query({ labelsAll: ['grounded:fail'], from: '2026-10-01T00:00:00Z' }, ['quality']);
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

describe('the complement plan (a dense label filter: labeled cells minus the ones failing it)', () => {
  const counts = new Map([
    [`${KIND.all}|`, 1000],
    [`${KIND.labelStatus}|labeled`, 800],
    [`${KIND.labels}|${labelBit('safe_response:pass')}`, 790],
    [`${KIND.labels}|${labelBit('visitor_frustrated:true')}`, 96],
    [`${KIND.labels}|${labelBit('resolution:resolved')}`, 400],
  ]);

  it('applies to label tokens beside channel, language, feedback or labelStatus=labeled only, without a series', () => {
    const dense = { labelsAll: ['safe_response:pass'], labelsNone: ['visitor_frustrated:true'] };
    expect(complementCells(filter(dense), false)).toEqual({ labelStatus: 'labeled' });
    expect(complementCells(filter({ ...dense, channel: 'web', feedback: 'negative' }), false)).toEqual({
      labelStatus: 'labeled',
      channel: 'web',
      feedback: 'negative',
    });
    expect(complementCells(filter(dense), true)).toBeUndefined();
    expect(complementCells(filter({ ...dense, from: '2026-10-01T00:00:00Z' }), false)).toBeUndefined();
    expect(complementCells(filter({ ...dense, agentId: 'agt_a' }), false)).toBeUndefined();
    expect(complementCells(filter({ ...dense, keywords: ['order'] }), false)).toBeUndefined();
    expect(complementCells(filter({ ...dense, scores: { quality: { min: 0.5 } } }), false)).toBeUndefined();
    expect(complementCells(filter({ ...dense, labelStatus: 'pending' }), false)).toBeUndefined();
    expect(complementCells(filter({ channel: 'web' }), false)).toBeUndefined();
  });

  // The site's label values (kind 10): bits → labeled conversations.
  const bit = (token: string) => 1n << BigInt(labelBit(token)!);
  const pass = bit('safe_response:pass');
  const frustrated = bit('visitor_frustrated:true');
  const resolved = bit('resolution:resolved');
  const values: LabelValue[] = [
    { bits: pass, n: 300 },
    { bits: pass | resolved, n: 394 },
    { bits: pass | frustrated, n: 90 },
    { bits: frustrated, n: 10 },
    { bits: resolved, n: 6 },
  ].sort((a, b) => (a.bits < b.bits ? -1 : 1));

  it('estimates the share of labeled conversations the tokens keep, tokens taken as independent', () => {
    const share = labelShare(
      filter({ labelsAll: ['safe_response:pass'], labelsNone: ['visitor_frustrated:true'] }),
      counts,
    );
    expect(share).toBeCloseTo((790 / 800) * (1 - 96 / 800), 12);
    expect(labelShare(filter({ labelsAny: [['resolution:resolved', 'safe_response:pass']] }), counts)).toBe(
      1,
    );
    expect(labelShare(filter({ labelsAll: ['resolution:resolved'] }), counts)).toBe(0.5);
  });

  it('tests a label value against labels.all, each labels.any group and labels.none', () => {
    const test = labelTest(
      filter({
        labelsAll: ['safe_response:pass'],
        labelsAny: [['resolution:resolved', 'visitor_frustrated:true']],
        labelsNone: ['human_requested:true'],
      }),
    );
    expect(test(pass | resolved)).toBe(true);
    expect(test(pass | frustrated)).toBe(true);
    expect(test(pass)).toBe(false);
    expect(test(resolved | frustrated)).toBe(false);
    expect(test(pass | resolved | bit('human_requested:true'))).toBe(false);
  });

  it('reads the wanted values as runs of consecutive values of the site, halved by conversations', () => {
    const sorted: LabelValue[] = [1n, 2n, 3n, 5n, 8n, 9n, 12n].map((bits, i) => ({ bits, n: 10 * (i + 1) }));
    const odd = (b: bigint) => b % 2n === 1n;
    // 1 | 3, 5 | 9: 2 and 8 are present values left out, 12 too; 4 and 6, 7 are not present.
    expect(labelRuns(sorted, odd, 1_000)).toEqual({
      slices: [
        [
          { lo: '1', hi: '1' },
          { lo: '3', hi: '5' },
          { lo: '9', hi: '9' },
        ],
      ],
      rows: 10 + 30 + 40 + 60,
    });
    expect(labelRuns(sorted, odd, 100)).toEqual({
      slices: [
        [
          { lo: '1', hi: '1' },
          { lo: '3', hi: '5' },
        ],
        [{ lo: '9', hi: '9' }],
      ],
      rows: 140,
    });
    expect(labelRuns(sorted, () => false, 1)).toEqual({ slices: [[]], rows: 0 });
  });

  it('is chosen over the scan above half of the labeled conversations, exactly, and reads the failing values', async () => {
    const siteValues = values.map((v) => ({ key: v.bits.toString(), n: v.n }));
    const read = async (statement: Statement) =>
      statement.text.includes(`kind = ${KIND.labelValue}`) ? siteValues : [];
    const tuning = { ...DEFAULT_STATS_TUNING, splitScanRows: 50 };
    const dense = query({ labelsAll: ['safe_response:pass'], labelsNone: ['visitor_frustrated:true'] }, [
      'quality',
    ]);
    // Kept: pass (300) and pass|resolved (394) of 800; failing: the three other values.
    expect(await planStats(read, 's', dense, [], tuning)).toEqual({
      strategy: 'complement',
      cells: { labelStatus: 'labeled' },
      labels: {
        slices: [
          [{ lo: resolved.toString(), hi: frustrated.toString() }],
          [{ lo: (pass | frustrated).toString(), hi: (pass | frustrated).toString() }],
        ],
        rows: 106,
      },
      why: expect.any(String),
    });
    // pass|resolved and resolved: 400 of 800, not more than half: the kept values are read.
    const half = query({ labelsAll: ['resolution:resolved'] }, ['quality']);
    expect(await planStats(read, 's', half, [], tuning)).toMatchObject({
      strategy: 'scan',
      access: 'labels',
      labels: { rows: 400 },
      minMax: 'walks',
    });
    const rollupsOff = { ...DEFAULT_STATS_TUNING, useRollups: false };
    expect(await planStats(read, 's', dense, [], rollupsOff)).toMatchObject({
      strategy: 'scan',
      access: 'walk',
    });
  });

  it('walks narrow columns (fewer labeled conversations than a thirtieth of the kept ones) instead', async () => {
    const siteValues = values.map((v) => ({ key: v.bits.toString(), n: v.n }));
    // The site's counts: 800 labeled, 400 of them resolved.
    const siteCounts = [
      { kind: KIND.labelStatus, key: 'labeled', n: 800 },
      { kind: KIND.labels, key: String(labelBit('resolution:resolved')), n: 400 },
    ];
    const reading = (cell: number) => async (statement: Statement) =>
      statement.text.includes(`kind = ${KIND.labelValue}`)
        ? siteValues
        : statement.text.includes('conversation_stats_cell')
          ? [{ kind: 0, n: cell }]
          : statement.text.includes('conversation_stats_site')
            ? siteCounts
            : [];
    // 400 kept (estimated from the token's count): a cell of 13 labeled conversations is walked,
    // one of 14 read by value.
    const half = query({ labelsAll: ['resolution:resolved'], channel: 'playground' }, ['quality']);
    expect(await planStats(reading(13), 's', half, [], DEFAULT_STATS_TUNING)).toMatchObject({
      access: 'walk',
    });
    expect(await planStats(reading(14), 's', half, [], DEFAULT_STATS_TUNING)).toMatchObject({
      access: 'labels',
    });
  });
});
