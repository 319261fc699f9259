import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { SearchIndexer } from '../../src/search/mirror/search-indexer.service';
import { indexNames } from '../../src/search/opensearch/opensearch-client';
import { PURGE_ATTEMPTS, ReindexError, ReindexService } from '../../src/search/reindex.service';
import { recordConversation, recordConversations } from '../factories/conversations';
import { createOrganization, createSite } from '../factories/organizations';
import { FakeOpenSearch } from '../fixtures/fake-opensearch';
import { createTestApp, OWN_BUDGET, TestApp } from '../setup/test-app';

const NAMES = indexNames('conversations');
const BUILDING_INDEX = `${NAMES.prefix}_20261121000000000`;

/**
 * The mirror's answers to faults a real OpenSearch node does not produce on demand, against a
 * loopback server speaking OpenSearch's wire format (test/fixtures/fake-opensearch.ts). Everything
 * else about the mirror runs on the real engine (search-mirror.e2e-spec.ts). Each needs the
 * stand-in because:
 * - 503 answer: a healthy node answers 200; only an overloaded or recovering cluster says 503;
 * - a bulk that hangs (timeout): a real node answers, only a stalled one never does;
 * - items rejected with 429: only a full write queue rejects, which needs a cluster under load;
 * - a delete-by-query reporting failures, timed_out or version conflicts (the indexer's, and the
 *   reindex's final one): shard failures and timeouts need a broken cluster, and the conflicts a
 *   write racing the request; the same tests read the requests sent (routed to the site,
 *   conflicts=proceed, no per-document delete), which a real node does not report;
 * - bulks in flight at once (reindex concurrency) and the number of `_aliases` requests: a real
 *   node does not report how many requests it is serving, nor which were sent;
 * - the synced engine's failure not hidden: needs a search that fails (503).
 * The app has its own database: a drain takes every due row, and a reindex copies every
 * conversation (the shared run database holds every other suite's, 20,000+).
 */
