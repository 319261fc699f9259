import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import {
  createOpenSearchClient,
  describeOpenSearchError,
  indexNames,
} from '../../src/search/opensearch/opensearch-client';
import { FallbackConversationStats } from '../../src/search/stats/opensearch/fallback-conversation-stats';
import { MirrorWatermark } from '../../src/search/stats/opensearch/mirror-watermark';
import { OpenSearchConversationStats } from '../../src/search/stats/opensearch/opensearch-conversation-stats';
import { PostgresConversationStats } from '../../src/search/stats/postgres/postgres-conversation-stats';
import { getStats, recordConversation } from '../factories/conversations';
import { createOrganization } from '../factories/organizations';
import { statsQuery as query } from '../factories/stats-queries';
import { FakeOpenSearch } from '../fixtures/fake-opensearch';
import { createTestApp, OWN_BUDGET, TestApp } from '../setup/test-app';
import { servedByOpenSearch } from '../setup/test-opensearch';

const TIMEOUT_MS = 300;
const { alias: CONVERSATIONS_ALIAS, prefix: INDEX_PREFIX } = indexNames('conversations');

const totalOnly = (value: number) => ({
  took: 1,
  timed_out: false,
  _shards: { total: 1, successful: 1, skipped: 0, failed: 0 },
  hits: { total: { value, relation: 'eq' }, max_score: null, hits: [] },
  aggregations: {},
});

/**
 * The OpenSearch stats engine facing faults a real node does not produce on demand, so
 * OpenSearch is played by the loopback stand-in (test/fixtures/fake-opensearch.ts: a real HTTP
 * server on 127.0.0.1 with canned answers): a search that hangs past OPENSEARCH_TIMEOUT_MS, a
 * 5xx, a total given as a lower bound (the engine asks for the exact total, which a node always
 * gives), an answer with timed_out: true. Every test here uses the stand-in. What the engine
 * answers on a real OpenSearch, with the real errors it gives (an index missing, a failed
 * shard), is stats-opensearch-engine.e2e-spec.ts. Its own database: the mirror's outbox is on.
 */
describe('OpenSearch stats engine, faults (loopback stand-in)', () => {
  let t: TestApp;
  let os: FakeOpenSearch;
  let client: ReturnType<typeof createOpenSearchClient>;
  let engine: OpenSearchConversationStats;
  let postgres: PostgresConversationStats;
  let org: Awaited<ReturnType<typeof createOrganization>>;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    os = await new FakeOpenSearch().start();
    os.addIndex(INDEX_PREFIX, [CONVERSATIONS_ALIAS]);
    t = await createTestApp(
      {
        ...OWN_BUDGET,
        SEARCH_BACKEND: 'postgres',
        SEARCH_SYNC_FOR_TESTS: 'false',
        OPENSEARCH_URL: os.url,
        OPENSEARCH_INDEX: CONVERSATIONS_ALIAS,
        OPENSEARCH_BULK_TIMEOUT_MS: '2000',
      },
      { redisKeyPrefixSuffix: 'stats-opensearch-faults:', ownDatabase: true },
    );
    client = createOpenSearchClient(os.url, TIMEOUT_MS);
    engine = new OpenSearchConversationStats(client, new MirrorWatermark(t.db), CONVERSATIONS_ALIAS);
    postgres = t.app.get(PostgresConversationStats);
    org = await createOrganization(t.app);
    await recordConversation(t, org, {});
    await recordConversation(t, org, {});
  });
  afterAll(async () => {
    await client?.close();
    await t?.close();
    await os?.stop();
  });
  beforeEach(() => {
    os.mode = 'ok';
    os.searchHandler = () => totalOnly(0);
  });

  describe('every dependency failure is a clean error within seconds, never a hang', () => {
    it('OpenSearch not answering: the engine gives up after OPENSEARCH_TIMEOUT_MS', async () => {
      os.mode = 'hang';
      const started = Date.now();
      const error = await engine.stats(org.site.id, query()).catch((e: unknown) => e);
      expect(describeOpenSearchError(error)).toMatch(/Timeout/i);
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it('an error answer (503) is thrown with its status, nothing parsed', async () => {
      os.mode = { status: 503 };
      const error = await engine.stats(org.site.id, query()).catch((e: unknown) => e);
      expect(describeOpenSearchError(error)).toMatch(/HTTP 503/);
    });

    it('an answer that would not be exact (total as a lower bound) is an error, not numbers', async () => {
      os.searchHandler = () => ({ ...totalOnly(10000), hits: { total: { value: 10000, relation: 'gte' } } });
      await expect(engine.stats(org.site.id, query())).rejects.toThrow(/lower bound/);
    });

    it('an answer that timed out (timed_out: true, partial aggregations) is an error, not numbers', async () => {
      os.searchHandler = () => ({ ...totalOnly(1), timed_out: true });
      await expect(engine.stats(org.site.id, query())).rejects.toThrow(/timed out/);
    });
  });

  describe('the stats search carries a server-side timeout, so that OpenSearch stops a slow aggregation itself', () => {
    it("a timeout below OPENSEARCH_TIMEOUT_MS on the service's stats search", async () => {
      const served = await createTestApp(
        {
          ...OWN_BUDGET,
          DATABASE_URL: t.config.databaseUrl,
          ...servedByOpenSearch(os.url, CONVERSATIONS_ALIAS),
          OPENSEARCH_TIMEOUT_MS: String(TIMEOUT_MS),
        },
        { redisKeyPrefixSuffix: 'stats-opensearch-faults:' },
      );
      try {
        os.searchHandler = () => totalOnly(2);
        const before = os.searches.length;
        const res = await getStats(served, org).expect(200);
        expect(res.body.data.total).toBe(2);
        expect(os.searches.length - before).toBe(1);
        // OPENSEARCH_TIMEOUT_MS is 300 here: OpenSearch stops at 240 ms, before the client gives up.
        expect(os.searches[os.searches.length - 1].body.timeout).toBe('240ms');
      } finally {
        await served.close();
      }
    });
  });

  describe('with SEARCH_BACKEND=opensearch a stats request never fails because of OpenSearch: Postgres answers', () => {
    it('OpenSearch hanging, then answering 500 or a timed-out search: the Postgres engine answers, within seconds', async () => {
      const stats = new FallbackConversationStats(engine, postgres);
      os.mode = 'hang';
      const started = Date.now();
      expect((await stats.stats(org.site.id, query())).total).toBe(2);
      expect(Date.now() - started).toBeLessThan(5000);
      os.mode = { status: 500 };
      expect((await stats.stats(org.site.id, query())).total).toBe(2);
      os.mode = 'ok';
      os.searchHandler = () => ({ ...totalOnly(7), timed_out: true });
      expect((await stats.stats(org.site.id, query())).total).toBe(2);
      expect(stats.fallbacks).toBe(3);
    });
  });
});
