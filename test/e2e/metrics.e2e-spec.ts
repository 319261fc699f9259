import { beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { insertConversation } from '../factories/conversation-rows';
import { createOrganization } from '../factories/organizations';
import { runImport } from '../factories/page-imports';
import { eventually } from '../setup/isolated-database';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';
import { metricSample } from '../setup/metrics-text';

async function scrape(t: TestApp): Promise<string> {
  const res = await t.http().get('/metrics');
  expect(res.status).toBe(200);
  // Prometheus's text format 0.0.4 (Express may reorder the parameters).
  expect(res.headers['content-type']).toMatch(/^text\/plain;/);
  expect(res.headers['content-type']).toContain('version=0.0.4');
  return res.text;
}

describe('GET /metrics (WORKERS=off)', () => {
  let t: TestApp;
  let org: Awaited<ReturnType<typeof createOrganization>>;
  testAppPerSuite(
    (app) => (t = app),
    { LABEL_QUIET_MINUTES: '30' },
    { ownDatabase: true, redisKeyPrefixSuffix: 'metrics:' },
  );
  beforeAll(async () => {
    org = await createOrganization(t.app);
  });

  describe('HTTP request durations by route template and status, never by raw path', () => {
    it('counts a request under its route template, with no id in any label', async () => {
      const path = `/api/v1/sites/${org.site.id}`;
      expect((await t.http().get(path).set(org.auth)).status).toBe(200);
      const text = await scrape(t);
      const labels = { method: 'GET', route: '/api/v1/sites/:siteId', status_code: '200' };
      expect(metricSample(text, 'http_request_duration_seconds_count', labels)).toBeGreaterThanOrEqual(1);
      expect(
        metricSample(text, 'http_request_duration_seconds_bucket', { ...labels, le: '+Inf' }),
      ).toBeGreaterThanOrEqual(1);
      expect(text).not.toContain(org.site.id);
    });

    it('an answer with another status is a series of its own', async () => {
      expect((await t.http().get(`/api/v1/sites/${org.site.id}`)).status).toBe(401);
      const text = await scrape(t);
      const labels = { method: 'GET', route: '/api/v1/sites/:siteId', status_code: '401' };
      expect(metricSample(text, 'http_request_duration_seconds_count', labels)).toBeGreaterThanOrEqual(1);
    });

    it('a path no route serves is counted as route="unmatched", not under its path', async () => {
      expect((await t.http().get('/no/such/path/xyz123')).status).toBe(404);
      const text = await scrape(t);
      expect(
        metricSample(text, 'http_request_duration_seconds_count', { route: 'unmatched', status_code: '404' }),
      ).toBeGreaterThanOrEqual(1);
      expect(text).not.toContain('xyz123');
    });
  });

  describe('process and event-loop metrics', () => {
    it('exposes resident memory, CPU time and the event-loop delay', async () => {
      const text = await scrape(t);
      expect(metricSample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
      expect(metricSample(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
      expect(text).toMatch(/^# TYPE nodejs_eventloop_lag_seconds gauge$/m);
      expect(metricSample(text, 'nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0);
    });
  });

  describe('labeling lag: the oldest due pending conversation', () => {
    it('is 0 with nothing due; a conversation quiet for 90 minutes (LABEL_QUIET_MINUTES=30) is due for about 60', async () => {
      const before = await scrape(t);
      expect(metricSample(before, 'labeling_due_conversations')).toBe(0);
      expect(metricSample(before, 'labeling_lag_seconds')).toBe(0);
      const site = { id: org.site.id, organizationId: org.organization.id };
      await insertConversation(t.app, site, [{ role: 'shopper', text: 'Hello?', minutesAgo: 90 }]);
      await insertConversation(t.app, site, [{ role: 'shopper', text: 'Still talking', minutesAgo: 1 }]);
      const after = await scrape(t);
      expect(metricSample(after, 'labeling_due_conversations')).toBe(1);
      const lag = metricSample(after, 'labeling_lag_seconds')!;
      expect(lag).toBeGreaterThanOrEqual(60 * 60 - 5);
      expect(lag).toBeLessThan(60 * 60 + 60);
    });
  });

  describe('page import counts, closed by outcome', () => {
    it('an import that closed is counted once under its outcome', async () => {
      const before = await scrape(t);
      const closed = await runImport(t.app, org.site, org.organization.id);
      const after = await scrape(t);
      const outcome = closed.outcome!;
      expect(metricSample(after, 'page_imports_closed', { outcome })).toBe(
        (metricSample(before, 'page_imports_closed', { outcome }) ?? 0) + 1,
      );
      expect(metricSample(after, 'page_imports_running')).toBe(0);
    });
  });

  describe('export counts, by state', () => {
    it('reports every export state, and a new export is counted under one of them', async () => {
      const states = ['queued', 'running', 'completed', 'failed', 'expired'];
      const total = (text: string) =>
        states.reduce((n, state) => n + metricSample(text, 'exports', { state })!, 0);
      const before = await scrape(t);
      for (const state of states)
        expect(metricSample(before, 'exports', { state })).toBeGreaterThanOrEqual(0);
      await t
        .http()
        .post(`/api/v1/sites/${org.site.id}/conversations/exports`)
        .set(org.auth)
        .send({ format: 'ndjson', filters: {} })
        .expect(202);
      expect(total(await scrape(t))).toBe(total(before) + 1);
    });
  });

  describe('queue depths', () => {
    it('reports every state of the page-imports queue', async () => {
      const text = await scrape(t);
      for (const state of ['waiting', 'active', 'delayed', 'failed', 'paused'])
        expect(metricSample(text, 'queue_jobs', { queue: 'page-imports', state })).toBeGreaterThanOrEqual(0);
    });
  });

  describe('the search mirror gauges keep their names and meaning', () => {
    it('search_outbox_pending counts outbox rows; the other four are present', async () => {
      const [{ n }] = await t.app.get(DataSource).query(`SELECT count(*)::int AS n FROM search_outbox`);
      const text = await scrape(t);
      expect(metricSample(text, 'search_outbox_pending')).toBe(n);
      expect(metricSample(text, 'search_outbox_failing')).toBe(0);
      expect(metricSample(text, 'search_outbox_oldest_age_seconds')).toBeGreaterThanOrEqual(0);
      expect(metricSample(text, 'search_mirror_configured')).toBe(t.config.search.opensearchUrl ? 1 : 0);
      expect(metricSample(text, 'search_mirror_enabled')).toBeDefined();
    });
  });

  describe('a failing source does not fail the scrape', () => {
    it('with page_imports locked, its gauges are NaN after the 2 s timeout, the error is counted, the rest answers', async () => {
      const locker = new Client({ connectionString: t.config.databaseUrl });
      await locker.connect();
      try {
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE page_imports IN ACCESS EXCLUSIVE MODE');
        const started = Date.now();
        const text = await scrape(t);
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(metricSample(text, 'page_imports_running')).toBeNaN();
        expect(metricSample(text, 'page_imports_closed', { outcome: 'completed' })).toBeUndefined();
        expect(
          metricSample(text, 'metrics_collect_errors_total', { source: 'page_imports' }),
        ).toBeGreaterThanOrEqual(1);
        expect(metricSample(text, 'labeling_lag_seconds')).not.toBeNaN();
        expect(metricSample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
      } finally {
        await locker.query('ROLLBACK');
        await locker.end();
      }
      expect(metricSample(await scrape(t), 'page_imports_running')).toBe(0);
    });
  });
});

describe('job outcomes (WORKERS=on)', () => {
  let t: TestApp;
  testAppPerSuite(
    (app) => (t = app),
    { WORKERS: 'on', LABEL_QUIET_MINUTES: '0', LABEL_SCAN_INTERVAL_SECONDS: '1' },
    { ownDatabase: true, redisKeyPrefixSuffix: 'metrics-workers:' },
  );

  it('a label job this process ran is counted completed, with its duration', async () => {
    const org = await createOrganization(t.app);
    const site = { id: org.site.id, organizationId: org.organization.id };
    await insertConversation(t.app, site, [{ role: 'shopper', text: 'Any boots?', minutesAgo: 2 }]);
    const text = await eventually(async () => {
      const text = await scrape(t);
      return (metricSample(text, 'queue_jobs_finished_total', { queue: 'labeling', outcome: 'completed' }) ??
        0) >= 1
        ? text
        : undefined;
    }, 'a completed label job is counted');
    expect(
      metricSample(text, 'queue_job_duration_seconds_count', { queue: 'labeling', outcome: 'completed' }),
    ).toBeGreaterThanOrEqual(1);
    expect(metricSample(text, 'queue_jobs', { queue: 'labeling', state: 'waiting' })).toBeGreaterThanOrEqual(
      0,
    );
  });
});
