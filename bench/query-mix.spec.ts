import { describe, expect, it } from '@jest/globals';
import { CONTRACT_FILTER_PARAMETERS } from '../test/factories/contract-filters';
import { buildMix, queryString } from './query-mix';

const ctx = {
  siteId: 'site_x',
  agents: ['agt_busy', 'agt_mid', 'agt_quiet'],
  newest: new Date('2026-11-21T10:30:00.000Z'),
};
const mix = buildMix(ctx);

/** The contract's filter parameters (GET /api/v1/sites/{siteId}/conversations). */
const FILTERS: readonly string[] = CONTRACT_FILTER_PARAMETERS;
/** The score bounds among them (quality, service, trust: min and max). */
const SCORES = new Set(FILTERS.filter((name) => /^(quality|service|trust)\.(min|max)$/.test(name)));

describe('the query mix covers every filter alone and in combination', () => {
  it('has at least 30 requests with distinct names', () => {
    expect(mix.length).toBeGreaterThanOrEqual(30);
    expect(new Set(mix.map((r) => r.name)).size).toBe(mix.length);
  });

  it('sends only the contract parameters', () => {
    // q, q.in and highlight: workflows-v1 §1, after contract-v1's list.
    const allowed = new Set([...FILTERS, 'q', 'q.in', 'highlight', 'limit', 'count']);
    for (const r of mix) expect(Object.keys(r.query).filter((k) => !allowed.has(k))).toEqual([]);
  });

  it('uses each filter alone (labels.none only with what narrows it, scores as one score)', () => {
    const alone = (f: string) =>
      mix.some((r) => {
        const keys = Object.keys(r.query).filter((k) => k !== 'limit' && k !== 'count');
        if (f === 'labels.none')
          return (
            keys.includes(f) &&
            keys.every((k) => ['labels.none', 'labels.all', 'labels.any', 'from', 'to'].includes(k)) &&
            keys.length === 2
          );
        if (SCORES.has(f)) return keys.includes(f) && keys.every((k) => k.split('.')[0] === f.split('.')[0]);
        return keys.length === 1 && keys[0] === f;
      });
    expect(FILTERS.filter((f) => !alone(f))).toEqual([]);
  });

  it('sends labels.none only with flag tokens ending in :true (filter rule 5)', () => {
    const none = mix.flatMap((r) => [r.query['labels.none'] ?? []].flat());
    expect(none.length).toBeGreaterThan(0);
    expect(none.filter((t) => !t.endsWith(':true'))).toEqual([]);
  });

  it('combines filters, counts and pages deep', () => {
    expect(mix.some((r) => Object.keys(r.query).filter((k) => k !== 'count').length >= 6)).toBe(true);
    expect(mix.filter((r) => r.query.count === 'true').length).toBeGreaterThanOrEqual(3);
    expect(mix.filter((r) => (r.page ?? 1) >= 20).length).toBeGreaterThanOrEqual(2);
  });

  it('puts windows deep in the past and with an offset', () => {
    const windowed = mix.filter((r) => r.query.from && r.query.to);
    expect(
      windowed.some((r) => ctx.newest.getTime() - Date.parse(String(r.query.from)) >= 59 * 86_400_000),
    ).toBe(true);
    for (const r of windowed) expect(String(r.query.from)).toMatch(/Z$|[+-]\d\d:\d\d$/);
  });
});

describe('the query mix searches transcripts (workflows-v1 §1)', () => {
  const q = mix.filter((r) => r.query.q !== undefined);

  it('has twelve q requests, named q-… (count-q-… with count=true), one with highlight=true', () => {
    expect(q).toHaveLength(12);
    expect(q.filter((r) => r.query.highlight === 'true')).toHaveLength(1);
    for (const r of q) expect(r.name).toMatch(r.query.count ? /^count-q-/ : /^q-/);
  });

  it('sends a phrase, an exclusion and OR, alone and with other filters', () => {
    const values = q.map((r) => String(r.query.q));
    expect(values.some((v) => /^"[^"]+ [^"]+"$/.test(v))).toBe(true);
    expect(values.some((v) => / -/.test(v))).toBe(true);
    expect(values.some((v) => / OR /.test(v))).toBe(true);
    expect(q.some((r) => Object.keys(r.query).length === 1)).toBe(true);
    expect(q.some((r) => Object.keys(r.query).length >= 3)).toBe(true);
  });
});

describe('query strings repeat repeated parameters', () => {
  it('sends each value of a repeated parameter as its own pair', () => {
    expect(queryString({ keywords: ['a b', 'c'], 'labels.all': 'x:true' }, { count: 'true' })).toBe(
      '?keywords=a+b&keywords=c&labels.all=x%3Atrue&count=true',
    );
  });
});
