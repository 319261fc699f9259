import type { DataSource } from 'typeorm';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { createDataSource } from '../../src/database/data-source';
import { PostgresConversationStats } from '../../src/search/stats/postgres/postgres-conversation-stats';
import { StatsRollupCompactor } from '../../src/search/stats/postgres/stats-rollup-compactor';
import { StatsScanHelpers } from '../../src/search/stats/postgres/stats-scan-helpers';
import { getStats as stats, label, labeledOutcome, recordConversation } from '../factories/conversations';
import { createOrganization, createSite, Org } from '../factories/organizations';
import { postgresAppPerSuite, testAppPerSuite } from '../setup/app-per-suite';
import { steerStats, withStatsPlans } from '../support/engine-steering';
import { TEST_RUN_ENV } from '../setup/test-run';
import type { TestApp } from '../setup/test-app';
import { statsFaultsPerSuite } from '../factories/stats-faults';
import { roundMeans } from '../support/round-means';

type Query = Record<string, string | string[]>;

const rated = (rating: 'positive' | 'negative') => [
  { role: 'shopper', blocks: [{ type: 'text', text: 'Is it in stock?' }] },
  { role: 'agent', rating, blocks: [{ type: 'text', text: 'Yes.' }] },
];

describe('GET /api/v1/sites/{siteId}/conversations/stats', () => {
  let t: TestApp;
  /** The Postgres engine's plans are under test where `engine` is read: those requests go to `pg`. */
  let pg: TestApp;
  let engine: PostgresConversationStats;
  testAppPerSuite((app) => (t = app), {}, { redisKeyPrefixSuffix: 'stats-endpoint:' });
  postgresAppPerSuite((app) => {
    pg = app;
    engine = app.app.get(PostgresConversationStats);
  }, 'stats-endpoint:');

  describe('the route: `stats` reaches the statistics, not the conversation route', () => {
    it('answers 200 {data: {total}, meta: {asOf}} for an empty site', async () => {
      const org = await createOrganization(t.app);
      const before = Date.now();
      const res = await stats(t, org).expect(200);
      expect(res.body).toEqual({ data: { total: 0 }, meta: { asOf: expect.any(String) } });
      const asOf = Date.parse(res.body.meta.asOf);
      expect(asOf).toBeGreaterThanOrEqual(before - 1000);
      expect(asOf).toBeLessThanOrEqual(Date.now() + 1000);
    });

    it('a deleted site gives 404 not_found', async () => {
      const org = await createOrganization(t.app);
      const other = await createSite(t.app, org.organization.id);
      await recordConversation(t, org, {}, other.id);
      expect((await stats(t, org, {}, other.id).expect(200)).body.data.total).toBe(1);
      await t.http().delete(`/api/v1/sites/${other.id}`).set(org.auth).expect(204);
      const res = await stats(t, org, {}, other.id).expect(404);
      expect(res.body.code).toBe('not_found');
    });

    it('a site of another organization gives 404 not_found, as everywhere', async () => {
      const org = await createOrganization(t.app);
      const other = await createOrganization(t.app);
      const res = await stats(t, org, {}, other.site.id).expect(404);
      expect(res.body.code).toBe('not_found');
    });
  });

  describe('parameters: every fault is a 400 naming the parameter', () => {
    const { org, fault } = statsFaultsPerSuite(() => t);

    it('limit, cursor and count are not parameters here (unknown_parameter)', async () => {
      for (const name of ['limit', 'cursor', 'count'])
        await fault({ [name]: '1' }, 'invalid_request', { code: 'unknown_parameter', parameter: name });
      await fault({ colour: 'red' }, 'invalid_request', { code: 'unknown_parameter', parameter: 'colour' });
    });

    it('facets, scores, bins, interval and timezone refuse values outside their sets', async () => {
      await fault({ facets: 'title' }, 'invalid_request', { code: 'invalid_value', parameter: 'facets' });
      await fault({ scores: 'speed' }, 'invalid_request', { code: 'invalid_value', parameter: 'scores' });
      for (const bins of ['0', '101', '2.5', 'ten'])
        await fault({ bins }, 'invalid_request', { code: 'invalid_value', parameter: 'bins' });
      await fault({ bins: ['5', '6'] }, 'invalid_request', {
        code: 'duplicate_parameter',
        parameter: 'bins',
      });
      await fault({ interval: 'year', from: '2026-01-01T00:00:00Z' }, 'invalid_request', {
        code: 'invalid_value',
        parameter: 'interval',
      });
      await fault({ timezone: 'Mars/Olympus' }, 'invalid_request', {
        code: 'invalid_value',
        parameter: 'timezone',
      });
      await fault({ timezone: '+01:00' }, 'invalid_request', {
        code: 'invalid_value',
        parameter: 'timezone',
      });
    });

    it('interval without from names from', async () => {
      await fault({ interval: 'day' }, 'invalid_request', { parameter: 'from' });
    });

    it('more than 1,000 buckets names interval', async () => {
      await fault(
        { interval: 'hour', from: '2026-01-01T00:00:00Z', to: '2026-03-01T00:00:00Z' },
        'invalid_request',
        { parameter: 'interval' },
      );
      // 1,000 hours exactly is allowed.
      await stats(t, org(), {
        interval: 'hour',
        from: '2026-01-01T00:00:00Z',
        to: '2026-02-11T16:00:00Z',
      }).expect(200);
    });

    it("the listing's filter rules and codes hold (invalid_filter alone, invalid_request when mixed)", async () => {
      await fault({ 'labels.all': 'resolution:teleported' }, 'invalid_filter', {
        code: 'invalid_filter',
        parameter: 'labels.all',
      });
      await fault({ labelStatus: 'pending', 'quality.min': '0.5' }, 'invalid_filter', {
        parameter: 'labelStatus',
      });
      await fault({ 'labels.none': 'human_requested:true' }, 'invalid_filter', { parameter: 'labels.none' });
      const mixed = await fault({ 'labels.all': 'resolution:teleported', bins: '0' }, 'invalid_request', {
        parameter: 'bins',
      });
      expect(mixed.errors).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ code: 'invalid_filter', parameter: 'labels.all' }),
        ]),
      );
      await fault({ from: 'yesterday' }, 'invalid_request', { code: 'invalid_value', parameter: 'from' });
      await fault({ channel: ['web', 'hosted'] }, 'invalid_request', {
        code: 'duplicate_parameter',
        parameter: 'channel',
      });
      await fault({ 'quality.min': '2' }, 'invalid_request', { parameter: 'quality.min' });
    });
  });

  describe('the answer: exact counts under the filters', () => {
    let org: Org;
    const c: Record<string, { id: string }> = {};
    beforeAll(async () => {
      org = await createOrganization(t.app);
      const agentB = { id: 'agt_StatsAgentB', name: 'B', version: 1, versionId: 'agtv_StatsAgentB1' };
      c.a = await recordConversation(t, org, {
        createdAt: '2026-10-24T10:00:00.000Z',
        messages: rated('positive'),
      });
      c.b = await recordConversation(t, org, {
        createdAt: '2026-10-25T21:30:00.000Z',
        channel: 'hosted',
        language: 'fr',
        messages: rated('negative'),
      });
      c.c = await recordConversation(t, org, {
        createdAt: '2026-10-25T23:30:00.000Z',
        agent: agentB,
        messages: rated('positive'),
      });
      c.d = await recordConversation(t, org, { createdAt: '2026-10-27T08:00:00.000Z', channel: 'hosted' });
      await label(t.app, c.a.id, labeledOutcome({ scores: { quality: 0.29, service: 0.5, trust: 1 } }));
      await label(
        t.app,
        c.b.id,
        labeledOutcome({
          resolution: 'unresolved',
          raised: ['human_requested'],
          scores: { quality: 0.9, service: null, trust: 0.3 },
        }),
      );
      await label(t.app, c.c.id, labeledOutcome({ scores: { quality: 0.3, service: 0.7, trust: 0.6 } }));
    });

    it('total, facets (count descending, then value) and feedback kinds', async () => {
      const res = await stats(t, org, {
        facets: ['channel', 'language', 'agentId', 'labelStatus', 'feedback', 'labels'],
      }).expect(200);
      const { data } = res.body;
      expect(data.total).toBe(4);
      expect(data.facets.channel).toEqual({
        values: [
          { value: 'hosted', count: 2 },
          { value: 'web', count: 2 },
        ],
        other: 0,
      });
      expect(data.facets.language).toEqual({
        values: [
          { value: 'en', count: 3 },
          { value: 'fr', count: 1 },
        ],
        other: 0,
      });
      expect(data.facets.agentId.values).toEqual([
        { value: 'agt_TestAgent0001', count: 3 },
        { value: 'agt_StatsAgentB', count: 1 },
      ]);
      expect(data.facets.labelStatus.values).toEqual([
        { value: 'labeled', count: 3 },
        { value: 'pending', count: 1 },
      ]);
      expect(data.facets.feedback.values).toEqual([
        { value: 'positive', count: 2 },
        { value: 'negative', count: 1 },
      ]);
      const labels = Object.fromEntries(
        (data.facets.labels.values as Array<{ value: string; count: number }>).map((v) => [v.value, v.count]),
      );
      expect(labels['resolution:resolved']).toBe(2);
      expect(labels['resolution:unresolved']).toBe(1);
      expect(labels['human_requested:true']).toBe(1);
      expect(labels['human_requested:false']).toBe(2);
      expect(labels['grounded:pass']).toBe(3);
      expect(data.scores).toBeUndefined();
      expect(data.series).toBeUndefined();
    });

    it('filters narrow every part (labels.all, channel)', async () => {
      const res = await stats(t, org, { 'labels.all': 'resolution:resolved', facets: 'channel' }).expect(200);
      expect(res.body.data.total).toBe(2);
      expect(res.body.data.facets.channel.values).toEqual([{ value: 'web', count: 2 }]);
      const hosted = await stats(t, org, { channel: 'hosted', facets: 'labelStatus' }).expect(200);
      expect(hosted.body.data.total).toBe(2);
      expect(hosted.body.data.facets.labelStatus.values).toEqual([
        { value: 'labeled', count: 1 },
        { value: 'pending', count: 1 },
      ]);
    });

    it('scores: count, full-precision mean, min, max and [from, to) bins, the last including 1', async () => {
      const res = await stats(t, org, { scores: ['quality', 'service', 'trust'], bins: '10' }).expect(200);
      const { quality, service, trust } = res.body.data.scores;
      expect(quality.count).toBe(3);
      expect(quality.mean).toBeCloseTo((0.29 + 0.9 + 0.3) / 3, 12);
      expect(quality.min).toBe(0.29);
      expect(quality.max).toBe(0.9);
      expect(quality.histogram).toHaveLength(10);
      expect(quality.histogram[2]).toEqual({ from: 0.2, to: 0.3, count: 1 });
      expect(quality.histogram[3]).toEqual({ from: 0.3, to: 0.4, count: 1 });
      expect(quality.histogram[9]).toEqual({ from: 0.9, to: 1, count: 1 });
      expect(service.count).toBe(2);
      expect(trust.histogram[9].count).toBe(1); // 1 is in the last bin
      const hundred = await stats(t, org, { scores: 'quality', bins: '100' }).expect(200);
      // 0.29 is on an edge: in [0.29, 0.30), not [0.28, 0.29).
      expect(hundred.body.data.scores.quality.histogram[29].count).toBe(1);
      expect(hundred.body.data.scores.quality.histogram[28].count).toBe(0);
      const none = await stats(t, org, { scores: 'quality', labelStatus: 'pending' }).expect(200);
      expect(none.body.data.scores.quality).toMatchObject({ count: 0, mean: null, min: null, max: null });
    });

    it('series: one bucket per local day in the timezone, DST-correct, empty ones included', async () => {
      const res = await stats(t, org, {
        interval: 'day',
        timezone: 'Europe/Paris',
        from: '2026-10-24T00:00:00+02:00',
        to: '2026-10-28T00:00:00+01:00',
        scores: 'quality',
      }).expect(200);
      const series = res.body.data.series as Array<{
        start: string;
        count: number;
        labeled: number;
        scores: { quality: number | null };
      }>;
      expect(series.map((b) => b.start)).toEqual([
        '2026-10-24T00:00:00.000+02:00',
        '2026-10-25T00:00:00.000+02:00',
        '2026-10-26T00:00:00.000+01:00',
        '2026-10-27T00:00:00.000+01:00',
      ]);
      // 2026-10-25T23:30Z is already the 26th in Paris (UTC+1 after the change).
      expect(series.map((b) => b.count)).toEqual([1, 1, 1, 1]);
      expect(series.map((b) => b.labeled)).toEqual([1, 1, 1, 0]);
      expect(series[0].scores.quality).toBe(0.29);
      expect(series[3].scores.quality).toBeNull();
      const utc = await stats(t, org, {
        interval: 'day',
        from: '2026-10-24T00:00:00Z',
        to: '2026-10-28T00:00:00Z',
      }).expect(200);
      expect(utc.body.data.series.map((b: { count: number }) => b.count)).toEqual([1, 2, 0, 1]);
      expect(utc.body.data.series[0]).toEqual({
        start: '2026-10-24T00:00:00.000+00:00',
        count: 1,
        labeled: 1,
      });
    });

    it('a facet the filter fixes lists that one value with every match, and no value when nothing matches (scan plan)', async () => {
      const facets = ['channel', 'language', 'agentId', 'labelStatus'];
      // hosted + fr + quality ≥ 0.5: conversation b alone (a score filter implies labeled).
      const { result: one, plans } = await withStatsPlans(engine, {}, () =>
        stats(pg, org, { channel: 'hosted', language: 'fr', 'quality.min': '0.5', facets }).expect(200),
      );
      expect(plans.map((plan) => plan.strategy)).toEqual(['scan']);
      expect(one.body.data.total).toBe(1);
      expect(one.body.data.facets.channel.values).toEqual([{ value: 'hosted', count: 1 }]);
      expect(one.body.data.facets.language.values).toEqual([{ value: 'fr', count: 1 }]);
      expect(one.body.data.facets.agentId.values).toEqual([{ value: 'agt_TestAgent0001', count: 1 }]);
      expect(one.body.data.facets.labelStatus.values).toEqual([{ value: 'labeled', count: 1 }]);
      // Agent B's only conversation is on web: nothing matches, and no fixed value is listed.
      const { result: none, plans: nonePlans } = await withStatsPlans(engine, {}, () =>
        stats(pg, org, {
          agentId: 'agt_StatsAgentB',
          channel: 'hosted',
          'quality.min': '0.1',
          facets,
        }).expect(200),
      );
      expect(nonePlans.map((plan) => plan.strategy)).toEqual(['scan']);
      expect(none.body.data.total).toBe(0);
      for (const facet of facets) expect(none.body.data.facets[facet]).toEqual({ values: [], other: 0 });
    });

    it('the rollup plan and the scan plan give the same answer', async () => {
      const query: Query = {
        facets: ['channel', 'language', 'agentId', 'labelStatus', 'feedback', 'labels'],
        scores: ['quality', 'service', 'trust'],
        bins: '7',
        interval: 'day',
        timezone: 'Asia/Kolkata',
        from: '2026-10-24T05:00:00Z',
        to: '2026-10-27T09:00:00Z',
      };
      const viaRollups = await withStatsPlans(engine, {}, () => stats(pg, org, query).expect(200));
      expect(viaRollups.plans.map((plan) => plan.strategy)).toEqual(['rollup+scan']);
      const viaScan = await withStatsPlans(engine, { useRollups: false }, () =>
        stats(pg, org, query).expect(200),
      );
      expect(viaScan.plans.map((plan) => plan.strategy)).toEqual(['scan']);
      expect(roundMeans(viaRollups.result.body.data)).toEqual(roundMeans(viaScan.result.body.data));
    });
  });

  describe('writers of one site never wait on each other for the rollups (append-only rollups)', () => {
    it('a recording commits while another transaction that deleted a conversation of the site is still open', async () => {
      const org = await createOrganization(t.app);
      const doomed = await recordConversation(t, org);
      const open = t.db.createQueryRunner();
      await open.connect();
      await open.startTransaction();
      try {
        // Its trigger changed the site's total; with upserted rollups that row stayed locked until
        // this transaction ended, and the recording below waited for it (a 5 s statement timeout).
        await open.query(`DELETE FROM conversations WHERE id = $1`, [doomed.id]);
        const made = await recordConversation(t, org);
        expect(made.id).toMatch(/^conv_/);
        // The open transaction's delete is not committed: both conversations count.
        expect((await stats(t, org).expect(200)).body.data.total).toBe(2);
      } finally {
        await open.rollbackTransaction();
        await open.release();
      }
    });

    it('answers are the same before and after the appended rollup rows are folded', async () => {
      const org = await createOrganization(t.app);
      for (const channel of ['web', 'hosted', 'web']) await recordConversation(t, org, { channel });
      const query = { facets: ['channel', 'labelStatus'], from: '2020-01-01T00:00:00Z' };
      const before = (await stats(t, org, query).expect(200)).body.data;
      const fresh = (await t.db.query(
        `SELECT count(*)::int AS n FROM conversation_stats_site WHERE site_id = $1 AND fresh`,
        [org.site.id],
      )) as Array<{ n: number }>;
      expect(fresh[0].n).toBeGreaterThan(0);
      expect(await t.app.get(StatsRollupCompactor).compactSite(org.site.id)).toBe(true);
      const after = (await stats(t, org, query).expect(200)).body.data;
      expect(after).toEqual(before);
      expect(after.total).toBe(3);
      const rows = (await t.db.query(
        `SELECT kind, key, count(*)::int AS rows, bool_or(fresh) AS fresh FROM conversation_stats_site WHERE site_id = $1 GROUP BY 1, 2`,
        [org.site.id],
      )) as Array<{ rows: number; fresh: boolean }>;
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.every((r) => r.rows === 1 && !r.fresh)).toBe(true);
    });

    it("an unbounded fold (the seed's) outlasts the statement timeout; a bounded one does not", async () => {
      const org = await createOrganization(t.app);
      await recordConversation(t, org);
      // The pool's timeout is long enough that a loaded machine never stalls a trivial statement
      // (BEGIN, SET LOCAL) past it; the rollup table stays locked for well past it.
      const statementTimeoutMs = 1000;
      const holdMs = 2500;
      const short = await createDataSource(process.env[TEST_RUN_ENV.database]!, {
        poolSize: 2,
        timeouts: { statementTimeoutMs, connectTimeoutMs: 2000, idleInTransactionTimeoutMs: 10_000 },
      }).initialize();
      const blocker = t.db.createQueryRunner();
      await blocker.connect();
      try {
        const compactor = new StatsRollupCompactor(short);
        // A fold waiting on the locked rollup table: the lock is released once the fold has
        // settled or once holdMs have passed, whichever comes first.
        const foldWhileLocked = async (unbounded: boolean) => {
          await blocker.startTransaction();
          await blocker.query('LOCK TABLE conversation_stats_site IN ACCESS EXCLUSIVE MODE');
          const started = Date.now();
          const fold = compactor.compactSite(org.site.id, { unbounded }).then(
            (folded) => ({ folded, error: undefined, ms: Date.now() - started }),
            (error: Error) => ({ folded: undefined, error, ms: Date.now() - started }),
          );
          let held: NodeJS.Timeout | undefined;
          await Promise.race([fold, new Promise((resolve) => (held = setTimeout(resolve, holdMs)))]);
          clearTimeout(held);
          await blocker.rollbackTransaction();
          return fold;
        };
        const bounded = await foldWhileLocked(false);
        expect(bounded.error?.message).toMatch(/statement timeout/);
        const unbounded = await foldWhileLocked(true);
        expect(unbounded.error).toBeUndefined();
        expect(unbounded.folded).toBe(true);
        // It waited the whole hold, past the pool's statement timeout, and was not cancelled.
        expect(unbounded.ms).toBeGreaterThanOrEqual(holdMs - 50);
        const [{ n }] = (await t.db.query(
          `SELECT count(*)::int AS n FROM conversation_stats_site WHERE site_id = $1 AND fresh`,
          [org.site.id],
        )) as Array<{ n: number }>;
        expect(n).toBe(0);
      } finally {
        if (blocker.isTransactionActive) await blocker.rollbackTransaction();
        await blocker.release();
        await short.destroy();
      }
    });
  });

  describe("a split scan reads its second slice on the request transaction's snapshot", () => {
    it('a helper connection sees the rows of the exported snapshot, not those committed after it', async () => {
      const org = await createOrganization(t.app);
      await recordConversation(t, org);
      const helpers = new StatsScanHelpers(t.db);
      const reader = t.db.createQueryRunner();
      await reader.connect();
      await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      try {
        const [{ snapshot }] = (await reader.query(`SELECT pg_export_snapshot() AS snapshot`)) as Array<{
          snapshot: string;
        }>;
        await recordConversation(t, org);
        const count = {
          text: `SELECT count(*)::int AS n, current_setting('work_mem') AS work_mem FROM conversations WHERE site_id = $1`,
          values: [org.site.id],
        };
        const helper = await helpers.acquire();
        if (!helper) throw new Error('no helper connection');
        expect(await helpers.run(helper, snapshot, { work_mem: '3MB' }, count)).toEqual([
          { n: 1, work_mem: '3MB' },
        ]);
        expect(((await t.db.query(count.text, count.values)) as Array<{ n: number }>)[0].n).toBe(2);
      } finally {
        await reader.query('ROLLBACK');
        await reader.release();
        await helpers.end();
      }
    });
  });

  describe('a split scan needs a helper connection, and does without one', () => {
    it('acquire() answers undefined (the scan is then read whole) when the server refuses a connection', async () => {
      // A real connection attempt to a port where nothing listens: refused at once.
      const options = { ...t.db.options, url: undefined, host: '127.0.0.1', port: 1 };
      const helpers = new StatsScanHelpers({ options } as unknown as DataSource);
      try {
        expect(helpers.available()).toBe(true);
        expect(await helpers.acquire()).toBeUndefined();
      } finally {
        await helpers.end();
      }
    });
  });

  describe('a statement that takes too long is a clean 503 service_unavailable with Retry-After', () => {
    it('answers 503 within seconds while the rollups are locked, not a 500 or a hang', async () => {
      const org = await createOrganization(t.app);
      const blocker = t.db.createQueryRunner();
      await blocker.connect();
      await blocker.startTransaction();
      const steered = steerStats(engine, { statementTimeoutMs: 300 });
      try {
        await blocker.query('LOCK TABLE conversation_stats_daily IN ACCESS EXCLUSIVE MODE');
        const started = Date.now();
        const res = await stats(pg, org).expect(503);
        expect(Date.now() - started).toBeLessThan(5000);
        expect(res.body.code).toBe('service_unavailable');
        expect(res.headers['retry-after']).toMatch(/^\d+$/);
      } finally {
        steered.restore();
        await blocker.rollbackTransaction();
        await blocker.release();
      }
    });
  });
});
