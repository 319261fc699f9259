import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@opensearch-project/opensearch';
import { ReindexService } from '../../src/search/reindex.service';
import { getStats, listConversations, recordConversation } from '../factories/conversations';
import { createOrganization } from '../factories/organizations';
import { FakeOpenSearch } from '../fixtures/fake-opensearch';
import { describeOnOpenSearch } from '../setup/opensearch-suites';
import { createIsolatedDatabase } from '../setup/isolated-database';
import { logCapture } from '../setup/log-capture';
import { createTestApp, OWN_BUDGET, TestApp } from '../setup/test-app';
import { testIndexNames, testOpenSearchClient, testOpenSearchUrl } from '../setup/test-opensearch';

const OPENSEARCH_URL = testOpenSearchUrl();
const describeFresh = describeOnOpenSearch('fresh deployment on OpenSearch (alias made at start-up)');
const base = () => testIndexNames('fresh');

/**
 * A deployment started with OPENSEARCH_URL on a cluster without its alias (docs/opensearch.md,
 * "A fresh deployment"): over an empty database the index is created at start-up and the synced
 * mode works at once; over a database with conversations the service says so (one log line,
 * `/health/ready` `searchMirror.index`), Postgres serves meanwhile, and a synced request answers a
 * 503 naming OpenSearch, never a 500. Real Postgres (a database of its own), the run's real node.
 */
