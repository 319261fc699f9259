import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  AGENT,
  getStats as stats,
  label,
  labeledOutcome,
  listConversations,
  recordConversation,
} from '../factories/conversations';
import { createOrganization, Org } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';
import { statsFaultsPerSuite } from '../factories/stats-faults';
import { seededRandom } from '../support/seeded-random';

/*
 * outcomes-v1.md §5 on the configured engine (run it with TEST_SEARCH_BACKEND=opensearch for the
 * OpenSearch engine): compare=previous, percentiles, by and baseline, and their parameter rules.
 */

type Query = Record<string, string | string[]>;

const messages = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    role: i % 2 ? 'agent' : 'shopper',
    blocks: [{ type: 'text', text: `message ${i}` }],
  }));

/** Nearest rank, as the spec words it: the smallest v with at least p % of the values ≤ v. */
function nearestRank(values: number[], p: number): number | null {
  const sorted = [...values].sort((a, b) => a - b);
  for (const v of sorted) if (sorted.filter((x) => x <= v).length * 100 >= p * sorted.length) return v;
  return null;
}

/*
 * Student's t, independently of src/stats/comparison: with x = √ν·tan θ the density's shape
 * becomes cos^(ν−1) θ, so P(T ≤ t) = ½ + ½·∫₀^atan(t/√ν) cos^(ν−1) / ∫₀^(π/2) cos^(ν−1),
 * integrated by Simpson's rule.
 */