describe('search mirror faults', () => {
  let t: TestApp;
  let os: FakeOpenSearch;
  let db: DataSource;
  let indexer: SearchIndexer;

  const rowsFor = (
    conversationId: string,
  ): Promise<Array<{ id: string; attempts: number; last_error: string | null; due: boolean }>> =>
    db.query(
      `SELECT id::text, attempts, last_error, next_attempt_at <= now() AS due FROM search_outbox WHERE conversation_id = $1 ORDER BY search_outbox.id`,
      [conversationId],
    );
  const versionOf = async (conversationId: string): Promise<number> =>
    Number(
      (
        await db.query(`SELECT search_version::text AS v FROM conversations WHERE id = $1`, [conversationId])
      )[0].v,
    );

  beforeAll(async () => {
    os = await new FakeOpenSearch().start();
    t = await createTestApp(
      {
        ...OWN_BUDGET,
        OPENSEARCH_URL: os.url,
        OPENSEARCH_INDEX: NAMES.alias,
        OPENSEARCH_BULK_TIMEOUT_MS: '500',
      },
      { redisKeyPrefixSuffix: 'search-mirror-faults:', ownDatabase: true },
    );
    db = t.app.get(DataSource);
    indexer = t.app.get(SearchIndexer);
  });
  afterAll(async () => {
    await t?.close();
    await os?.stop();
  });
  /** Answers the reindex's composite aggregation on site_id with the sites the index holds documents of. */
  const sitesHeld = (index: string) => ({
    timed_out: false,
    _shards: { total: 1, successful: 1, skipped: 0, failed: 0 },
    hits: { total: { value: 0, relation: 'eq' }, hits: [] },
    aggregations: {
      sites: {
        buckets: [...new Set([...(os.indices.get(index)?.docs.values() ?? [])].map((d) => d.source.site_id))]
          .sort()
          .map((site_id) => ({ key: { site_id }, doc_count: 1 })),
      },
    },
  });

  beforeEach(() => {
    os.mode = 'ok';
    os.rejectIds.clear();
    os.hangBulks = 0;
    os.searchHandler = sitesHeld;
    os.deleteByQueryHandler = undefined;
    os.indices.clear();
    os.addIndex(NAMES.prefix, [NAMES.alias]);
  });

  describe('the indexer keeps the outbox rows when OpenSearch fails', () => {
    it('a failed bulk (OpenSearch answering 503) leaves every row; the next drain writes them', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const before = await rowsFor(c.id);
      os.mode = { status: 503 };
      await expect(indexer.drain()).rejects.toThrow();
      expect(await rowsFor(c.id)).toEqual(before);

      os.mode = 'ok';
      await indexer.drain();
      expect(await rowsFor(c.id)).toEqual([]);
      expect(os.doc(c.id)?.version).toBe(await versionOf(c.id));
    });

    it('a bulk that gets no answer (timeout) leaves every row', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const before = await rowsFor(c.id);
      os.mode = 'hang';
      await expect(indexer.drain()).rejects.toThrow();
      expect(await rowsFor(c.id)).toEqual(before);
    });

    it('an item rejected with 429 is kept for retry with backoff, then written', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      os.rejectIds.add(c.id);
      await indexer.drain();
      let rows = await rowsFor(c.id);
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.every((r) => r.attempts === 1 && !r.due && /429/.test(r.last_error ?? ''))).toBe(true);

      // Not due yet: a drain leaves it alone.
      os.rejectIds.clear();
      const sent = os.actionsFor(c.id).length;
      await indexer.drain();
      expect(os.actionsFor(c.id).length).toBe(sent);

      await db.query(`UPDATE search_outbox SET next_attempt_at = now() WHERE conversation_id = $1`, [c.id]);
      await indexer.drain();
      rows = await rowsFor(c.id);
      expect(rows).toEqual([]);
      expect(os.doc(c.id)?.version).toBe(await versionOf(c.id));
    });

    it('a delete-by-query that reports failures, a timeout or version conflicts keeps the site row for a later pass', async () => {
      os.addIndex(BUILDING_INDEX, [NAMES.building]);
      const org = await createOrganization(t.app);
      const other = await createSite(t.app, org.organization.id);
      const c = await recordConversation(t, org, {}, other.id);
      await indexer.drain();
      expect((await t.http().delete(`/api/v1/sites/${other.id}`).set(org.auth)).status).toBe(204);
      const siteRow = () =>
        db.query(
          `SELECT attempts, last_error FROM search_outbox WHERE site_id = $1 AND conversation_id IS NULL`,
          [other.id],
        );
      const answers = [
        {
          timed_out: false,
          deleted: 0,
          version_conflicts: 0,
          failures: [{ cause: { type: 'search_phase_execution_exception', reason: 'shard failed' } }],
        },
        { timed_out: true, deleted: 0, version_conflicts: 0, failures: [] },
        { timed_out: false, deleted: 0, version_conflicts: 2, failures: [] },
      ];
      for (const [i, answer] of answers.entries()) {
        os.deleteByQueryHandler = () => answer;
        await db.query(`UPDATE search_outbox SET next_attempt_at = now() WHERE site_id = $1`, [other.id]);
        await indexer.drain();
        expect(await siteRow()).toEqual([
          { attempts: i + 1, last_error: expect.stringMatching(/delete-by-query/) },
        ]);
      }
      os.deleteByQueryHandler = undefined;
      os.deleteByQueries.length = 0;
      const bulks = os.bulkRequests.length;
      await db.query(`UPDATE search_outbox SET next_attempt_at = now() WHERE site_id = $1`, [other.id]);
      await indexer.drain();
      expect(await siteRow()).toEqual([]);
      expect(os.doc(c.id)).toBeUndefined();
      // One delete-by-query over every target, routed to the site, going on past conflicts; no
      // per-document delete.
      expect(os.deleteByQueries).toEqual([
        {
          indices: [NAMES.prefix, BUILDING_INDEX],
          params: expect.objectContaining({ routing: other.id, conflicts: 'proceed' }),
          body: { query: { term: { site_id: other.id } } },
        },
      ]);
      expect(
        os.bulkRequests
          .slice(bulks)
          .flat()
          .filter((line) => 'delete' in line),
      ).toEqual([]);
    });
  });

  describe('search:reindex copies batches in parallel and swaps the alias in one request', () => {
    it('batches are copied in parallel, never more at once than the concurrency', async () => {
      const org = await createOrganization(t.app);
      const mine = await recordConversations(t, org, 6);
      os.bulkDelayMs = 100;
      os.maxBulkInFlight = 0;
      os.requests.length = 0;
      try {
        const summary = await t.app.get(ReindexService).reindex({ batchSize: 2, concurrency: 3 });
        expect(summary.batches).toBeGreaterThanOrEqual(3);
        expect(os.maxBulkInFlight).toBe(3);
        // Every batch was copied: the database is the suite's own, so every live conversation.
        const [{ live }] = await db.query(
          `SELECT count(*)::int AS live FROM conversations c JOIN sites s ON s.id = c.site_id AND s.deleted_at IS NULL`,
        );
        const built = os.indices.get(summary.index)!;
        for (const id of mine) expect(built.docs.has(id)).toBe(true);
        expect({ documents: summary.documents, copied: built.docs.size }).toEqual({
          documents: live,
          copied: live,
        });
        // The swap is a single _aliases request.
        expect(os.requests.filter((r) => r === 'POST /_aliases')).toHaveLength(1);
      } finally {
        os.bulkDelayMs = 0;
      }
    });
  });

  describe('search:reindex tries a bulk that got no answer again', () => {
    it('a bulk that times out is written again: the reindex completes with every document', async () => {
      const org = await createOrganization(t.app);
      const mine = await recordConversations(t, org, 4);
      os.hangBulks = 1;
      os.requests.length = 0;
      const summary = await t.app.get(ReindexService).reindex({ batchSize: 2, concurrency: 1 });
      expect(os.hangBulks).toBe(0);
      const built = os.indices.get(summary.index)!;
      for (const id of mine) expect(built.docs.has(id)).toBe(true);
      expect(built.docs.size).toBe(summary.documents);
      // One bulk more than the batches: the one that got no answer.
      expect(os.requests.filter((r) => r === 'POST /_bulk')).toHaveLength(summary.batches + 1);
    });
  });

  describe('search:reindex checks its final delete-by-query of deleted sites as the indexer does', () => {
    const failed = {
      timed_out: false,
      deleted: 0,
      version_conflicts: 0,
      failures: [{ cause: { type: 'search_phase_execution_exception', reason: 'shard failed' } }],
    };
    /**
     * A reindex during which a site is deleted after its conversation reached the index being
     * built (written there as the indexer would before the deletion). Paused at its count of
     * conversations (a lock on the table) right after it created its index.
     */
    const reindexDeletingASite = async () => {
      const org = await createOrganization(t.app);
      const other = await createSite(t.app, org.organization.id);
      const c = await recordConversation(t, org, {}, other.id);
      const version = await versionOf(c.id);
      const lock = db.createQueryRunner();
      await lock.connect();
      await lock.startTransaction();
      await lock.query(`LOCK TABLE conversations IN ACCESS EXCLUSIVE MODE`);
      const reindexing = t.app.get(ReindexService).reindex({ batchSize: 50 });
      reindexing.catch(() => undefined);
      let building = '';
      try {
        for (let i = 0; i < 200 && !building; i++) {
          building = [...os.indices].find(([, index]) => index.aliases.has(NAMES.building))?.[0] ?? '';
          if (!building) await new Promise((r) => setTimeout(r, 50));
        }
        expect(building).not.toBe('');
        os.indices.get(building)!.docs.set(c.id, {
          version,
          source: { id: c.id, site_id: other.id },
          routing: other.id,
        });
        await lock.query(`UPDATE sites SET deleted_at = clock_timestamp() WHERE id = $1`, [other.id]);
      } finally {
        await lock.commitTransaction();
        await lock.release();
      }
      return { reindexing, building, siteId: other.id, conversationId: c.id };
    };

    it('a delete-by-query reporting failures, a timeout or conflicts is retried until it converges', async () => {
      const answers = [
        { timed_out: true, deleted: 0, version_conflicts: 0, failures: [] },
        { timed_out: false, deleted: 0, version_conflicts: 1, failures: [] },
      ];
      os.deleteByQueryHandler = ({ indices, params }) => {
        const answer = answers.shift();
        if (answer) return answer;
        // Then as OpenSearch does: the site's documents deleted (routed by the site).
        for (const name of indices)
          for (const [id, doc] of os.indices.get(name)?.docs ?? [])
            if (doc.source.site_id === params.routing) os.indices.get(name)!.docs.delete(id);
        return { timed_out: false, deleted: 1, version_conflicts: 0, failures: [] };
      };
      os.deleteByQueries.length = 0;
      const site = await reindexDeletingASite();
      const summary = await site.reindexing;
      expect(summary.index).toBe(site.building);
      expect(os.indices.get(summary.index)!.aliases).toEqual(new Set([NAMES.alias]));
      expect(os.doc(site.conversationId, summary.index)).toBeUndefined();
      expect(os.deleteByQueries).toEqual(
        Array.from({ length: 3 }, () => ({
          indices: [summary.index],
          params: expect.objectContaining({ routing: site.siteId, conflicts: 'proceed' }),
          body: { query: { term: { site_id: site.siteId } } },
        })),
      );
    });

    it('one that never converges fails the reindex: its index is deleted, the alias stays where it was', async () => {
      os.deleteByQueryHandler = () => failed;
      os.deleteByQueries.length = 0;
      const site = await reindexDeletingASite();
      await expect(site.reindexing).rejects.toThrow(
        new RegExp(
          `site ${site.siteId}.*delete-by-query failed: search_phase_execution_exception shard failed`,
        ),
      );
      await expect(site.reindexing).rejects.toBeInstanceOf(ReindexError);
      expect(os.deleteByQueries).toHaveLength(PURGE_ATTEMPTS);
      expect(os.indices.has(site.building)).toBe(false);
      expect([...os.indices].map(([name, index]) => [name, [...index.aliases]])).toEqual([
        [NAMES.prefix, [NAMES.alias]],
      ]);
    });
  });

  describe('SEARCH_SYNC_FOR_TESTS (the parity suite): nothing falls back', () => {
    let synced: TestApp;
    beforeAll(async () => {
      synced = await createTestApp(
        {
          ...OWN_BUDGET,
          DATABASE_URL: t.config.databaseUrl,
          SEARCH_BACKEND: 'opensearch',
          OPENSEARCH_URL: os.url,
          OPENSEARCH_INDEX: NAMES.alias,
          SEARCH_SYNC_FOR_TESTS: 'true',
        },
        { redisKeyPrefixSuffix: 'search-mirror-faults:' },
      );
    });
    afterAll(() => synced?.close());

    it('an OpenSearch failure is not hidden by the Postgres fallback: a 503 problem naming OpenSearch', async () => {
      const own = await createOrganization(synced.app);
      await recordConversation(synced, own);
      os.mode = { status: 503 };
      const res = await synced.http().get(`/api/v1/sites/${own.site.id}/conversations`).set(own.auth);
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: 'service_unavailable' });
      expect(res.body.detail).toMatch(/^OpenSearch failed \(ResponseError: HTTP 503\)/);
    });
  });
});
