import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createServer as createTcpServer, Server as TcpServer, Socket } from 'node:net';
import { DataSource } from 'typeorm';
import { SearchIndexer } from '../../src/search/mirror/search-indexer.service';
import { DRAIN_INTERVAL_MS } from '../../src/search/mirror/search-mirror.scheduler';
import { SearchOutboxRepository } from '../../src/search/mirror/search-outbox.repository';
import { indexNames } from '../../src/search/opensearch/opensearch-client';

const { alias: CONVERSATIONS_ALIAS, building: BUILDING_ALIAS } = indexNames('conversations');
import { runCli } from '../../src/cli/run-cli';
import { ReindexService } from '../../src/search/reindex.service';
import { label, recordConversation } from '../factories/conversations';
import { createOrganization, createSite } from '../factories/organizations';
import { FakeOpenSearch } from '../fixtures/fake-opensearch';
import { createTestApp, TestApp } from '../setup/test-app';
import { TEST_RUN_ENV } from '../setup/test-run';

/** Rate limits are not under test here: this suite's requests stay out of the run's shared budget. */
const OWN_BUDGET = { RATE_LIMIT_IP_MAX: '1000000', RATE_LIMIT_KEY_MAX: '1000000' };

/**
 * The mirror's outbox on real Postgres, and the indexer against a real HTTP server on 127.0.0.1
 * speaking OpenSearch's `_bulk` format (test/fixtures/fake-opensearch.ts). The outbox and the
 * indexer live in one suite: a drain takes every due row, so they must not run concurrently.
 */
