import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { emptyFilter } from '../../src/search/listing/conversation-filter';
import { SearchIndexer } from '../../src/search/mirror/search-indexer.service';
import { SearchOutboxRepository } from '../../src/search/mirror/search-outbox.repository';
import {
  createOpenSearchClient,
  describeOpenSearchError,
  indexNames,
} from '../../src/search/opensearch/opensearch-client';
import type {
  ConversationStats,
  ConversationStatsEngine,
  StatsQuery,
} from '../../src/search/stats/conversation-stats';
import { FallbackConversationStats } from '../../src/search/stats/opensearch/fallback-conversation-stats';
import { MirrorWatermark } from '../../src/search/stats/opensearch/mirror-watermark';
import { OpenSearchConversationStats } from '../../src/search/stats/opensearch/opensearch-conversation-stats';
import { buildStatsBody } from '../../src/search/stats/opensearch/stats-query';
import { recordConversation } from '../factories/conversations';
import { createOrganization, createSite } from '../factories/organizations';
import { FakeOpenSearch } from '../fixtures/fake-opensearch';
import { createTestApp, TestApp } from '../setup/test-app';

/** Rate limits are not under test here: this suite's requests stay out of the run's shared budget. */
const OWN_BUDGET = { RATE_LIMIT_IP_MAX: '1000000', RATE_LIMIT_KEY_MAX: '1000000' };
const TIMEOUT_MS = 300;
const { alias: CONVERSATIONS_ALIAS, prefix: INDEX_PREFIX } = indexNames('conversations');

const query = (over: Partial<StatsQuery> = {}): StatsQuery => ({
  filter: emptyFilter(),
  facets: [],
  scores: [],
  bins: 10,
  ...over,
});
const totalOnly = (value: number) => ({
  took: 1,
  timed_out: false,
  hits: { total: { value, relation: 'eq' }, max_score: null, hits: [] },
  aggregations: {},
});

/**
 * The OpenSearch stats engine over HTTP, with OpenSearch played by a real server on 127.0.0.1
 * (test/fixtures/fake-opensearch.ts: canned `_search` answers, failures on demand) and the
 * mirror's outbox on real Postgres. Its own database: switching the outbox off must not touch
 * the suites running alongside. What a real OpenSearch counts is the parity suite's business.
 */