function cosIntegral(a: number, nu: number): number {
  const steps = 20_000;
  const h = a / steps;
  let sum = 0;
  for (let i = 0; i <= steps; i++) {
    const w = i === 0 || i === steps ? 1 : i % 2 ? 4 : 2;
    sum += w * Math.cos(i * h) ** (nu - 1);
  }
  return (sum * h) / 3;
}
function tTwoSided(t: number, nu: number): number {
  return 1 - cosIntegral(Math.atan(Math.abs(t) / Math.sqrt(nu)), nu) / cosIntegral(Math.PI / 2, nu);
}
function tCritical(nu: number): number {
  let low = 0;
  let high = 100;
  for (let i = 0; i < 60; i++) {
    const mid = (low + high) / 2;
    if (tTwoSided(mid, nu) > 0.05) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}
function expectedWelch(group: number[], baseline: number[]) {
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const variance = (xs: number[]) => xs.reduce((s, x) => s + (x - mean(xs)) ** 2, 0) / (xs.length - 1);
  const a = variance(group) / group.length;
  const b = variance(baseline) / baseline.length;
  const nu = (a + b) ** 2 / (a ** 2 / (group.length - 1) + b ** 2 / (baseline.length - 1));
  const d = mean(group) - mean(baseline);
  const se = Math.sqrt(a + b);
  const t = tCritical(nu);
  return { difference: d, low: d - t * se, high: d + t * se, pValue: tTwoSided(d / se, nu) };
}

describe('comparisons on GET …/conversations/stats (outcomes-v1.md §5)', () => {
  let t: TestApp;
  testAppPerSuite((app) => (t = app), {}, { redisKeyPrefixSuffix: 'stats-comparisons:' });

  describe('parameter rules: strict lists, every fault a 400 naming its parameter', () => {
    const { fault } = statsFaultsPerSuite(() => t);

    it('compare=previous without from → 400 invalid_request naming from', () =>
      fault({ compare: 'previous' }, 'invalid_request', { parameter: 'from', code: 'required' }));
    it('compare other than previous, or given twice → 400 invalid_request naming compare', async () => {
      await fault({ compare: 'next', from: '2026-10-01T00:00:00Z' }, 'invalid_request', {
        parameter: 'compare',
      });
      await fault({ compare: ['previous', 'previous'], from: '2026-10-01T00:00:00Z' }, 'invalid_request', {
        parameter: 'compare',
        code: 'duplicate_parameter',
      });
    });
    it('compare=previous whose previous window would start before year 1 → 400 invalid_request naming from', () =>
      fault(
        { compare: 'previous', from: '0500-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z' },
        'invalid_request',
        {
          parameter: 'from',
        },
      ));
    it('percentiles: an unknown field and a repeated value → 400 invalid_request naming percentiles', async () => {
      await fault({ percentiles: 'latency' }, 'invalid_request', { parameter: 'percentiles' });
      await fault({ percentiles: ['quality', 'trust', 'quality'] }, 'invalid_request', {
        parameter: 'percentiles',
        code: 'duplicate_value',
      });
    });
    it('by is single-valued; an unknown by → 400 invalid_request naming by', async () => {
      await fault({ by: 'labels' }, 'invalid_request', { parameter: 'by', code: 'invalid_value' });
      await fault({ by: ['channel', 'language'] }, 'invalid_request', {
        parameter: 'by',
        code: 'duplicate_parameter',
      });
    });
    it('baseline without by → 400 invalid_filter naming baseline; baseline is single-valued', async () => {
      await fault({ baseline: 'web' }, 'invalid_filter', { parameter: 'baseline' });
      await fault({ by: 'channel', baseline: ['web', 'hosted'] }, 'invalid_request', {
        parameter: 'baseline',
        code: 'duplicate_parameter',
      });
    });
  });

  describe('compare=previous: data.previous over the window of equal length ending at from, and data.change', () => {
    let org: Org;
    /** The statistics of `query` with compare=previous (200). */
    /** The data of the statistics of `query` compared with the previous window (200). */
    const compared = async (query: Query) =>
      (await stats(t, org, { ...query, compare: 'previous' }).expect(200)).body.data;
    beforeAll(async () => {
      org = await createOrganization(t.app);
      // Europe/Paris leaves summer time on 25 October 2026 (03:00 CEST → 02:00 CET).
      const rows: Array<[string, string, number | null]> = [
        ['2026-10-18T23:30:00+02:00', 'web', 0.1], // before the previous local week
        ['2026-10-19T00:00:00+02:00', 'web', 0.5], // its first instant (an equal length in hours would miss it)
        ['2026-10-19T00:30:00+02:00', 'hosted', null],
        ['2026-10-22T12:00:00+02:00', 'web', 0.25],
        ['2026-10-25T23:59:59+01:00', 'hosted', 0.75], // its last instant
        ['2026-10-26T00:00:00+01:00', 'web', 1], // the current week's first
        ['2026-10-28T10:00:00+01:00', 'web', 0.5],
        ['2026-10-30T10:00:00+01:00', 'web', null],
        ['2026-11-01T23:00:00+01:00', 'hosted', 0.75],
        ['2026-11-02T00:00:00+01:00', 'web', 0], // after it
      ];
      for (const [createdAt, channel, quality] of rows) {
        const c = await recordConversation(t, org, { createdAt, channel });
        if (quality !== null)
          await label(t.app, c.id, labeledOutcome({ scores: { quality, service: 0.5, trust: 0.5 } }));
      }
    });

    it("the previous window's edges are in the request's zone, across a DST change (a local week of 169 hours)", async () => {
      const data = await compared({
        from: '2026-10-26T00:00:00+01:00',
        to: '2026-11-02T00:00:00+01:00',
        timezone: 'Europe/Paris',
        scores: 'quality',
        facets: 'channel',
      });
      expect(data.total).toBe(4);
      expect(data.previous).toMatchObject({
        from: '2026-10-19T00:00:00.000+02:00',
        to: '2026-10-26T00:00:00.000+01:00',
        total: 4,
        facets: {
          channel: {
            values: [
              { value: 'hosted', count: 2 },
              { value: 'web', count: 2 },
            ],
            other: 0,
          },
        },
      });
      expect(data.previous.scores.quality).toMatchObject({ count: 3, mean: 0.5, min: 0.25, max: 0.75 });
      expect(data.previous.series).toBeUndefined();
      expect(data.scores.quality.mean).toBeCloseTo(0.75, 12);
      expect(data.change.total).toEqual({ absolute: 0, relative: 0 });
      expect(data.change.scores.quality.absolute).toBeCloseTo(0.25, 12);
      expect(data.change.scores.quality.relative).toBeCloseTo(0.5, 12);
    });

    it('in UTC the previous window is the same number of hours; edges carry +00:00', async () => {
      const { total, previous, change } = await compared({
        from: '2026-10-26T00:00:00Z',
        to: '2026-10-29T00:00:00Z',
      });
      expect(total).toBe(1);
      expect(previous).toEqual({
        from: '2026-10-23T00:00:00.000+00:00',
        to: '2026-10-26T00:00:00.000+00:00',
        total: 2,
      });
      expect(change).toEqual({ total: { absolute: -1, relative: -0.5 } });
    });

    it('relative is null when the previous value is 0 or null; to defaults to the request time', async () => {
      const { total, previous, change } = await compared({
        from: '2026-10-26T00:00:00+01:00',
        scores: 'trust',
        channel: 'hosted',
        timezone: 'Europe/Paris',
      });
      expect(total).toBe(1);
      // The previous window ends at from and is as long as from → now: far back, holding every earlier row.
      expect(previous.to).toBe('2026-10-26T00:00:00.000+01:00');
      expect(Date.parse(previous.from)).toBeLessThan(Date.parse('2026-10-19T00:00:00+02:00'));
      expect(previous.total).toBe(2);
      expect(change.total).toEqual({ absolute: -1, relative: -0.5 });

      const none = await compared({
        from: '2026-10-23T00:00:00Z',
        to: '2026-10-24T00:00:00Z',
        scores: 'quality',
      });
      expect(none.total).toBe(0);
      expect(none.previous.total).toBe(1);
      expect(none.change).toEqual({
        total: { absolute: -1, relative: -1 },
        scores: { quality: { absolute: null, relative: null } },
      });
      const empty = await compared({
        from: '2026-10-21T00:00:00Z',
        to: '2026-10-23T00:00:00Z',
      });
      expect(empty.previous.total).toBe(0);
      expect(empty.change.total).toEqual({ absolute: 1, relative: null });
    });
  });

  describe('percentiles: nearest rank, exact (a property test against a sort of the matching values)', () => {
    let org: Org;
    beforeAll(async () => {
      org = await createOrganization(t.app);
      const next = seededRandom(52);
      for (let i = 0; i < 37; i++) {
        const c = await recordConversation(t, org, {
          createdAt: new Date(Date.UTC(2026, 9, 1, 0, 0, i * 97 + Math.floor(next() * 50))).toISOString(),
          channel: next() < 0.6 ? 'web' : 'hosted',
          messages: messages(1 + Math.floor(next() * 9)),
        });
        if (next() < 0.8) {
          const q = () => (next() < 0.15 ? null : Math.round(next() * 1000) / 1000);
          await label(t.app, c.id, labeledOutcome({ scores: { quality: q(), service: q(), trust: q() } }));
        }
      }
    });

    const FILTERS: Query[] = [
      {},
      { channel: 'web' },
      { channel: 'hosted', labelStatus: 'labeled' },
      { from: '2026-10-01T00:20:00Z' },
      { from: '2026-10-01T00:10:00Z', to: '2026-10-01T00:40:00Z' },
      { 'quality.min': '0.5' },
      { language: 'de' },
      { q: 'message 5' },
      { keywords: 'question' },
    ];

    it.each(FILTERS.map((f) => [JSON.stringify(f), f]))(
      'filter %s: every field equals the nearest rank of the sorted matching values',
      async (_name, filter) => {
        const fields = ['durationMs', 'messageCount', 'quality', 'service', 'trust'];
        const res = await stats(t, org, { ...(filter as Query), percentiles: fields }).expect(200);
        const list = await listConversations(t, org, { ...(filter as Query), limit: '100' }).expect(200);
        const items = list.body.data as Array<{
          durationMs: number;
          messageCount: number;
          labelSummary: { scores: Record<string, number | null> } | null;
        }>;
        expect(list.body.meta.nextCursor).toBeNull();
        expect(res.body.data.total).toBe(items.length);
        const valuesOf = (field: string): number[] =>
          items
            .map((c) =>
              field === 'durationMs'
                ? c.durationMs
                : field === 'messageCount'
                  ? c.messageCount
                  : (c.labelSummary?.scores[field] ?? null),
            )
            .filter((v): v is number => v !== null);
        for (const field of fields) {
          const values = valuesOf(field);
          expect([field, res.body.data.percentiles[field]]).toEqual([
            field,
            {
              p50: nearestRank(values, 50),
              p90: nearestRank(values, 90),
              p95: nearestRank(values, 95),
              p99: nearestRank(values, 99),
            },
          ]);
        }
      },
    );

    it('each p is null when no matching conversation has the field', async () => {
      const res = await stats(t, org, { percentiles: ['quality', 'messageCount'], labelStatus: 'pending' });
      expect(res.status).toBe(200);
      expect(res.body.data.percentiles.quality).toEqual({ p50: null, p90: null, p95: null, p99: null });
      expect(res.body.data.percentiles.messageCount.p50).toEqual(expect.any(Number));
    });
  });

  describe('by and baseline: groups by total, scores means, Welch against the baseline', () => {
    let org: Org;
    const v6 = [0.5, 0.625, 0.75, 0.5, 0.375, 0.625];
    const v7 = [0.75, 0.875, 0.625, 1, 0.75];
    const v8 = [0.25];
    const v5 = [0.5, 0.5, 0.5];
    const v4 = [0.25, 0.25];
    beforeAll(async () => {
      org = await createOrganization(t.app);
      const record = async (versionId: string, quality: number | null, channel = 'web') => {
        const c = await recordConversation(t, org, { agent: { ...AGENT, versionId }, channel });
        if (quality !== null)
          await label(t.app, c.id, labeledOutcome({ scores: { quality, service: 0.5, trust: null } }));
      };
      for (const q of v6) await record('agtv_Shop6', q);
      for (const q of v7) await record('agtv_Shop7', q, 'hosted');
      for (const q of v8) await record('agtv_Shop8', q);
      for (const q of v5) await record('agtv_Shop5', q);
      for (const q of v4) await record('agtv_Shop4', q);
      // Two more conversations of version 8, unlabeled: a total of 3 with one score.
      await record('agtv_Shop8', null);
      await record('agtv_Shop8', null);
    });

    it('groups: total descending, ties by value ascending, each with the means of the asked scores', async () => {
      const res = await stats(t, org, { by: 'agentVersionId', scores: ['quality', 'trust'] }).expect(200);
      const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
      expect(res.body.data.total).toBe(19);
      expect(res.body.data.groups).toEqual([
        { value: 'agtv_Shop6', total: 6, scores: { quality: mean(v6), trust: null } },
        { value: 'agtv_Shop7', total: 5, scores: { quality: mean(v7), trust: null } },
        { value: 'agtv_Shop5', total: 3, scores: { quality: mean(v5), trust: null } },
        { value: 'agtv_Shop8', total: 3, scores: { quality: 0.25, trust: null } },
        { value: 'agtv_Shop4', total: 2, scores: { quality: 0.25, trust: null } },
      ]);
      const channels = await stats(t, org, { by: 'channel' }).expect(200);
      expect(channels.body.data.groups).toEqual([
        { value: 'web', total: 14 },
        { value: 'hosted', total: 5 },
      ]);
    });

    it('vsBaseline: Welch difference, ci95 and pValue computed independently; null below 2 values; [d, d] and null p at zero variance', async () => {
      const res = await stats(t, org, {
        by: 'agentVersionId',
        baseline: 'agtv_Shop6',
        scores: ['quality', 'trust'],
      }).expect(200);
      type Group = {
        value: string;
        vsBaseline?: Record<string, { ci95: number[] } & Record<string, unknown>>;
      };
      const groups = res.body.data.groups as Group[];
      const byValue = Object.fromEntries(groups.map((g) => [g.value, g]));
      expect(byValue.agtv_Shop6.vsBaseline).toBeUndefined();
      const got = byValue.agtv_Shop7.vsBaseline!.quality;
      const want = expectedWelch(v7, v6);
      expect(got.difference).toBeCloseTo(want.difference, 12);
      expect(got.ci95[0]).toBeCloseTo(want.low, 6);
      expect(got.ci95[1]).toBeCloseTo(want.high, 6);
      expect(got.pValue).toBeCloseTo(want.pValue, 6);
      // Fewer than 2 conversations having the score (v8: one of three; trust: none anywhere).
      expect(byValue.agtv_Shop8.vsBaseline).toEqual({ quality: null, trust: null });
      expect(byValue.agtv_Shop7.vsBaseline!.trust).toBeNull();
      // v5 has variance 0; v6 does not: an ordinary Welch interval.
      const five = expectedWelch(v5, v6);
      expect(byValue.agtv_Shop5.vsBaseline!.quality.ci95[0]).toBeCloseTo(five.low, 6);

      // Baseline v5 against v4: both variances 0 → the standard error is 0.
      const flat = await stats(t, org, { by: 'agentVersionId', baseline: 'agtv_Shop5', scores: 'quality' });
      const four = (flat.body.data.groups as Group[]).find((g) => g.value === 'agtv_Shop4');
      expect(four!.vsBaseline!.quality).toEqual({ difference: -0.25, ci95: [-0.25, -0.25], pValue: null });
    });

    it('groups over scores far below the range of float8 (1e-200) answer their means, from the rollups and from the scan alike', async () => {
      const tiny = await createOrganization(t.app);
      for (const quality of [1.3356511027875488e-202, 5.48470332063271e-210, 3.1216959412214183e-253]) {
        const c = await recordConversation(t, tiny, { agent: { ...AGENT, versionId: 'agtv_Tiny' } });
        await label(t.app, c.id, labeledOutcome({ scores: { quality, service: 0.5, trust: null } }));
      }
      // Unfiltered: the group rollups; with channel=web (every conversation here): the grouped scan.
      for (const extra of [{}, { channel: 'web' }]) {
        const res = await stats(t, tiny, { by: 'agentVersionId', scores: 'quality', ...extra }).expect(200);
        expect(res.body.data.groups).toEqual([
          { value: 'agtv_Tiny', total: 3, scores: { quality: expect.any(Number) } },
        ]);
        expect(res.body.data.groups[0].scores.quality).toBeLessThan(1e-200);
      }
    });

    it('a baseline value with no matching conversation → every vsBaseline entry null', async () => {
      const res = await stats(t, org, {
        by: 'agentVersionId',
        baseline: 'agtv_Nobody',
        scores: 'quality',
      }).expect(200);
      for (const g of res.body.data.groups) expect(g.vsBaseline).toEqual({ quality: null });
      // The baseline is outside the filter: the same.
      const filtered = await stats(t, org, {
        by: 'agentVersionId',
        baseline: 'agtv_Shop7',
        channel: 'web',
        scores: 'quality',
      }).expect(200);
      for (const g of filtered.body.data.groups) expect(g.vsBaseline).toEqual({ quality: null });
    });
  });
});