describe('search mirror', () => {
  let t: TestApp;
  let os: FakeOpenSearch;
  let db: DataSource;
  let indexer: SearchIndexer;

  interface OutboxRowView {
    id: string;
    reason: string;
    version: string;
    attempts: number;
    last_error: string | null;
    due: boolean;
  }
  const rowsFor = (conversationId: string): Promise<OutboxRowView[]> =>
    db.query(
      `SELECT id::text, reason, version::text, attempts, last_error, next_attempt_at <= now() AS due FROM search_outbox WHERE conversation_id = $1 ORDER BY search_outbox.id`,
      [conversationId],
    );
  const versionOf = async (conversationId: string): Promise<string> =>
    (await db.query(`SELECT search_version::text AS v FROM conversations WHERE id = $1`, [conversationId]))[0]
      .v;

  beforeAll(async () => {
    os = await new FakeOpenSearch().start();
    t = await createTestApp(
      {
        ...OWN_BUDGET,
        OPENSEARCH_URL: os.url,
        OPENSEARCH_INDEX: CONVERSATIONS_ALIAS,
        OPENSEARCH_BULK_TIMEOUT_MS: '500',
      },
      { redisKeyPrefixSuffix: 'search-mirror:' },
    );
    db = t.app.get(DataSource);
    indexer = t.app.get(SearchIndexer);
  });
  afterAll(async () => {
    await t?.close();
    await os?.stop();
  });
  beforeEach(() => {
    os.mode = 'ok';
    os.rejectIds.clear();
    os.errorIds.clear();
    os.searchHandler = undefined;
    os.indices.clear();
    os.addIndex('conversations_v1', [CONVERSATIONS_ALIAS]);
  });

  describe('every change to a conversation writes an outbox row in the same transaction', () => {
    it('a process started with OPENSEARCH_URL switches the outbox on', async () => {
      expect(await t.app.get(SearchOutboxRepository).mirrorEnabled()).toBe(true);
    });

    it('recording a conversation writes a row carrying the conversation version', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const rows = await rowsFor(c.id);
      expect(rows.length).toBeGreaterThanOrEqual(1);
      expect(rows[0].reason).toBe('insert');
      expect(rows[rows.length - 1].version).toBe(await versionOf(c.id));
    });

    it('messages, ratings, engagement and a label written each write a row with a higher version', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const before = (await rowsFor(c.id)).length;
      const appended = await t
        .http()
        .post(`/api/v1/sites/${org.site.id}/conversations/${c.id}/messages`)
        .set(org.auth)
        .send({ messages: [{ role: 'shopper', blocks: [{ type: 'text', text: 'and now?' }] }] });
      expect(appended.status).toBe(201);
      const afterMessages = await rowsFor(c.id);
      expect(afterMessages.length).toBeGreaterThan(before);

      const messageId = appended.body.data.messages[0].id as string;
      const rated = await t
        .http()
        .put(`/api/v1/sites/${org.site.id}/conversations/${c.id}/messages/${messageId}/rating`)
        .set(org.auth)
        .send({ rating: 'negative' });
      expect(rated.status).toBe(200);
      const afterRating = await rowsFor(c.id);
      expect(afterRating.length).toBeGreaterThan(afterMessages.length);

      const engaged = await t
        .http()
        .post(`/api/v1/sites/${org.site.id}/conversations/${c.id}/engagement`)
        .set(org.auth)
        .send({ impressions: 2, clicks: 1 });
      expect(engaged.status).toBe(200);
      const afterEngagement = await rowsFor(c.id);
      expect(afterEngagement.length).toBeGreaterThan(afterRating.length);

      await label(t.app, c.id);
      const afterLabel = await rowsFor(c.id);
      expect(afterLabel.length).toBeGreaterThan(afterEngagement.length);

      const versions = afterLabel.map((r) => BigInt(r.version));
      expect([...versions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(versions);
      expect(new Set(versions).size).toBe(versions.length);
      expect(afterLabel[afterLabel.length - 1].version).toBe(await versionOf(c.id));
    });

    it('a rolled-back change writes no outbox row', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const before = await rowsFor(c.id);
      await expect(
        db.transaction(async (m) => {
          await m.query(`UPDATE conversations SET title = 'changed then rolled back' WHERE id = $1`, [c.id]);
          expect(
            (
              await m.query(`SELECT count(*)::int AS n FROM search_outbox WHERE conversation_id = $1`, [c.id])
            )[0].n,
          ).toBe(before.length + 1);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect(await rowsFor(c.id)).toEqual(before);
    });

    it('deleting a site writes one site_deleted row for the site, none per conversation, in the same transaction', async () => {
      const org = await createOrganization(t.app);
      const other = await createSite(t.app, org.organization.id);
      const a = await recordConversation(t, org, {}, other.id);
      const b = await recordConversation(t, org, {}, other.id);
      const before = { a: await rowsFor(a.id), b: await rowsFor(b.id) };
      const deleted = await t.http().delete(`/api/v1/sites/${other.id}`).set(org.auth);
      expect(deleted.status).toBe(204);
      expect({ a: await rowsFor(a.id), b: await rowsFor(b.id) }).toEqual(before);
      const siteRows: Array<{ conversation_id: string | null; reason: string; version: string }> =
        await db.query(
          `SELECT conversation_id, reason, version::text FROM search_outbox WHERE site_id = $1 AND reason = 'site_deleted'`,
          [other.id],
        );
      expect(siteRows).toEqual([
        { conversation_id: null, reason: 'site_deleted', version: expect.any(String) },
      ]);
      expect(BigInt(siteRows[0].version)).toBeGreaterThan(BigInt(await versionOf(b.id)));
    });

    it('deleting a conversation row writes a delete row above every version it had', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const last = await versionOf(c.id);
      await db.query(`DELETE FROM conversations WHERE id = $1`, [c.id]);
      const rows = await rowsFor(c.id);
      expect(rows[rows.length - 1].reason).toBe('delete');
      expect(BigInt(rows[rows.length - 1].version)).toBeGreaterThan(BigInt(last));
    });

    it('with the outbox switched off, changes write no row (and the version still moves)', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const outbox = t.app.get(SearchOutboxRepository);
      const before = await rowsFor(c.id);
      const version = await versionOf(c.id);
      await outbox.setMirrorEnabled(false);
      try {
        await db.query(`UPDATE conversations SET title = 'while off' WHERE id = $1`, [c.id]);
      } finally {
        await outbox.setMirrorEnabled(true);
      }
      expect(await rowsFor(c.id)).toEqual(before);
      expect(BigInt(await versionOf(c.id))).toBeGreaterThan(BigInt(version));
    });
  });

  describe('the indexer drains the outbox with _bulk and external versions', () => {
    it('drains each row once: indexed with its version, the row removed, nothing sent again', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org, { title: 'Drained once' });
      await indexer.drain();
      const doc = os.doc(c.id, 'conversations_v1');
      expect(doc?.version).toBe(Number(await versionOf(c.id)));
      expect(doc?.source).toMatchObject({
        id: c.id,
        site_id: org.site.id,
        title: 'Drained once',
        channel: 'web',
        language: 'en',
        label_status: 'pending',
        created_at: c.createdAt,
      });
      expect(os.actionsFor(c.id).every((a) => a.version_type === 'external' && a.op === 'index')).toBe(true);
      expect(await rowsFor(c.id)).toEqual([]);

      const sent = os.actionsFor(c.id).length;
      await indexer.drain();
      expect(os.actionsFor(c.id).length).toBe(sent);
    });

    it('several rows of one conversation become one action with the newest version', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      await label(t.app, c.id);
      expect((await rowsFor(c.id)).length).toBeGreaterThan(1);
      await indexer.drain();
      expect(os.actionsFor(c.id)).toEqual([
        {
          op: 'index',
          _index: 'conversations_v1',
          version: Number(await versionOf(c.id)),
          version_type: 'external',
        },
      ]);
      expect(os.doc(c.id)?.source).toMatchObject({ label_status: 'labeled', score_quality: 0.8 });
    });

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
      expect(os.doc(c.id)?.version).toBe(Number(await versionOf(c.id)));
    });

    it('a bulk that gets no answer (timeout) leaves every row', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const before = await rowsFor(c.id);
      os.mode = 'hang';
      await expect(indexer.drain()).rejects.toThrow();
      expect(await rowsFor(c.id)).toEqual(before);
    });

    it('a version conflict counts as success: the index already holds a newer state', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      os.indices
        .get('conversations_v1')!
        .docs.set(c.id, { version: Number.MAX_SAFE_INTEGER, source: { title: 'newer' } });
      const result = await indexer.drain();
      expect(result.postponed).toBe(0);
      expect(await rowsFor(c.id)).toEqual([]);
      expect(os.doc(c.id)?.source).toEqual({ title: 'newer' });
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
      expect(os.doc(c.id)).toBeDefined();
    });

    it('other item errors are kept with the attempt counted and the error recorded', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      os.errorIds.set(c.id, { status: 400, type: 'mapper_parsing_exception', reason: 'failed to parse' });
      const other = await recordConversation(t, org);
      await indexer.drain();
      const rows = await rowsFor(c.id);
      expect(rows.length).toBeGreaterThan(0);
      expect(
        rows.every(
          (r) => r.attempts === 1 && !r.due && (r.last_error ?? '').includes('mapper_parsing_exception'),
        ),
      ).toBe(true);
      // The rest of the batch went through.
      expect(await rowsFor(other.id)).toEqual([]);

      await db.query(`UPDATE search_outbox SET next_attempt_at = now() WHERE conversation_id = $1`, [c.id]);
      await indexer.drain();
      expect((await rowsFor(c.id)).every((r) => r.attempts === 2)).toBe(true);
    });

    it('a deleted site removes its conversations from the index with one delete-by-query on site_id, routed to the site', async () => {
      os.addIndex('conversations_v1_20261121000000000', [BUILDING_ALIAS]);
      const org = await createOrganization(t.app);
      const other = await createSite(t.app, org.organization.id);
      const c = await recordConversation(t, org, {}, other.id);
      const d = await recordConversation(t, org, {}, other.id);
      const kept = await recordConversation(t, org);
      await indexer.drain();
      expect(os.doc(c.id)).toBeDefined();
      os.deleteByQueries.length = 0;
      const bulks = os.bulkRequests.length;
      expect((await t.http().delete(`/api/v1/sites/${other.id}`).set(org.auth)).status).toBe(204);
      await indexer.drain();
      expect(os.deleteByQueries).toEqual([
        {
          indices: ['conversations_v1', 'conversations_v1_20261121000000000'],
          params: expect.objectContaining({ routing: other.id, conflicts: 'proceed' }),
          body: { query: { term: { site_id: other.id } } },
        },
      ]);
      // No per-document delete was sent.
      expect(
        os.bulkRequests
          .slice(bulks)
          .flat()
          .filter((line) => 'delete' in line),
      ).toEqual([]);
      for (const id of [c.id, d.id]) {
        expect(os.doc(id, 'conversations_v1')).toBeUndefined();
        expect(os.doc(id, 'conversations_v1_20261121000000000')).toBeUndefined();
      }
      expect(os.doc(kept.id)).toBeDefined();
      expect(await db.query(`SELECT 1 FROM search_outbox WHERE site_id = $1`, [other.id])).toEqual([]);
    });

    it('a delete-by-query that reports failures, a timeout or version conflicts keeps the site row for a later pass', async () => {
      const org = await createOrganization(t.app);
      const other = await createSite(t.app, org.organization.id);
      await recordConversation(t, org, {}, other.id);
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
      await db.query(`UPDATE search_outbox SET next_attempt_at = now() WHERE site_id = $1`, [other.id]);
      await indexer.drain();
      expect(await siteRow()).toEqual([]);
    });

    it('every document is written and deleted with its site as routing', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      await indexer.drain();
      expect(os.doc(c.id)?.routing).toBe(org.site.id);
      await db.query(`DELETE FROM conversations WHERE id = $1`, [c.id]);
      await indexer.drain();
      const lines = os.bulkRequests.flat().filter((line) => {
        const meta = Object.values(line)[0] as { _id?: string };
        return meta?._id === c.id;
      });
      expect(lines.map((line) => Object.keys(line)[0])).toEqual(expect.arrayContaining(['index', 'delete']));
      for (const line of lines) expect(Object.values(line)[0]).toMatchObject({ routing: org.site.id });
    });

    it('with no conversations index yet, rows wait in the outbox', async () => {
      os.indices.clear();
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const result = await indexer.drain();
      expect(result.targets).toEqual([]);
      expect((await rowsFor(c.id)).length).toBeGreaterThan(0);
    });

    it('while a reindex builds an index, every change is written to it as well', async () => {
      os.addIndex('conversations_v1_20261121000000000', [BUILDING_ALIAS]);
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      await indexer.drain();
      expect(os.doc(c.id, 'conversations_v1')).toBeDefined();
      expect(os.doc(c.id, 'conversations_v1_20261121000000000')).toBeDefined();
      expect(await rowsFor(c.id)).toEqual([]);
    });
  });

  describe('lag is exposed on /health/ready and /metrics', () => {
    it('readiness details carry the pending count and the oldest pending age', async () => {
      const org = await createOrganization(t.app);
      await recordConversation(t, org);
      const res = await t.http().get('/health/ready');
      expect(res.status).toBe(200);
      const mirror = res.body.details.searchMirror;
      expect(mirror.status).toBe('up');
      expect(mirror.outboxPending).toBeGreaterThanOrEqual(1);
      expect(typeof mirror.oldestPendingAgeSeconds).toBe('number');
    });

    it('GET /metrics answers the lag in Prometheus text format, without an API key', async () => {
      const org = await createOrganization(t.app);
      await recordConversation(t, org);
      const res = await t.http().get('/metrics');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.text).toMatch(/^# TYPE search_outbox_pending gauge$/m);
      const pending = Number(/^search_outbox_pending (\d+)$/m.exec(res.text)?.[1]);
      expect(pending).toBeGreaterThanOrEqual(1);
      expect(res.text).toMatch(/^search_outbox_oldest_age_seconds \d+(\.\d+)?$/m);
      expect(res.text).toMatch(/^search_mirror_enabled 1$/m);
    });
  });

  describe('search:reindex builds a new index from Postgres and swaps the alias', () => {
    it('copies every conversation of live sites with its version, then moves the alias in one request', async () => {
      const org = await createOrganization(t.app);
      const kept = await recordConversation(t, org);
      const other = await createSite(t.app, org.organization.id);
      const gone = await recordConversation(t, org, {}, other.id);
      expect((await t.http().delete(`/api/v1/sites/${other.id}`).set(org.auth)).status).toBe(204);

      const progress: Array<{ done: number; total: number }> = [];
      const summary = await t.app
        .get(ReindexService)
        .reindex({ batchSize: 50, onProgress: (p) => progress.push(p) });
      expect(summary.previousIndices).toEqual(['conversations_v1']);
      expect(summary.index).toMatch(/^conversations_v1_\d{17}$/);
      const built = os.indices.get(summary.index)!;
      expect([...built.aliases]).toEqual([CONVERSATIONS_ALIAS]);
      expect([...os.indices.get('conversations_v1')!.aliases]).toEqual([]);
      expect(built.docs.get(kept.id)?.version).toBe(Number(await versionOf(kept.id)));
      expect(built.docs.has(gone.id)).toBe(false);
      const [{ live }] = await db.query(
        `SELECT count(*)::int AS live FROM conversations c JOIN sites s ON s.id = c.site_id AND s.deleted_at IS NULL`,
      );
      expect(summary.documents).toBeGreaterThanOrEqual(built.docs.size);
      expect(built.docs.size).toBeLessThanOrEqual(live);
      expect(progress[progress.length - 1].done).toBe(summary.documents);
      // The swap is a single _aliases request.
      expect(os.requests.filter((r) => r === 'POST /_aliases')).toHaveLength(1);
    });

    it('the new index has OPENSEARCH_SHARDS shards, is sorted by (site_id, created_at desc, id desc) and requires routing', async () => {
      const summary = await t.app.get(ReindexService).reindex({ batchSize: 50 });
      const body = os.indices.get(summary.index)!.body as {
        settings: { number_of_shards: number; index: { sort: unknown } };
        mappings: { _routing: unknown };
      };
      expect(body.settings.number_of_shards).toBe(1);
      expect(body.settings.index.sort).toEqual({
        field: ['site_id', 'created_at', 'id'],
        order: ['asc', 'desc', 'desc'],
      });
      expect(body.mappings._routing).toEqual({ required: true });
      for (const doc of os.indices.get(summary.index)!.docs.values())
        expect(doc.routing).toBe(doc.source.site_id);
    });

    it('batches are copied in parallel, never more at once than the concurrency', async () => {
      const org = await createOrganization(t.app);
      const mine: string[] = [];
      for (let i = 0; i < 6; i++) mine.push((await recordConversation(t, org)).id);
      os.bulkDelayMs = 100;
      os.maxBulkInFlight = 0;
      // Slow bulks until three were seen in flight at once, then full speed: the reindex copies
      // every row of the shared database (other suites' too), 2 per batch, and 100 ms for each of
      // thousands of batches ran past the test's timeout.
      const speedUp = setInterval(() => {
        if (os.maxBulkInFlight >= 3) os.bulkDelayMs = 0;
      }, 20);
      try {
        const summary = await t.app.get(ReindexService).reindex({ batchSize: 2, concurrency: 3 });
        expect(summary.batches).toBeGreaterThanOrEqual(3);
        expect(os.maxBulkInFlight).toBe(3);
        // Every batch was copied (other suites share the database: count only this one's rows).
        const built = os.indices.get(summary.index)!;
        for (const id of mine) expect(built.docs.has(id)).toBe(true);
        expect(built.docs.size).toBe(summary.documents);
      } finally {
        clearInterval(speedUp);
        os.bulkDelayMs = 0;
      }
    }, 60_000);

    it('a failed reindex leaves the outbox as it found it: off stays off, on stays on', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const outbox = t.app.get(SearchOutboxRepository);
      os.errorIds.set(c.id, { status: 400, type: 'mapper_parsing_exception', reason: 'steered by the test' });
      try {
        await outbox.setMirrorEnabled(false);
        await expect(t.app.get(ReindexService).reindex({ batchSize: 50 })).rejects.toThrow(
          /mapper_parsing_exception/,
        );
        expect(await outbox.mirrorEnabled()).toBe(false);
        await outbox.setMirrorEnabled(true);
        await expect(t.app.get(ReindexService).reindex({ batchSize: 50 })).rejects.toThrow(
          /mapper_parsing_exception/,
        );
        expect(await outbox.mirrorEnabled()).toBe(true);
        // The half-built index was deleted; the alias still points at the previous one.
        expect([...os.indices.keys()]).toEqual(['conversations_v1']);
      } finally {
        os.errorIds.clear();
        await outbox.setMirrorEnabled(true);
      }
    });

    it('npm run cli -- search:reindex prints the JSON summary on stdout', async () => {
      let stdout = '';
      let stderr = '';
      const code = await runCli(['search:reindex', '--delete-previous'], {
        stdout: (s) => (stdout += s),
        stderr: (s) => (stderr += s),
        env: {
          ...process.env,
          DATABASE_URL: process.env[TEST_RUN_ENV.database],
          OPENSEARCH_URL: os.url,
          OPENSEARCH_INDEX: CONVERSATIONS_ALIAS,
          LOG_LEVEL: 'silent',
        },
      });
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      const summary = JSON.parse(stdout);
      expect(summary).toMatchObject({
        alias: 'conversations',
        previousIndices: ['conversations_v1'],
        deletedIndices: ['conversations_v1'],
      });
      expect(os.indices.has('conversations_v1')).toBe(false);
      expect([...os.indices.get(summary.index)!.aliases]).toEqual([CONVERSATIONS_ALIAS]);
    });

    it('search:reindex without OPENSEARCH_URL fails with a message on stderr', async () => {
      let stdout = '';
      let stderr = '';
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        DATABASE_URL: process.env[TEST_RUN_ENV.database],
        LOG_LEVEL: 'silent',
      };
      delete env.OPENSEARCH_URL;
      const code = await runCli(['search:reindex'], {
        stdout: (s) => (stdout += s),
        stderr: (s) => (stderr += s),
        env,
      });
      expect({ code, stdout, stderr }).toEqual({
        code: 1,
        stdout: '',
        stderr: 'error: OPENSEARCH_URL is not set\n',
      });
    });

    it('the first build creates conversations_v1 behind the alias', async () => {
      os.indices.clear();
      const summary = await t.app.get(ReindexService).reindex();
      expect(summary.index).toBe('conversations_v1');
      expect(summary.previousIndices).toEqual([]);
      expect([...os.indices.get('conversations_v1')!.aliases]).toEqual([CONVERSATIONS_ALIAS]);
      const mapping = os.indices.get('conversations_v1')!.body as {
        mappings: { properties: Record<string, { type: string }> };
      };
      expect(mapping.mappings.properties.title.type).toBe('text');
      expect(mapping.mappings.properties.label_tokens.type).toBe('keyword');
    });
  });

  describe('SEARCH_SYNC_FOR_TESTS (the parity suite): each search sees every write, and nothing falls back', () => {
    let synced: TestApp;
    beforeAll(async () => {
      synced = await createTestApp(
        {
          ...OWN_BUDGET,
          SEARCH_BACKEND: 'opensearch',
          OPENSEARCH_URL: os.url,
          OPENSEARCH_INDEX: CONVERSATIONS_ALIAS,
          SEARCH_SYNC_FOR_TESTS: 'true',
        },
        { redisKeyPrefixSuffix: 'search-mirror:' },
      );
    });
    afterAll(() => synced?.close());

    it("the site's outbox is drained and the index refreshed before the search", async () => {
      os.indices.clear();
      os.addIndex('conversations_v1', ['conversations']);
      const own = await createOrganization(synced.app);
      const c = await recordConversation(synced, own, { title: 'Synced before search' });
      os.requests.length = 0;
      os.searchHandler = () => ({
        hits: { hits: [{ _id: c.id, sort: [own.site.id, Date.parse(c.createdAt), c.id] }] },
      });
      const res = await synced.http().get(`/api/v1/sites/${own.site.id}/conversations`).set(own.auth);
      expect(res.status).toBe(200);
      expect(res.body.data.map((x: { id: string }) => x.id)).toEqual([c.id]);
      expect(os.doc(c.id)?.source).toMatchObject({ title: 'Synced before search' });
      const bulk = os.requests.indexOf('POST /_bulk');
      const refresh = os.requests.findIndex((r) => r.endsWith('/_refresh'));
      const search = os.requests.findIndex((r) => r.endsWith('/_search'));
      expect(bulk).toBeGreaterThanOrEqual(0);
      expect(refresh).toBeGreaterThan(bulk);
      expect(search).toBeGreaterThan(refresh);
    });

    it('an OpenSearch failure is not hidden by the Postgres fallback', async () => {
      const own = await createOrganization(synced.app);
      await recordConversation(synced, own);
      os.mode = { status: 503 };
      const res = await synced.http().get(`/api/v1/sites/${own.site.id}/conversations`).set(own.auth);
      expect(res.status).toBe(500);
    });
  });

  describe('with WORKERS=on and OPENSEARCH_URL set, a Bull job drains the outbox by itself', () => {
    let worker: TestApp;
    beforeAll(async () => {
      worker = await createTestApp(
        { OPENSEARCH_URL: os.url, OPENSEARCH_INDEX: CONVERSATIONS_ALIAS, WORKERS: 'on' },
        { redisKeyPrefixSuffix: 'mirror-worker:' },
      );
    });
    afterAll(() => worker?.close());

    it('a recorded conversation reaches the index without any call from the test', async () => {
      const org = await createOrganization(worker.app);
      const c = await recordConversation(worker, org, { title: 'Drained by the worker' });
      // Waits for the state, not for a duration: the loop ends as soon as the row is drained.
      for (let i = 0; i < 200 && (await rowsFor(c.id)).length > 0; i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(await rowsFor(c.id)).toEqual([]);
      expect(os.doc(c.id)?.source).toMatchObject({ title: 'Drained by the worker' });
    });
  });

  describe('nothing is lost while Redis is down: the outbox waits, then drains', () => {
    /** A TCP relay to the real Redis that the test can cut and restore. */
    class RedisRelay {
      private server?: TcpServer;
      private readonly sockets = new Set<Socket>();
      constructor(readonly port: number) {}
      async up(): Promise<void> {
        if (this.server) return;
        this.server = createTcpServer((client) => {
          const upstream = new Socket();
          upstream.connect(6379, '127.0.0.1');
          for (const s of [client, upstream]) {
            this.sockets.add(s);
            s.on('error', () => undefined);
            s.on('close', () => this.sockets.delete(s));
          }
          client.pipe(upstream).pipe(client);
        });
        await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
      }
      async down(): Promise<void> {
        for (const s of this.sockets) s.destroy();
        await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
        this.server = undefined;
      }
    }

    let relay: RedisRelay;
    let worker: TestApp;
    beforeAll(async () => {
      const probe = createTcpServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      const port = (probe.address() as { port: number }).port;
      await new Promise<void>((resolve) => probe.close(() => resolve()));
      relay = new RedisRelay(port);
      await relay.up();
      worker = await createTestApp(
        {
          OPENSEARCH_URL: os.url,
          OPENSEARCH_INDEX: CONVERSATIONS_ALIAS,
          WORKERS: 'on',
          REDIS_URL: `redis://127.0.0.1:${port}`,
        },
        { redisKeyPrefixSuffix: 'mirror-relay:' },
      );
    });
    afterAll(async () => {
      await relay?.up();
      await worker?.close();
      await relay?.down();
    });

    it('a conversation recorded while Redis is down stays in the outbox and is indexed once Redis is back', async () => {
      const org = await createOrganization(worker.app);
      await relay.down();
      const c = await recordConversation(worker, org, { title: 'Recorded while Redis was down' });
      // More than one drain interval passes with Redis cut: no drain job can run, the row waits.
      await new Promise((r) => setTimeout(r, DRAIN_INTERVAL_MS * 1.5));
      expect((await rowsFor(c.id)).length).toBeGreaterThan(0);
      expect(os.doc(c.id)).toBeUndefined();

      await relay.up();
      for (let i = 0; i < 300 && (await rowsFor(c.id)).length > 0; i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(await rowsFor(c.id)).toEqual([]);
      expect(os.doc(c.id)?.source).toMatchObject({ title: 'Recorded while Redis was down' });
    });
  });
});
