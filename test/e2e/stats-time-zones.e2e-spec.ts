import { beforeAll, describe, expect, it } from '@jest/globals';
import { PostgresConversationStats } from '../../src/search/stats/postgres/postgres-conversation-stats';
import { StatsRollupCompactor } from '../../src/search/stats/postgres/stats-rollup-compactor';
import type { ConversationStats } from '../../src/search/stats/conversation-stats';
import { parseStatsRequest } from '../../src/stats/dto/stats-request';
import { label, labeledOutcome, recordConversation } from '../factories/conversations';
import { createOrganization, Org } from '../factories/organizations';
import { postgresAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';
import { roundMeans } from '../support/round-means';

/*
 * Series in zones whose offset is not a whole hour (docs/statistics.md, "Series in every zone"):
 * the rollup plan sums the hourly rows of the hours holding no bucket edge and the quarter-hour
 * rows of the hours holding one. Its answers must equal the scan's and a recount of the rows,
 * around bucket edges at :15 / :30 / :45 and across DST changes, after relabeling, moved
 * creation times and deletes, before and after the appended rollup rows are folded.
 */

const MINUTE = 60_000;

/**
 * Bucket edges the requests below cut at (UTC instants of local midnights / hours), each with
 * conversations placed just before, on and after it and on the quarter hours around it.
 */
const EDGES = [
  '2026-09-30T18:30:00Z', // Asia/Kolkata midnight, Oct 1 (+05:30)
  '2026-10-01T18:15:00Z', // Asia/Kathmandu midnight, Oct 2 (+05:45)
  '2026-10-03T14:30:00Z', // Australia/Adelaide midnight, Oct 4 (+09:30), the day DST starts at 02:00
  '2026-10-04T13:30:00Z', // Australia/Adelaide midnight, Oct 5 (+10:30 since the change)
  '2026-10-03T16:30:00Z', // Australia/Adelaide 02:00 ACST = 03:00 ACDT: the change itself
  '2026-11-01T02:30:00Z', // America/St_Johns midnight, Nov 1 (−02:30), the day DST ends at 02:00
  '2026-11-01T04:30:00Z', // America/St_Johns 02:00 NDT → 01:00 NST: the change itself
  '2026-11-02T03:30:00Z', // America/St_Johns midnight, Nov 2 (−03:30)
];
const AROUND = [-61, -16, -15, -1, 0, 1, 14, 15, 29, 31, 44, 46];

const REQUESTS: Array<Record<string, string | string[]>> = [
  {
    timezone: 'Asia/Kolkata',
    interval: 'day',
    from: '2026-09-28T00:00:00+05:30',
    to: '2026-11-05T00:00:00Z',
  },
  { timezone: 'Asia/Kolkata', interval: 'hour', from: '2026-09-30T00:00:00Z', to: '2026-10-02T00:00:00Z' },
  { timezone: 'Asia/Kathmandu', interval: 'day', from: '2026-09-28T00:00:00Z', to: '2026-11-05T00:00:00Z' },
  { timezone: 'Asia/Kathmandu', interval: 'week', from: '2026-09-01T00:00:00Z' },
  {
    timezone: 'Australia/Adelaide',
    interval: 'day',
    from: '2026-10-01T00:00:00Z',
    to: '2026-10-08T00:00:00Z',
  },
  {
    timezone: 'Australia/Adelaide',
    interval: 'hour',
    from: '2026-10-03T00:00:00Z',
    to: '2026-10-04T12:00:00Z',
  },
  { timezone: 'Australia/Adelaide', interval: 'month', from: '2026-01-01T00:00:00Z' },
  { timezone: 'America/St_Johns', interval: 'day', from: '2026-10-30T00:00:00Z', to: '2026-11-04T00:00:00Z' },
  {
    timezone: 'America/St_Johns',
    interval: 'hour',
    from: '2026-10-31T00:00:00Z',
    to: '2026-11-02T00:00:00Z',
  },
  { timezone: 'UTC', interval: 'day', from: '2026-09-28T00:00:00Z', to: '2026-11-05T00:00:00Z' },
];

describe('statistics series in zones with quarter- and half-hour offsets (quarter-hour rollup)', () => {
  let t: TestApp;
  let engine: PostgresConversationStats;
  let org: Org;
  const ids: string[] = [];
  postgresAppPerSuite((app) => {
    t = app;
    engine = app.app.get(PostgresConversationStats);
  }, 'stats-time-zones:');

  beforeAll(async () => {
    org = await createOrganization(t.app);
    let i = 0;
    for (const edge of EDGES)
      for (const minutes of AROUND) {
        const createdAt = new Date(Date.parse(edge) + minutes * MINUTE).toISOString();
        const { id } = await recordConversation(t, org, { createdAt, channel: i % 3 ? 'web' : 'hosted' });
        ids.push(id);
        // Two in three labeled, with scores on and off the 0.01 grid.
        if (i % 3 !== 2)
          await label(
            t.app,
            id,
            labeledOutcome({
              scores: { quality: (i % 10) / 10 + 0.0123, service: 0.5, trust: i % 2 ? 1 : null },
            }),
          );
        i++;
      }
  }, 120_000);

  async function answer(
    query: Record<string, string | string[]>,
    useRollups: boolean,
  ): Promise<{ result: ConversationStats; plan: Record<string, unknown> }> {
    const parsed = parseStatsRequest(
      { ...query, facets: 'channel', scores: ['quality', 'trust'] },
      new Date(),
    );
    const { result, plan } = await engine.statsWithPlan(org.site.id, parsed, { useRollups });
    return { result, plan: plan as unknown as Record<string, unknown> };
  }

  /** Each bucket's count from the rows themselves: createdAt in [start, next start). */
  async function recount(result: ConversationStats, from: string, to?: string): Promise<number[]> {
    const rows = (await t.db.query(`SELECT created_at FROM conversations WHERE site_id = $1`, [
      org.site.id,
    ])) as Array<{ created_at: Date }>;
    const series = result.series!;
    return series.map((b, k) => {
      const start = Math.max(Date.parse(b.start), Date.parse(from));
      const end = k + 1 < series.length ? Date.parse(series[k + 1].start) : Infinity;
      const limit = to !== undefined ? Math.min(end, Date.parse(to)) : end;
      return rows.filter((r) => r.created_at.getTime() >= start && r.created_at.getTime() < limit).length;
    });
  }

  async function expectExact(): Promise<void> {
    for (const query of REQUESTS) {
      const viaRollups = await answer(query, true);
      const viaScan = await answer(query, false);
      const expected = query.timezone === 'UTC' ? 'hourly' : 'quarter';
      expect({ query, series: viaRollups.plan.series }).toEqual({ query, series: expected });
      expect(viaScan.plan.strategy).toBe('scan');
      const { asOf: _a, ...rolled } = viaRollups.result;
      const { asOf: _b, ...scanned } = viaScan.result;
      expect({ query, answer: roundMeans(rolled) }).toEqual({ query, answer: roundMeans(scanned) });
      // Buckets up to `now` only when there is no `to`: the last bucket may end after it.
      const counts = viaRollups.result.series!.map((b) => b.count);
      expect({ query, counts }).toEqual({
        query,
        counts: await recount(viaRollups.result, query.from as string, query.to as string | undefined),
      });
      expect(counts.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    }
  }

  /** Quarter rows (summed per key) that differ from a recount of the conversations. */
  async function drift(): Promise<unknown[]> {
    return t.db.query(
      `SELECT site_id, quarter FROM (
         SELECT site_id, quarter, sum(n) AS n, sum(labeled) AS l, sum(quality_n) AS qn, sum(quality_sum) AS qs,
           sum(trust_n) AS tn, sum(trust_sum) AS ts
         FROM conversation_stats_quarter WHERE site_id = $1 GROUP BY 1, 2 HAVING sum(n) <> 0 OR sum(quality_n) <> 0) q
       FULL JOIN (
         SELECT site_id, date_trunc('hour', created_at, 'UTC')
             + floor(extract(minute FROM created_at AT TIME ZONE 'UTC') / 15) * interval '15 minutes' AS quarter,
           count(*) AS n, count(*) FILTER (WHERE label_status = 'labeled') AS l, count(score_quality) AS qn,
           coalesce(sum(score_quality::numeric), 0) AS qs, count(score_trust) AS tn, coalesce(sum(score_trust::numeric), 0) AS ts
         FROM conversations WHERE site_id = $1 GROUP BY 1, 2) c USING (site_id, quarter)
       WHERE coalesce(q.n, 0) <> coalesce(c.n, 0) OR coalesce(q.l, 0) <> coalesce(c.l, 0)
         OR coalesce(q.qn, 0) <> coalesce(c.qn, 0) OR coalesce(q.qs, 0) <> coalesce(c.qs, 0)
         OR coalesce(q.tn, 0) <> coalesce(c.tn, 0) OR coalesce(q.ts, 0) <> coalesce(c.ts, 0)`,
      [org.site.id],
    );
  }

  it('the rollup plan (hourly and quarter-hour rows) equals the scan and a recount in every zone, across DST changes', async () => {
    expect(await drift()).toEqual([]);
    await expectExact();
  }, 60_000);

  it('a partial UTC day mostly inside the window is read whole from the rollups, less a scan of its part outside: the same answer as the scan', async () => {
    // St John's midnight of Nov 1 is 02:30 UTC: 21.5 hours of that UTC day are in the window, and
    // conversations (with scores) sit in the 2.5 hours before it. Adelaide's midnight of Oct 5 is
    // 13:30 UTC the day before: the window ends 13.5 hours into that day, conversations after it.
    // Scores lower and higher than any in the windows, outside them: never their min or max.
    for (const createdAt of ['2026-11-01T01:00:00Z', '2026-10-04T20:00:00Z']) {
      const { id } = await recordConversation(t, org, { createdAt, channel: 'web' });
      await label(t.app, id, labeledOutcome({ scores: { quality: 0.0001, service: 0.5, trust: 0.9999 } }));
    }
    const requests: Array<Record<string, string>> = [
      {
        timezone: 'America/St_Johns',
        interval: 'day',
        from: '2026-11-01T00:00:00-02:30',
        to: '2026-11-05T00:00:00Z',
      },
      {
        timezone: 'Australia/Adelaide',
        interval: 'day',
        from: '2026-09-28T00:00:00Z',
        to: '2026-10-05T00:00:00+10:30',
      },
      { timezone: 'America/St_Johns', from: '2026-11-01T00:00:00-02:30' },
    ];
    for (const query of requests) {
      const viaRollups = await answer(query, true);
      const viaScan = await answer(query, false);
      expect({
        query,
        strategy: viaRollups.plan.strategy,
        minus: (viaRollups.plan.minus as unknown[]).length,
      }).toEqual({ query, strategy: 'rollup+scan', minus: 1 });
      const { asOf: _a, ...rolled } = viaRollups.result;
      const { asOf: _b, ...scanned } = viaScan.result;
      expect({ query, answer: roundMeans(rolled) }).toEqual({ query, answer: roundMeans(scanned) });
    }
    // The rows outside the window weigh: the same request from the UTC midnight counts more.
    const wider = await answer({ timezone: 'America/St_Johns', from: '2026-11-01T00:00:00Z' }, true);
    const narrower = await answer(requests[2], true);
    expect(wider.result.total).toBeGreaterThan(narrower.result.total);
  }, 60_000);

  it('stays exact after relabeling, moved creation times and deletes, before and after folding', async () => {
    // Relabel with other scores, move creation times across quarter and bucket edges, delete some.
    await label(t.app, ids[1], labeledOutcome({ scores: { quality: 0.77, service: 0.1, trust: 0.2 } }));
    await t.db.query(
      `UPDATE conversations SET created_at = created_at + interval '14 minutes' WHERE id = ANY($1)`,
      [ids.filter((_, i) => i % 5 === 0)],
    );
    await t.db.query(
      `UPDATE conversations SET created_at = created_at - interval '31 minutes' WHERE id = ANY($1)`,
      [ids.filter((_, i) => i % 7 === 3)],
    );
    await t.db.query(`DELETE FROM conversations WHERE id = ANY($1)`, [ids.filter((_, i) => i % 11 === 4)]);
    const fresh = (await t.db.query(
      `SELECT count(*)::int AS n FROM conversation_stats_quarter WHERE site_id = $1 AND fresh`,
      [org.site.id],
    )) as Array<{ n: number }>;
    expect(fresh[0].n).toBeGreaterThan(0);
    expect(await drift()).toEqual([]);
    await expectExact();
    expect(await t.app.get(StatsRollupCompactor).compactSite(org.site.id)).toBe(true);
    const folded = (await t.db.query(
      `SELECT quarter FROM conversation_stats_quarter WHERE site_id = $1 GROUP BY 1 HAVING count(*) > 1 OR bool_or(fresh)`,
      [org.site.id],
    )) as unknown[];
    expect(folded).toEqual([]);
    expect(await drift()).toEqual([]);
    await expectExact();
  }, 90_000);
});