describe('OpenSearch stats engine', () => {
  let t: TestApp;
  let os: FakeOpenSearch;
  let db: DataSource;
  let client: ReturnType<typeof createOpenSearchClient>;
  let engine: OpenSearchConversationStats;
  let org: Awaited<ReturnType<typeof createOrganization>>;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    os = await new FakeOpenSearch().start();
    os.addIndex(INDEX_PREFIX, [CONVERSATIONS_ALIAS]);
    t = await createTestApp(
      {
        ...OWN_BUDGET,
        OPENSEARCH_URL: os.url,
        OPENSEARCH_INDEX: CONVERSATIONS_ALIAS,
        OPENSEARCH_BULK_TIMEOUT_MS: '2000',
      },
      { redisKeyPrefixSuffix: 'stats-opensearch:', ownDatabase: true },
    );
    db = t.db;
    client = createOpenSearchClient(os.url, TIMEOUT_MS);
    engine = new OpenSearchConversationStats(client, new MirrorWatermark(db), CONVERSATIONS_ALIAS);
    org = await createOrganization(t.app);
  });
  afterAll(async () => {
    await client?.close();
    await t?.close();
    await os?.stop();
  });
  beforeEach(async () => {
    os.mode = 'ok';
    os.searchHandler = () => totalOnly(0);
    os.searches.length = 0;
    os.requests.length = 0;
    await t.app.get(SearchOutboxRepository).setMirrorEnabled(true);
  });

  describe('one refresh, then one _search on the conversations alias with the stats body', () => {
    it('sends the body of buildStatsBody and reads the answer', async () => {
      const q = query({ facets: ['channel'], filter: { ...emptyFilter(), language: 'fr' } });
      os.searchHandler = () => ({
        ...totalOnly(3),
        aggregations: {
          facet_channel: {
            doc_count_error_upper_bound: 0,
            sum_other_doc_count: 0,
            buckets: [
              { key: 'web', doc_count: 2 },
              { key: 'hosted', doc_count: 1 },
            ],
          },
        },
      });
      const stats = await engine.stats(org.site.id, q);
      expect(os.requests).toEqual([
        `GET /${CONVERSATIONS_ALIAS}/_refresh`,
        `POST /${CONVERSATIONS_ALIAS}/_search`,
      ]);
      expect(os.searches).toEqual([{ index: CONVERSATIONS_ALIAS, body: buildStatsBody(org.site.id, q) }]);
      expect(stats).toEqual({
        total: 3,
        facets: {
          channel: {
            values: [
              { value: 'web', count: 2 },
              { value: 'hosted', count: 1 },
            ],
            other: 0,
          },
        },
        asOf: expect.any(Date),
      });
    });

    it('a series comes back on the shared bucket list, empty buckets included', async () => {
      const from = '2026-10-25T00:00:00+02:00';
      const q = query({
        filter: { ...emptyFilter(), from, to: '2026-10-27T00:00:00+01:00' },
        series: {
          interval: 'day',
          timezone: 'Europe/Paris',
          from: new Date(from),
          to: new Date('2026-10-27T00:00:00+01:00'),
        },
      });
      os.searchHandler = () => ({
        ...totalOnly(2),
        aggregations: {
          series: {
            buckets: [{ key: Date.parse('2026-10-25T23:00:00Z'), doc_count: 2, labeled: { doc_count: 1 } }],
          },
        },
      });
      expect((await engine.stats(org.site.id, q)).series).toEqual([
        { start: '2026-10-25T00:00:00.000+02:00', count: 0, labeled: 0 },
        { start: '2026-10-26T00:00:00.000+01:00', count: 2, labeled: 1 },
      ]);
    });
  });

  describe("asOf is the mirror's watermark: every change committed before it is in the index", () => {
    const outboxOldest = async (siteId: string): Promise<Date> =>
      (await db.query(`SELECT min(created_at) AS t FROM search_outbox WHERE site_id = $1`, [siteId]))[0].t;
    const drainAll = async () => {
      const indexer = t.app.get(SearchIndexer);
      let result;
      do result = await indexer.drain(20);
      while (result.taken > 0);
    };

    it("the site's outbox empty: the moment of the read", async () => {
      await drainAll();
      const before = Date.now();
      const { asOf } = await engine.stats(org.site.id, query());
      expect(asOf.getTime()).toBeGreaterThanOrEqual(before - 1000);
      expect(asOf.getTime()).toBeLessThanOrEqual(Date.now());
    });

    it("a change of the site still waiting in the outbox: that row's time, however long ago", async () => {
      await drainAll();
      await recordConversation(t, org, { title: 'waiting for the mirror' });
      const oldest = await outboxOldest(org.site.id);
      expect(oldest).toBeInstanceOf(Date);
      // Kept back as if its writes had failed: the watermark stays behind it.
      await db.query(
        `UPDATE search_outbox SET created_at = created_at - interval '1 hour', next_attempt_at = now() + interval '1 hour' WHERE site_id = $1`,
        [org.site.id],
      );
      const { asOf } = await engine.stats(org.site.id, query());
      expect(asOf).toEqual(new Date(oldest.getTime() - 3_600_000));
      await db.query(`UPDATE search_outbox SET next_attempt_at = now() WHERE site_id = $1`, [org.site.id]);
      await drainAll();
      expect((await engine.stats(org.site.id, query())).asOf.getTime()).toBeGreaterThan(oldest.getTime());
    });

    it("another site's waiting changes do not hold this site's watermark back", async () => {
      await drainAll();
      const other = await createSite(t.app, org.organization.id);
      await recordConversation(t, org, { title: 'other site' }, other.id);
      const otherOldest = await outboxOldest(other.id);
      await db.query(
        `UPDATE search_outbox SET created_at = created_at - interval '1 hour' WHERE site_id = $1`,
        [other.id],
      );
      const { asOf } = await engine.stats(org.site.id, query());
      expect(asOf.getTime()).toBeGreaterThan(otherOldest.getTime() - 1000);
      expect((await engine.stats(other.id, query())).asOf).toEqual(
        new Date(otherOldest.getTime() - 3_600_000),
      );
      await drainAll();
    });

    it('a request soon after a refresh reuses it, with the watermark read before that refresh', async () => {
      await drainAll();
      const reusing = new OpenSearchConversationStats(
        client,
        new MirrorWatermark(db),
        CONVERSATIONS_ALIAS,
        undefined,
        60_000,
      );
      const other = await createSite(t.app, org.organization.id);
      await recordConversation(t, org, { title: 'other site, waiting' }, other.id);
      const otherOldest = await outboxOldest(other.id);
      os.requests.length = 0;
      const first = await reusing.stats(org.site.id, query());
      expect(os.requests).toEqual([
        `GET /${CONVERSATIONS_ALIAS}/_refresh`,
        `POST /${CONVERSATIONS_ALIAS}/_search`,
      ]);
      // Indexed after that refresh: maybe not searchable yet, so not claimed by asOf.
      await recordConversation(t, org, { title: 'indexed after the refresh' });
      await drainAll();
      os.requests.length = 0;
      const second = await reusing.stats(org.site.id, query());
      expect(os.requests).toEqual([`POST /${CONVERSATIONS_ALIAS}/_search`]);
      expect(second.asOf).toEqual(first.asOf);
      // Every site's watermark was read before the refresh: the other site's waiting row holds it.
      expect((await reusing.stats(other.id, query())).asOf).toEqual(otherOldest);
      // A refresh older than the window is not reused.
      const fresh = new OpenSearchConversationStats(
        client,
        new MirrorWatermark(db),
        CONVERSATIONS_ALIAS,
        undefined,
        1,
      );
      await fresh.stats(org.site.id, query());
      await new Promise((resolve) => setTimeout(resolve, 5));
      os.requests.length = 0;
      const third = await fresh.stats(org.site.id, query());
      expect(os.requests).toEqual([
        `GET /${CONVERSATIONS_ALIAS}/_refresh`,
        `POST /${CONVERSATIONS_ALIAS}/_search`,
      ]);
      expect(third.asOf.getTime()).toBeGreaterThan(first.asOf.getTime());
    });

    it('the outbox switched off: the moment it was switched off (nothing reaches the mirror since)', async () => {
      await drainAll();
      await t.app.get(SearchOutboxRepository).setMirrorEnabled(false);
      const [{ changed_at: off }] = await db.query(`SELECT changed_at FROM search_mirror_state`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect((await engine.stats(org.site.id, query())).asOf).toEqual(off);
    });
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
  });

  describe('with SEARCH_BACKEND=opensearch a stats request never fails because of OpenSearch: Postgres answers', () => {
    const fromPostgres: ConversationStats = { total: 42, asOf: new Date('2026-11-23T10:00:00.000Z') };
    const postgres: ConversationStatsEngine = { stats: async () => fromPostgres };

    it('OpenSearch down: the fallback engine answers, within seconds', async () => {
      const stats = new FallbackConversationStats(engine, postgres);
      os.mode = 'hang';
      const started = Date.now();
      expect(await stats.stats(org.site.id, query())).toEqual(fromPostgres);
      expect(Date.now() - started).toBeLessThan(5000);
      os.mode = { status: 500 };
      expect(await stats.stats(org.site.id, query())).toEqual(fromPostgres);
      expect(stats.fallbacks).toBe(2);
    });

    it('OpenSearch well: its answer, the fallback untouched', async () => {
      const stats = new FallbackConversationStats(engine, postgres);
      os.searchHandler = () => totalOnly(7);
      expect((await stats.stats(org.site.id, query())).total).toBe(7);
      expect(stats.fallbacks).toBe(0);
    });
  });
});
