import { beforeAll, describe, expect, it } from '@jest/globals';
import { PostgresConversationStats } from '../../src/search/stats/postgres/postgres-conversation-stats';
import type { StatsTuning } from '../../src/search/stats/postgres/stats-plan';
import { parseStatsRequest } from '../../src/stats/dto/stats-request';
import { label, labeledOutcome, recordConversation } from '../factories/conversations';
import { createOrganization, Org } from '../factories/organizations';
import { postgresAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';

/*
 * Dense label filters (docs/statistics.md, "Dense label filters"): the complement plan answers
 * as the labeled conversations of the filter's columns (per-cell rollup) minus a scan of those
 * failing its label conditions (read by label value), min and max from bounded walks; a sparser
 * one is read by the label values it keeps. Their answers must equal the scan's, read whole and
 * split in two slices, for labels.all, labels.any, labels.none and a column.
 */

/** Means to 12 significant digits: the plans sum doubles in different orders (last-bit differences). */
function roundMeans(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(roundMeans);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        typeof v === 'number' && k === 'mean' ? Number(v.toPrecision(12)) : roundMeans(v),
      ]),
    );
  return value;
}

const EVERYTHING = {
  facets: ['channel', 'language', 'agentId', 'labelStatus', 'feedback', 'labels'],
  scores: ['quality', 'service', 'trust'],
};

const FILTERS: Array<Record<string, string | string[]>> = [
  { 'labels.none': 'visitor_frustrated:true', 'labels.all': 'safe_response:pass' },
  { 'labels.all': 'grounded:pass' },
  { 'labels.all': ['grounded:pass', 'safe_response:pass'], bins: '7' },
  { 'labels.any': 'safe_response:pass|resolution:resolved', bins: '100' },
  { channel: 'web', 'labels.all': 'safe_response:pass', 'labels.none': 'human_requested:true' },
  { feedback: 'positive', 'labels.none': 'human_requested:true', 'labels.all': 'grounded:pass' },
  { labelStatus: 'labeled', 'labels.any': ['grounded:pass|on_brand:pass', 'safe_response:pass'] },
];

describe('statistics of dense label filters (the complement plan)', () => {
  let t: TestApp;
  let org: Org;
  postgresAppPerSuite((app) => (t = app), 'stats-dense-labels:');
  /** The site's statistics for filter `f` with every facet and score, as run under a tuning. */
  const runOf = (f: Record<string, string | string[]>) => {
    const query = parseStatsRequest({ ...f, ...EVERYTHING }, new Date());
    return (tuning: Partial<StatsTuning>) =>
      t.app.get(PostgresConversationStats).statsWithPlan(org.site.id, query, tuning);
  };

  beforeAll(async () => {
    org = await createOrganization(t.app);
    const agentB = { id: 'agt_DenseAgentB', name: 'B', version: 1, versionId: 'agtv_DenseAgentB1' };
    for (let i = 0; i < 48; i++) {
      const { id } = await recordConversation(t, org, {
        // Four days, so a split scan has a midnight to cut at.
        createdAt: new Date(Date.parse('2026-10-20T03:00:00Z') + i * 2 * 3_600_000).toISOString(),
        channel: i % 4 === 3 ? 'hosted' : 'web',
        ...(i % 5 === 0 ? { agent: agentB } : {}),
        messages: [
          { role: 'shopper', blocks: [{ type: 'text', text: 'Is it in stock?' }] },
          {
            role: 'agent',
            rating: i % 3 ? 'positive' : 'negative',
            blocks: [{ type: 'text', text: 'Yes.' }],
          },
        ],
      });
      if (i % 8 === 7) continue; // some stay pending
      await label(
        t.app,
        id,
        labeledOutcome({
          resolution: i % 6 === 0 ? 'unresolved' : 'resolved',
          raised: [
            ...(i % 5 === 1 ? ['visitor_frustrated'] : []),
            ...(i % 7 === 2 ? ['human_requested'] : []),
          ],
          failing: [...(i % 9 === 4 ? ['grounded'] : []), ...(i % 11 === 5 ? ['safe_response'] : [])],
          scores: {
            quality: i % 10 === 3 ? null : ((i * 37) % 100) / 100 + 0.004,
            service: (i % 13) / 13,
            trust: i % 2 ? 0.25 : 1,
          },
        }),
      );
    }
  }, 120_000);

  it('answers as the scan does, read whole and in two slices, for labels.all, .any, .none and columns', async () => {
    let split = 0;
    for (const f of FILTERS) {
      const run = runOf(f);
      const scan = await run({ useRollups: false });
      expect(scan.plan.strategy).toBe('scan');
      const { asOf: _s, ...expected } = scan.result;
      expect(expected.total).toBeGreaterThan(0);
      for (const splitScanRows of [1_000_000, 1]) {
        const { result, plan } = await run({ splitScanRows });
        expect({ f, strategy: plan.strategy }).toEqual({ f, strategy: 'complement' });
        const slices = plan.strategy === 'complement' ? plan.labels.slices : [];
        // Two slices when asked and the failing values make two runs or more.
        expect({ f, slices: slices.length }).toEqual({
          f,
          slices: splitScanRows === 1 && slices.flat().length > 1 ? 2 : 1,
        });
        if (slices.length === 2) split++;
        const { asOf: _c, ...answer } = result;
        expect({ f, answer: roundMeans(answer) }).toEqual({ f, answer: roundMeans(expected) });
      }
    }
    expect(split).toBeGreaterThan(2);
  }, 60_000);

  it('reads a filter keeping half of the labeled conversations or less by its label values, as the scan does', async () => {
    const filters: Array<Record<string, string | string[]>> = [
      { 'labels.all': 'resolution:unresolved', 'labels.none': 'human_requested:true' },
      { 'labels.all': 'grounded:fail' },
      { 'labels.any': 'visitor_frustrated:true|human_requested:true', bins: '7' },
      { channel: 'hosted', 'labels.all': 'resolution:unresolved' },
      { 'labels.all': ['resolution:resolved', 'grounded:fail'] },
    ];
    let split = 0;
    for (const f of filters) {
      const run = runOf(f);
      const { asOf: _s, ...expected } = (await run({ useRollups: false })).result;
      for (const splitScanRows of [1_000_000, 1]) {
        const { result, plan } = await run({ splitScanRows });
        expect({ f, plan: plan.strategy === 'scan' && plan.access }).toEqual({ f, plan: 'labels' });
        const labels = plan.strategy === 'scan' ? plan.labels! : { slices: [] };
        // Two slices when asked and the kept values make two runs or more.
        const runs = labels.slices.flat().length;
        expect({ f, slices: labels.slices.length }).toEqual({
          f,
          slices: splitScanRows === 1 && runs > 1 ? 2 : 1,
        });
        if (labels.slices.length === 2) split++;
        const { asOf: _c, ...answer } = result;
        expect({ f, answer: roundMeans(answer) }).toEqual({ f, answer: roundMeans(expected) });
      }
    }
    expect(split).toBeGreaterThan(2);
  }, 60_000);
});
