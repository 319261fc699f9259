import { describe, expect, it } from '@jest/globals';
import { emptyFilter } from '../search/listing/conversation-filter';
import { parseExportFilters } from '../exports/dto/export-request';
import type { AlertRecord } from './alert.records';
import { facetOf, planEvaluation, readFacet } from './evaluation-plan';

const filter = (raw: Record<string, unknown>) => parseExportFilters(raw);

let n = 0;
const alert = (over: Partial<AlertRecord>): AlertRecord => ({
  id: `alrt_${n++}`,
  organizationId: 'org_1',
  siteId: 'site_1',
  name: 'a',
  viewId: null,
  filter: emptyFilter(),
  metric: 'count',
  score: null,
  window: '1h',
  comparison: 'above',
  threshold: 1,
  minConversations: 20,
  enabled: true,
  state: 'ok',
  value: null,
  evaluatedAt: null,
  lastTransitionAt: null,
  version: 1,
  createdAt: new Date(),
  updatedAt: new Date(),
  ...over,
});

const now = new Date('2026-11-27T12:34:56.789Z');

describe('facetOf: a filter of one facet condition besides its window is one value of that facet', () => {
  it('channel, language, agentId, labelStatus, feedback and labels.all with one token', () => {
    expect(facetOf(filter({ channel: 'web' }))).toEqual({ facet: 'channel', value: 'web' });
    expect(facetOf(filter({ language: 'fr' }))).toEqual({ facet: 'language', value: 'fr' });
    expect(facetOf(filter({ agentId: 'agt_TestAgent0001' }))).toEqual({
      facet: 'agentId',
      value: 'agt_TestAgent0001',
    });
    expect(facetOf(filter({ labelStatus: 'failed' }))).toEqual({ facet: 'labelStatus', value: 'failed' });
    expect(facetOf(filter({ feedback: 'negative' }))).toEqual({ facet: 'feedback', value: 'negative' });
    expect(facetOf(filter({ 'labels.all': ['resolution:unresolved'] }))).toEqual({
      facet: 'labels',
      value: 'resolution:unresolved',
    });
    expect(facetOf({ ...filter({ channel: 'web' }), from: '2026-11-27T11:00:00.000Z' })).toEqual({
      facet: 'channel',
      value: 'web',
    });
  });

  it('anything more, or another kind of condition, is not', () => {
    for (const raw of [
      {},
      { channel: 'web', language: 'fr' },
      { agentId: 'agt_TestAgent0001', channel: 'web' },
      { channel: 'web', keywords: ['order'] },
      { 'labels.all': ['resolution:unresolved', 'human_requested:true'] },
      { 'labels.all': ['resolution:unresolved'], 'labels.none': ['human_requested:true'] },
      { 'labels.any': ['resolution:unresolved|resolution:abandoned'] },
      { 'quality.max': 0.4 },
      { labelStatus: 'labeled', 'quality.max': 0.4 },
      { keywords: ['order'] },
    ])
      expect({ raw, facet: facetOf(filter(raw)) }).toEqual({ raw, facet: undefined });
  });
});