describeFresh('a fresh deployment on OpenSearch', () => {
  let database: { url: string; drop: () => Promise<void> };
  let engine: Client;
  const apps: TestApp[] = [];
  const start = async (env: Record<string, string>, logs?: ReturnType<typeof logCapture>) => {
    const app = await createTestApp(
      {
        ...OWN_BUDGET,
        DATABASE_URL: database.url,
        OPENSEARCH_URL: OPENSEARCH_URL!,
        OPENSEARCH_TIMEOUT_MS: '10000',
        ...env,
      },
      { redisKeyPrefixSuffix: 'search-fresh:', logs: logs?.stream },
    );
    apps.push(app);
    return app;
  };
  const synced = (alias: string) => ({
    SEARCH_BACKEND: 'opensearch',
    SEARCH_SYNC_FOR_TESTS: 'true',
    OPENSEARCH_INDEX: alias,
  });
  const aliasExists = async (alias: string) =>
    (await engine.indices.existsAlias({ name: alias } as never)).body === true;

  beforeAll(async () => {
    engine = testOpenSearchClient();
    database = await createIsolatedDatabase();
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await database?.drop();
    if (engine)
      await engine.indices
        .delete({ index: `${base().alias}*`, expand_wildcards: 'all' } as never, { ignore: [404] })
        .finally(() => engine.close());
  });

  describe('over an empty database, the missing alias is created at start-up', () => {
    it('the synced listing, count and statistics answer at once, with what was recorded', async () => {
      const alias = `${base().alias}_empty`;
      expect(await aliasExists(alias)).toBe(false);
      const t = await start(synced(alias));
      expect(await aliasExists(alias)).toBe(true);
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const listed = await listConversations(t, org, { count: true }).expect(200);
      expect(listed.body.data.map((x: { id: string }) => x.id)).toEqual([c.id]);
      expect(listed.body.meta.count).toMatchObject({ value: 1 });
      expect((await getStats(t, org).expect(200)).body.data.total).toBe(1);
      const ready = await t.http().get('/health/ready').expect(200);
      expect(ready.body.details.searchMirror).toMatchObject({ status: 'up', index: 'ready' });
    });
  });

  describe('over a database with conversations, the service says the index is missing and serves from Postgres', () => {
    let alias: string;
    let org: Awaited<ReturnType<typeof createOrganization>>;
    const logs = logCapture();
    let served: TestApp;
    beforeAll(async () => {
      // The database holds the conversations of the test above.
      alias = `${base().alias}_missing`;
      served = await start(
        { SEARCH_BACKEND: 'opensearch', SEARCH_SYNC_FOR_TESTS: 'false', OPENSEARCH_INDEX: alias },
        logs,
      );
      org = await createOrganization(served.app);
      await recordConversation(served, org);
    });

    it('nothing is created; one log line says so, and /health/ready carries searchMirror.index "missing"', async () => {
      expect(await aliasExists(alias)).toBe(false);
      const lines = logs.lines().filter((l) => String(l.msg).includes(`no index behind the alias ${alias}`));
      expect(lines).toHaveLength(1);
      expect(String(lines[0].msg)).toContain('search:reindex');
      const ready = await served.http().get('/health/ready').expect(200);
      expect(ready.body.details.searchMirror).toMatchObject({
        status: 'up',
        index: 'missing',
        indexMessage: expect.stringContaining('search:reindex'),
      });
    });

    it('the listing and statistics are answered by Postgres meanwhile', async () => {
      const listed = await listConversations(served, org, { count: true }).expect(200);
      expect(listed.body.data).toHaveLength(1);
      expect((await getStats(served, org).expect(200)).body.data.total).toBe(1);
    });

    it('under SEARCH_SYNC_FOR_TESTS a listing or statistics request answers 503 service_unavailable naming OpenSearch and the alias', async () => {
      const t = await start(synced(alias));
      for (const res of [await listConversations(t, org), await getStats(t, org)]) {
        expect(res.status).toBe(503);
        expect(res.headers['retry-after']).toBe('5');
        expect(res.body).toMatchObject({ code: 'service_unavailable' });
        expect(res.body.detail).toContain(`OpenSearch has no index behind the alias ${alias}`);
      }
    });

    it('search:reindex fills it: /health/ready says "ready"', async () => {
      await served.app.get(ReindexService).reindex();
      const ready = await served.http().get('/health/ready').expect(200);
      expect(ready.body.details.searchMirror).toMatchObject({ index: 'ready' });
    });
  });

  describe('under SEARCH_SYNC_FOR_TESTS every OpenSearch failure is a 503 problem naming OpenSearch, never a 500', () => {
    it('OpenSearch not answering (a closed port)', async () => {
      const t = await start({ ...synced(`${base().alias}_down`), OPENSEARCH_URL: 'http://127.0.0.1:9' });
      const org = await createOrganization(t.app);
      await recordConversation(t, org);
      for (const res of [await listConversations(t, org), await getStats(t, org)]) {
        expect(res.status).toBe(503);
        expect(res.headers['retry-after']).toBe('5');
        expect(res.body).toMatchObject({ code: 'service_unavailable' });
        expect(res.body.detail).toMatch(/^OpenSearch failed \(/);
      }
    });

    it('OpenSearch answering nothing in time, or an error answer (the loopback stand-in)', async () => {
      const fake = await new FakeOpenSearch().start();
      try {
        const alias = `${base().alias}_fake`;
        fake.addIndex(`${alias}_v2`, [alias]);
        const t = await start({
          ...synced(alias),
          OPENSEARCH_URL: fake.url,
          OPENSEARCH_TIMEOUT_MS: '50',
          OPENSEARCH_BULK_TIMEOUT_MS: '100',
        });
        const org = await createOrganization(t.app);
        await recordConversation(t, org);
        for (const [mode, failure] of [
          ['hang', /^OpenSearch failed \(TimeoutError/],
          [{ status: 500 }, /^OpenSearch failed \(ResponseError: HTTP 500\)/],
        ] as const) {
          fake.mode = mode;
          for (const res of [await listConversations(t, org), await getStats(t, org)]) {
            expect(res.status).toBe(503);
            expect(res.body).toMatchObject({ code: 'service_unavailable' });
            expect(res.body.detail).toMatch(failure);
          }
        }
      } finally {
        await fake.stop();
      }
    });
  });
});
