import { describe, expect, it } from '@jest/globals';
import type { Statement } from '../../../database/sql-statement';
import { ConversationFilter, emptyFilter } from '../../listing/conversation-filter';
import type { TextQuery } from '../../text-query/text-query';
import { parseTextQuery } from '../../text-query/text-query-parser';
import { comparisonPlan, groupsRollupSql, valueCountsRollupSql } from './stats-comparison-rollups';
import type { ComparisonRollup } from './stats-plan';

const filter = (part: Partial<ConversationFilter>): ConversationFilter => ({ ...emptyFilter(), ...part });
const SPAN = { first: '2026-09-01', last: '2026-11-30' };
const readSpan = async () => [SPAN];

/** The plan for `f` with the rollups on, the site's days being SPAN. */
async function rollupPlan(f: ConversationFilter): Promise<ComparisonRollup> {
  const plan = await comparisonPlan(readSpan, 'site_a', f, { useRollups: true });
  if (plan.source !== 'rollup') throw new Error(`not a rollup plan: ${plan.why}`);
  return plan;
}

/** Every parameter a statement carries is used, and every one it uses is carried. */
function expectParametersUsed(statement: Statement): void {
  const used = new Set([...statement.text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
  expect([...used].sort((a, b) => a - b)).toEqual(statement.values.map((_, i) => i + 1));
}

describe('comparisonPlan (where the groups and percentiles are read)', () => {
  it('reads the rollups for a window alone, and the rows for anything else', async () => {
    expect((await comparisonPlan(readSpan, 'site_a', emptyFilter(), { useRollups: true })).source).toBe(
      'rollup',
    );
    for (const f of [
      filter({ channel: 'web' }),
      filter({ keywords: ['red'] }),
      filter({ text: parseTextQuery('hello') as TextQuery }),
    ])
      expect((await comparisonPlan(readSpan, 'site_a', f, { useRollups: true })).source).toBe('scan');
    // No whole UTC day inside the window: all scanned.
    const short = filter({ from: '2026-10-01T05:00:00Z', to: '2026-10-01T09:00:00Z' });
    expect((await comparisonPlan(readSpan, 'site_a', short, { useRollups: true })).source).toBe('scan');
    expect((await comparisonPlan(readSpan, 'site_a', emptyFilter(), { useRollups: false })).source).toBe(
      'scan',
    );
    const metrics = { useRollups: true, needsRows: 'commerce metrics' };
    expect((await comparisonPlan(readSpan, 'site_a', emptyFilter(), metrics)).source).toBe('scan');
  });

  it("cuts a local day's window as the dashboard does: whole UTC days rolled up, partial days scanned", async () => {
    const plan = await rollupPlan(
      filter({ from: '2026-10-01T00:00:00+02:00', to: '2026-10-08T00:00:00+02:00' }),
    );
    // The first local day starts 2 hours before its UTC day: those 2 hours scanned and added. The
    // last ends 2 hours before its UTC day ends: that UTC day read whole, less its last 2 hours.
    expect(plan.days).toEqual({ from: '2026-10-01', to: '2026-10-08' });
    expect(plan.edges).toEqual([{ from: '2026-10-01T00:00:00+02:00', to: '2026-10-01T00:00:00.000Z' }]);
    expect(plan.minus).toEqual([{ from: '2026-10-08T00:00:00+02:00', to: '2026-10-08T00:00:00.000Z' }]);
  });
});

describe('the rollup statements carry exactly the parameters they use, whatever is read', () => {
  const windows: Array<[string, ConversationFilter]> = [
    ['all time (the site rows)', emptyFilter()],
    ['most of the site (the site rows less days)', filter({ from: '2026-09-10T00:00:00Z' })],
    ['a few days (the daily rows)', filter({ from: '2026-10-01T00:00:00Z', to: '2026-10-04T00:00:00Z' })],
    ['partial days at both ends', filter({ from: '2026-10-01T03:00:00Z', to: '2026-10-04T20:00:00Z' })],
    [
      'before the first day (partial days only)',
      filter({ from: '2026-08-01T06:00:00Z', to: '2026-08-03T06:00:00Z' }),
    ],
    [
      'after the last day (nothing to read)',
      filter({ from: '2027-01-01T00:00:00Z', to: '2027-01-03T00:00:00Z' }),
    ],
  ];

  it.each(windows)('%s', async (_name, f) => {
    const plan = await rollupPlan(f);
    expectParametersUsed(groupsRollupSql('site_a', plan, 'agentVersionId', ['quality', 'trust']));
    expectParametersUsed(groupsRollupSql('site_a', plan, 'channel', []));
    expectParametersUsed(valueCountsRollupSql('site_a', plan, ['durationMs', 'messageCount', 'trust']));
  });

  it('numbers each rollup field by its index among the asked fields (durationMs counted by its bucket, field 4)', async () => {
    const plan = await rollupPlan(emptyFilter());
    const { text } = valueCountsRollupSql('site_a', plan, ['durationMs', 'messageCount', 'trust']);
    expect(text).toMatch(/CASE p\.field WHEN 4 THEN 0 WHEN 0 THEN 1 WHEN 3 THEN 2 END/);
    const { text: later } = valueCountsRollupSql('site_a', plan, ['trust', 'durationMs']);
    expect(later).toMatch(/CASE p\.field WHEN 3 THEN 0 WHEN 4 THEN 1 END/);
  });
});