describe('planEvaluation: one request per site, filter and window; facet filters of count and share alerts read from the whole window’s request', () => {
  it('shares requests, reads facets only for alerts needing a total alone', () => {
    const alerts = [
      alert({ filter: filter({ channel: 'web' }), metric: 'count' }),
      alert({ filter: filter({ channel: 'web' }), metric: 'share' }),
      alert({ filter: filter({ channel: 'hosted' }), metric: 'count', window: '24h' }),
      alert({ filter: filter({ language: 'fr' }), metric: 'mean', score: 'quality' }),
      alert({ filter: filter({ language: 'fr' }), metric: 'count' }),
      alert({ filter: filter({ keywords: ['order'] }), metric: 'count' }),
      alert({ filter: filter({ channel: 'web' }), metric: 'count', siteId: 'site_2' }),
    ];
    const plan = planEvaluation(alerts, now, true);
    const requested = plan.groups.filter((g) => !g.readFrom);
    const describe = (g: (typeof plan.groups)[number]) => ({
      site: g.siteId,
      from: g.filter.from,
      channel: g.filter.channel,
      language: g.filter.language,
      keywords: g.filter.keywords,
      facets: [...g.facets].sort(),
      scores: [...g.scores],
    });
    const hourAgo = '2026-11-27T11:34:56.789Z';
    const dayAgo = '2026-11-26T12:34:56.789Z';
    const whole = { channel: undefined, language: undefined, keywords: [] };
    expect(requested.map(describe)).toEqual([
      { site: 'site_1', from: hourAgo, ...whole, facets: ['channel'], scores: [] },
      // fr has a mean alert: requested for its scores, and its count alert shares that request.
      { site: 'site_1', from: hourAgo, ...whole, language: 'fr', facets: [], scores: ['quality'] },
      { site: 'site_1', from: hourAgo, ...whole, keywords: ['order'], facets: [], scores: [] },
      { site: 'site_1', from: dayAgo, ...whole, facets: ['channel'], scores: [] },
      { site: 'site_2', from: hourAgo, ...whole, facets: ['channel'], scores: [] },
    ]);
    const [webCount, webShare, hosted, frMean, frCount, keyword, other] = plan.alerts;
    expect(webCount.matching).toBe(webShare.matching);
    expect(webCount.matching.readFrom).toEqual({ of: webShare.all, facet: 'channel', value: 'web' });
    expect(hosted.matching.readFrom?.value).toBe('hosted');
    expect(frCount.matching).toBe(frMean.matching);
    expect(frCount.matching.readFrom).toBeUndefined();
    expect(keyword.matching.readFrom).toBeUndefined();
    expect(other.matching.readFrom?.of.siteId).toBe('site_2');
  });

  it('without viaFacets every filter is requested', () => {
    const plan = planEvaluation(
      [alert({ filter: filter({ channel: 'web' }) }), alert({ filter: filter({ channel: 'hosted' }) })],
      now,
      false,
    );
    expect(plan.groups.map((g) => [g.filter.channel, g.facets.size, g.readFrom])).toEqual([
      ['web', 0, undefined],
      ['hosted', 0, undefined],
    ]);
  });
});

describe('readFacet: a listed value’s count; 0 when unlisted and nothing is in other; unknown otherwise', () => {
  const answer = (values: Array<{ value: string; count: number }>, other: number) => ({
    total: 10,
    asOf: now,
    facets: { channel: { values, other } },
  });
  it('reads the three cases', () => {
    expect(readFacet(answer([{ value: 'web', count: 7 }], 0), 'channel', 'web')).toBe(7);
    expect(readFacet(answer([{ value: 'web', count: 7 }], 0), 'channel', 'hosted')).toBe(0);
    expect(readFacet(answer([{ value: 'web', count: 7 }], 3), 'channel', 'hosted')).toBeUndefined();
    expect(readFacet({ total: 1, asOf: now }, 'channel', 'web')).toBeUndefined();
  });
});

describe('planEvaluation of a conversion alert: the matching conversations and those of them that converted', () => {
  it('requests the filter and the filter with converted=true; none when the filter has converted=false', () => {
    const plan = planEvaluation(
      [
        alert({ filter: filter({ channel: 'web' }), metric: 'conversion', threshold: 0.1 }),
        alert({
          siteId: 'site_2',
          filter: filter({ converted: false }),
          metric: 'conversion',
          threshold: 0.1,
        }),
      ],
      now,
      true,
    );
    const [web, unconverted] = plan.alerts;
    expect(web.converted?.filter).toMatchObject({ channel: 'web', converted: true });
    expect(web.matching.filter).toMatchObject({ channel: 'web' });
    expect(web.matching.filter.converted).toBeUndefined();
    expect(unconverted.converted).toBeUndefined();
  });
});
