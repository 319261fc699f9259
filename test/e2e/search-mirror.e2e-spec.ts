import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Client } from '@opensearch-project/opensearch';
import { createServer as createTcpServer, Server as TcpServer, Socket } from 'node:net';
import { DataSource } from 'typeorm';
import { runCli } from '../../src/cli/run-cli';
import { SearchIndexer } from '../../src/search/mirror/search-indexer.service';
import { DRAIN_INTERVAL_MS, SearchMirrorScheduler } from '../../src/search/mirror/search-mirror.scheduler';
import { SearchOutboxRepository } from '../../src/search/mirror/search-outbox.repository';
import {
  conversationIndexBody,
  ConversationSourceRow,
  MIRROR_REFRESH_INTERVAL,
  SOURCE_COLUMNS,
  toDocument,
} from '../../src/search/opensearch/conversation-index';
import { indexNames } from '../../src/search/opensearch/opensearch-client';
import { ReindexError, ReindexService } from '../../src/search/reindex.service';
import { AGENT, label, recordConversation, recordConversations } from '../factories/conversations';
import { createOrganization, createSite } from '../factories/organizations';
import { TcpPartitionProxy } from '../fixtures/tcp-partition-proxy';
import { createIsolatedDatabase, eventually } from '../setup/isolated-database';
import { SOURCE_LOADER, spawnProcess } from '../setup/service-process';
import { createTestApp, OWN_BUDGET, TestApp } from '../setup/test-app';
import {
  onTestOpenSearch,
  testIndexNames,
  testOpenSearchClient,
  testOpenSearchUrl,
} from '../setup/test-opensearch';
import { describeOnOpenSearch } from '../setup/opensearch-suites';

const OPENSEARCH_URL = testOpenSearchUrl();
const describeMirror = describeOnOpenSearch('search mirror suite (outbox, indexer and reindex)');
/** The suite's own alias: it builds indices and moves the alias. */
const NAMES = OPENSEARCH_URL ? testIndexNames('mirror') : indexNames('unused');
/** Two primary shards: a write, delete or delete-by-query routed to the wrong shard misses its document. */
const SHARDS = 2;
/** An index name a reindex could have chosen (`<prefix>_<time>`). */
const BUILDING_INDEX = `${NAMES.prefix}_20261121000000000`;
/** A keyword longer than Lucene's 32,766-byte term limit: OpenSearch refuses the document (item 400). */
const IMMENSE_TERM = `repeat('v', 40000)`;

/**
 * The mirror's outbox on real Postgres, the indexer and search:reindex on the run's real
 * OpenSearch (test/setup/test-opensearch.ts). Assertions read what the index holds: documents and
 * their external `_version` (GET with routing), aliases, settings, counts, indexing stats. The
 * suite has its own alias (`<run>_mirror`, two shards) and its own database: a drain takes every
 * due row and a reindex copies every conversation, so no other suite's rows may be in it, and the
 * outbox and indexer tests run in one file, never concurrently. Faults a real node cannot produce
 * on demand (503, timeouts, 429, failing delete-by-query, bulks in flight) are in
 * search-mirror-faults.e2e-spec.ts, against the loopback stand-in.
 */
describeMirror('search mirror', () => {
  let database: { url: string; drop: () => Promise<void> };
  let t: TestApp;
  let db: DataSource;
  let indexer: SearchIndexer;
  let engine: Client;
  /** The environment of every app of this suite: its database, its alias, two shards. */
  let suiteEnv: Record<string, string>;

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
  const versionOf = async (conversationId: string): Promise<number> =>
    Number(
      (
        await db.query(`SELECT search_version::text AS v FROM conversations WHERE id = $1`, [conversationId])
      )[0].v,
    );
  const makeDue = (where: string, id: string) =>
    db.query(`UPDATE search_outbox SET next_attempt_at = now() WHERE ${where} = $1`, [id]);

  interface StoredDoc {
    found: boolean;
    version?: number;
    routing?: string;
    source?: Record<string, unknown>;
  }
  /** The document as OpenSearch holds it (GET is real-time: no refresh needed). */
  const stored = async (index: string, id: string, routing: string): Promise<StoredDoc> => {
    const { body } = await engine.get({ index, id, routing }, { ignore: [404] });
    const doc = body as {
      found?: boolean;
      _version?: number;
      _routing?: string;
      _source?: Record<string, unknown>;
    };
    return { found: doc.found === true, version: doc._version, routing: doc._routing, source: doc._source };
  };
  /** `index` holds conversation `id` at its current version (and with `source`'s fields, when given). */
  /** `index` holds the document of `id` at `version` (with `source`'s fields when given). */
  const expectStoredAt = async (
    index: string,
    id: string,
    routing: string,
    version: number,
    source?: Record<string, unknown>,
  ) =>
    expect(await stored(index, id, routing)).toMatchObject({
      found: true,
      version,
      ...(source ? { source } : {}),
    });
  const expectCurrent = async (
    index: string,
    id: string,
    routing: string,
    source?: Record<string, unknown>,
  ) => expectStoredAt(index, id, routing, await versionOf(id), source);
  /** Indices holding `alias` (none when it is on no index). */
  const holders = async (alias: string): Promise<string[]> => {
    const { body, statusCode } = await engine.indices.getAlias({ name: alias }, { ignore: [404] });
    return statusCode === 404 ? [] : Object.keys(body as object).sort();
  };
  /** Index name → its aliases, for every index of the suite's mapping version. */
  const indicesWithAliases = async (): Promise<Record<string, string[]>> => {
    const { body } = await engine.indices.getAlias({ index: `${NAMES.prefix}*` });
    return Object.fromEntries(
      Object.entries(body as Record<string, { aliases: object }>).map(([name, e]) => [
        name,
        Object.keys(e.aliases).sort(),
      ]),
    );
  };
  const countOf = async (index: string, query: object = { match_all: {} }): Promise<number> => {
    await engine.indices.refresh({ index });
    const { body } = await engine.count({ index, body: { query } });
    return (body as { count: number }).count;
  };
  /** Successful and failed write operations the index's primaries have seen. */
  const indexing = async (index: string) => {
    const { body } = await engine.indices.stats({ index, metric: 'indexing' });
    const stats = (
      body as {
        indices: Record<string, { primaries: { indexing: { index_total: number; index_failed: number } } }>;
      }
    ).indices[index].primaries.indexing;
    return { written: stats.index_total, failed: stats.index_failed };
  };
  /** Creates an index as search:reindex does (mapping, sort, two shards), with these aliases. */
  const createIndex = async (index: string, aliases: string[], settings: Record<string, unknown> = {}) => {
    const body = conversationIndexBody(SHARDS, 0);
    await engine.indices.create({
      index,
      body: {
        ...body,
        settings: { ...body.settings, ...settings },
        aliases: Object.fromEntries(aliases.map((a) => [a, {}])),
      } as never,
    });
  };
  const deleteSuiteIndices = () =>
    engine.indices.delete({ index: `${NAMES.prefix}*`, expand_wildcards: 'all' } as never, { ignore: [404] });
  /** Writes a document straight into an index, as the indexer would (external version, routed by site). */
  const writeDirectly = (index: string, row: ConversationSourceRow, version: number, title = row.title) =>
    engine.index({
      index,
      id: row.id,
      routing: row.site_id,
      version,
      version_type: 'external',
      body: { ...toDocument(row), title },
    } as never);
  const sourceRow = async (
    id: string,
    q: { query: DataSource['query'] } = db,
  ): Promise<ConversationSourceRow> =>
    (await q.query(`SELECT ${SOURCE_COLUMNS} FROM conversations c WHERE c.id = $1`, [id]))[0];

  /**
   * Holds `LOCK TABLE <table> IN ACCESS EXCLUSIVE MODE` in a transaction of its own until
   * `release()`: every other statement reading the table waits, which stops a reindex or a drain
   * at a known step.
   */
  const lockTable = async (table: string) => {
    const runner = db.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    await runner.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    let released = false;
    return {
      query: (sql: string, params?: unknown[]) => runner.query(sql, params),
      release: async () => {
        if (released) return;
        released = true;
        try {
          await runner.commitTransaction();
        } finally {
          await runner.release();
        }
      },
    };
  };

  /**
   * A reindex stopped right after it created its index (its next step counts conversations,
   * which `lock` holds): the index being built, the lock (release it to let the copy go on) and
   * the reindex's promise.
   */
  const reindexHeldAtItsIndex = async () => {
    const lock = await lockTable('conversations');
    const reindexing = t.app.get(ReindexService).reindex({ batchSize: 50 });
    reindexing.catch(() => undefined);
    try {
      const [building] = await eventually(async () => {
        const found = await holders(NAMES.building);
        return found.length ? found : undefined;
      }, 'the index being built');
      return { lock, reindexing, building };
    } catch (error) {
      await lock.release();
      throw error;
    }
  };

  beforeAll(async () => {
    engine = testOpenSearchClient();
    database = await createIsolatedDatabase();
    suiteEnv = {
      DATABASE_URL: database.url,
      OPENSEARCH_URL: OPENSEARCH_URL!,
      OPENSEARCH_INDEX: NAMES.alias,
      OPENSEARCH_SHARDS: String(SHARDS),
      // Tests here stop a drain at a known step (a table lock) while a reindex copies the whole
      // suite's database: the waiting statement must outlive that copy on a loaded CI machine.
      DATABASE_STATEMENT_TIMEOUT_MS: '60000',
    };
    t = await createTestApp({ ...OWN_BUDGET, ...suiteEnv }, { redisKeyPrefixSuffix: 'search-mirror:' });
    db = t.app.get(DataSource);
    indexer = t.app.get(SearchIndexer);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await database?.drop();
    if (engine) await deleteSuiteIndices().finally(() => engine.close());
  });
  beforeEach(async () => {
    // Each test starts from an empty outbox and one empty index behind the alias.
    await indexer.drain();
    await deleteSuiteIndices();
    await createIndex(NAMES.prefix, [NAMES.alias]);
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
      expect(Number(rows[rows.length - 1].version)).toBe(await versionOf(c.id));
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
      expect(Number(afterLabel[afterLabel.length - 1].version)).toBe(await versionOf(c.id));
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
      expect(Number(siteRows[0].version)).toBeGreaterThan(await versionOf(b.id));
    });

    it('deleting a conversation row writes a delete row above every version it had', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const last = await versionOf(c.id);
      await db.query(`DELETE FROM conversations WHERE id = $1`, [c.id]);
      const rows = await rowsFor(c.id);
      expect(rows[rows.length - 1].reason).toBe('delete');
      expect(Number(rows[rows.length - 1].version)).toBeGreaterThan(last);
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
      expect(await versionOf(c.id)).toBeGreaterThan(version);
    });
  });

  describe('the indexer drains the outbox with _bulk and external versions', () => {
    it('drains each row once: indexed with its version, the row removed, nothing sent again', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org, { title: 'Drained once' });
      await indexer.drain();
      // External versioning: the document's _version is the conversation's search_version.
      await expectCurrent(NAMES.prefix, c.id, org.site.id, {
        id: c.id,
        site_id: org.site.id,
        title: 'Drained once',
        channel: 'web',
        language: 'en',
        label_status: 'pending',
        created_at: c.createdAt,
      });
      expect(await rowsFor(c.id)).toEqual([]);

      const written = await indexing(NAMES.prefix);
      expect((await indexer.drain()).taken).toBe(0);
      expect(await indexing(NAMES.prefix)).toEqual(written);
    });

    it('several rows of one conversation become one action with the newest version', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      await label(t.app, c.id);
      expect((await rowsFor(c.id)).length).toBeGreaterThan(1);
      const before = await indexing(NAMES.prefix);
      await indexer.drain();
      // One write, accepted: not one per row (an older one would also count as failed, 409).
      const after = await indexing(NAMES.prefix);
      expect({ written: after.written - before.written, failed: after.failed - before.failed }).toEqual({
        written: 1,
        failed: 0,
      });
      await expectCurrent(NAMES.prefix, c.id, org.site.id, { label_status: 'labeled', score_quality: 0.8 });
    });

    it('a version conflict counts as success: the index already holds a newer state', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const row = await sourceRow(c.id);
      const newer = (await versionOf(c.id)) + 1_000_000;
      await writeDirectly(NAMES.prefix, row, newer, 'newer');
      const result = await indexer.drain();
      expect(result.postponed).toBe(0);
      expect(await rowsFor(c.id)).toEqual([]);
      await expectStoredAt(NAMES.prefix, c.id, org.site.id, newer, { title: 'newer' });
    });

    it('a delete of a document the index does not hold counts as success (404 not_found)', async () => {
      const org = await createOrganization(t.app);
      const outbox = t.app.get(SearchOutboxRepository);
      // Recorded with the outbox off: the index never received it.
      await outbox.setMirrorEnabled(false);
      const c = await recordConversation(t, org).finally(() => outbox.setMirrorEnabled(true));
      await db.query(`DELETE FROM conversations WHERE id = $1`, [c.id]);
      const [{ version }] = await rowsFor(c.id);
      const result = await indexer.drain();
      expect(result).toMatchObject({ taken: 1, acknowledged: 1, postponed: 0 });
      expect(await rowsFor(c.id)).toEqual([]);
      // The delete left a tombstone at its version: a late copy of the older state is refused.
      const late = await engine.index(
        {
          index: NAMES.prefix,
          id: c.id,
          routing: org.site.id,
          version: Number(version) - 1,
          version_type: 'external',
          body: { id: c.id, site_id: org.site.id },
        } as never,
        { ignore: [409] },
      );
      expect(late.statusCode).toBe(409);
      expect((await stored(NAMES.prefix, c.id, org.site.id)).found).toBe(false);
    });

    it('other item errors are kept with the attempt counted and the error recorded', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const other = await recordConversation(t, org);
      // A real item error: OpenSearch refuses a keyword longer than Lucene's term limit.
      await db.query(`UPDATE conversations SET agent_version_id = ${IMMENSE_TERM} WHERE id = $1`, [c.id]);
      try {
        await indexer.drain();
        const rows = await rowsFor(c.id);
        expect(rows.length).toBeGreaterThan(0);
        for (const r of rows)
          expect(r).toMatchObject({
            attempts: 1,
            due: false,
            last_error: expect.stringMatching(
              /^400 illegal_argument_exception: .*immense term.*agent_version_id/,
            ),
          });
        expect((await stored(NAMES.prefix, c.id, org.site.id)).found).toBe(false);
        // The rest of the batch went through.
        expect(await rowsFor(other.id)).toEqual([]);
        expect((await stored(NAMES.prefix, other.id, org.site.id)).found).toBe(true);

        await makeDue('conversation_id', c.id);
        await indexer.drain();
        expect((await rowsFor(c.id)).every((r) => r.attempts === 2)).toBe(true);
      } finally {
        await db.query(`UPDATE conversations SET agent_version_id = $2 WHERE id = $1`, [
          c.id,
          AGENT.versionId,
        ]);
      }
      // Once the row is fixed its next change goes through, and the kept rows with it.
      await makeDue('conversation_id', c.id);
      await indexer.drain();
      expect(await rowsFor(c.id)).toEqual([]);
      await expectCurrent(NAMES.prefix, c.id, org.site.id);
    });

    it('a deleted site removes its conversations from the index with one delete-by-query on site_id, routed to the site', async () => {
      await createIndex(BUILDING_INDEX, [NAMES.building]);
      const org = await createOrganization(t.app);
      const other = await createSite(t.app, org.organization.id);
      const c = await recordConversation(t, org, {}, other.id);
      const d = await recordConversation(t, org, {}, other.id);
      const kept = await recordConversation(t, org);
      await indexer.drain();
      for (const index of [NAMES.prefix, BUILDING_INDEX])
        expect((await stored(index, c.id, other.id)).found).toBe(true);

      // A document carrying the site's id on the other shard (the mirror never writes one): a
      // delete-by-query routed to the site searches the site's shard only, so it stays.
      const shardOf = async (routing: string) =>
        (await engine.searchShards({ index: NAMES.prefix, routing })).body.shards[0][0].shard;
      let elsewhere = '';
      for (let i = 0; !elsewhere; i++)
        if ((await shardOf(`elsewhere-${i}`)) !== (await shardOf(other.id))) elsewhere = `elsewhere-${i}`;
      const planted = { ...(await sourceRow(c.id)), id: 'conv_planted', site_id: other.id };
      await engine.index({
        index: NAMES.prefix,
        id: planted.id,
        routing: elsewhere,
        body: toDocument(planted),
      } as never);

      expect((await t.http().delete(`/api/v1/sites/${other.id}`).set(org.auth)).status).toBe(204);
      const result = await indexer.drain();
      expect(result).toMatchObject({ taken: 1, acknowledged: 1, postponed: 0 });
      for (const index of [NAMES.prefix, BUILDING_INDEX])
        for (const id of [c.id, d.id]) expect((await stored(index, id, other.id)).found).toBe(false);
      expect((await stored(NAMES.prefix, planted.id, elsewhere)).found).toBe(true);
      expect(await db.query(`SELECT 1 FROM search_outbox WHERE site_id = $1`, [other.id])).toEqual([]);

      // Other sites' documents, and documents written after the delete-by-query, are kept.
      const later = await recordConversation(t, org);
      await db.query(`UPDATE conversations SET title = 'after the site deletion' WHERE id = $1`, [kept.id]);
      await indexer.drain();
      for (const index of [NAMES.prefix, BUILDING_INDEX]) {
        await expectCurrent(index, kept.id, org.site.id, { title: 'after the site deletion' });
        expect((await stored(index, later.id, org.site.id)).found).toBe(true);
        expect(await countOf(index, { term: { site_id: org.site.id } })).toBe(2);
      }
    });

    it("a deleted site's conversations are removed from an index being built, which is never refreshed (refresh_interval -1)", async () => {
      // As search:reindex creates it: a delete-by-query only finds what a refresh made searchable.
      await createIndex(BUILDING_INDEX, [NAMES.building], { refresh_interval: '-1' });
      const org = await createOrganization(t.app);
      const other = await createSite(t.app, org.organization.id);
      const c = await recordConversation(t, org, {}, other.id);
      await indexer.drain();
      expect((await stored(BUILDING_INDEX, c.id, other.id)).found).toBe(true);
      expect((await t.http().delete(`/api/v1/sites/${other.id}`).set(org.auth)).status).toBe(204);
      await indexer.drain();
      expect(await db.query(`SELECT 1 FROM search_outbox WHERE site_id = $1`, [other.id])).toEqual([]);
      for (const index of [NAMES.prefix, BUILDING_INDEX])
        expect((await stored(index, c.id, other.id)).found).toBe(false);
    });

    it('every document is written and deleted with its site as routing', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      await indexer.drain();
      expect(await stored(NAMES.prefix, c.id, org.site.id)).toMatchObject({
        found: true,
        routing: org.site.id,
      });
      // Routing is required by the mapping: a write or delete without it would be refused.
      const unrouted = await engine.get({ index: NAMES.prefix, id: c.id }, { ignore: [400] });
      expect(unrouted.body).toMatchObject({ error: { type: 'routing_missing_exception' } });

      await db.query(`DELETE FROM conversations WHERE id = $1`, [c.id]);
      await indexer.drain();
      expect(await rowsFor(c.id)).toEqual([]);
      // Two shards: a delete routed elsewhere would have answered not_found and left the document.
      expect((await stored(NAMES.prefix, c.id, org.site.id)).found).toBe(false);
    });

    it('with no conversations index yet, rows wait in the outbox', async () => {
      await deleteSuiteIndices();
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const result = await indexer.drain();
      expect(result.targets).toEqual([]);
      expect((await rowsFor(c.id)).length).toBeGreaterThan(0);
    });

    it('while a reindex builds an index, every change is written to it as well', async () => {
      await createIndex(BUILDING_INDEX, [NAMES.building], { refresh_interval: '-1' });
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const result = await indexer.drain();
      expect(result.targets).toEqual([NAMES.prefix, BUILDING_INDEX]);
      for (const index of [NAMES.prefix, BUILDING_INDEX]) await expectCurrent(index, c.id, org.site.id);
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
    const liveCount = async (): Promise<number> =>
      (
        await db.query(
          `SELECT count(*)::int AS n FROM conversations c JOIN sites s ON s.id = c.site_id AND s.deleted_at IS NULL`,
        )
      )[0].n;

    it('copies every conversation of live sites with its version, then moves the alias in one request', async () => {
      const org = await createOrganization(t.app);
      const kept = await recordConversation(t, org);
      for (let i = 0; i < 6; i++) await recordConversation(t, org);
      const other = await createSite(t.app, org.organization.id);
      const gone = await recordConversation(t, org, {}, other.id);
      expect((await t.http().delete(`/api/v1/sites/${other.id}`).set(org.auth)).status).toBe(204);
      await indexer.drain();

      // Watches the alias while the reindex runs: it is on exactly one index at every moment.
      const seen: string[][] = [];
      let done = false;
      const watching = (async () => {
        while (!done) seen.push(await holders(NAMES.alias));
      })();
      const progress: Array<{ done: number; total: number }> = [];
      const summary = await t.app
        .get(ReindexService)
        .reindex({ batchSize: 2, concurrency: 3, onProgress: (p) => progress.push(p) })
        .finally(() => (done = true));
      await watching;
      seen.push(await holders(NAMES.alias));

      expect(summary.previousIndices).toEqual([NAMES.prefix]);
      expect(summary.index).toMatch(new RegExp(`^${NAMES.prefix}_\\d{17}$`));
      expect(seen.filter((h) => h.length !== 1)).toEqual([]);
      expect(seen[0]).toEqual([NAMES.prefix]);
      expect(seen[seen.length - 1]).toEqual([summary.index]);
      // The previous index keeps no alias; the building alias is gone.
      expect(await indicesWithAliases()).toEqual({
        [NAMES.prefix]: [],
        [summary.index]: [NAMES.alias],
      });
      expect(await holders(NAMES.building)).toEqual([]);

      await expectCurrent(summary.index, kept.id, org.site.id);
      expect((await stored(summary.index, gone.id, other.id)).found).toBe(false);
      const live = await liveCount();
      expect(summary.documents).toBe(live);
      expect(await countOf(summary.index)).toBe(live);
      // Batches of 2 ids in primary-key order over every conversation; one holding only the
      // deleted site's conversations is read but sends nothing.
      const ids: Array<{ id: string; live: boolean }> = await t.db.query(
        `SELECT c.id, s.deleted_at IS NULL AS live FROM conversations c JOIN sites s ON s.id = c.site_id ORDER BY c.id COLLATE "C"`,
      );
      let written = 0;
      for (let i = 0; i < ids.length; i += 2) if (ids.slice(i, i + 2).some((r) => r.live)) written++;
      expect(summary.batches).toBe(written);
      expect(progress[progress.length - 1]).toEqual({ done: live, total: live });
    });

    it('the new index has OPENSEARCH_SHARDS shards, is sorted by (site_id, created_at desc, id desc) and requires routing', async () => {
      const org = await createOrganization(t.app);
      await recordConversation(t, org);
      const summary = await t.app.get(ReindexService).reindex({ batchSize: 50 });
      const { body } = await engine.indices.getSettings({ index: summary.index, flat_settings: true });
      const settings = (body as Record<string, { settings: Record<string, unknown> }>)[summary.index]
        .settings;
      expect(settings).toMatchObject({
        'index.number_of_shards': String(SHARDS),
        'index.number_of_replicas': '0',
        'index.sort.field': ['site_id', 'created_at', 'id'],
        'index.sort.order': ['asc', 'desc', 'desc'],
      });
      // Built with refresh_interval -1, then the mirror's interval once copied.
      expect(settings['index.refresh_interval']).toBe(MIRROR_REFRESH_INTERVAL);
      const mapping = (await engine.indices.getMapping({ index: summary.index })).body as Record<
        string,
        { mappings: { _routing?: unknown } }
      >;
      expect(mapping[summary.index].mappings._routing).toEqual({ required: true });

      const hits = (
        await engine.search({ index: summary.index, body: { size: 10_000, _source: ['site_id'] } })
      ).body.hits.hits as Array<{ _routing?: string; _source: { site_id: string } }>;
      expect(hits.length).toBe(await liveCount());
      for (const hit of hits) expect(hit._routing).toBe(hit._source.site_id);

      const unrouted = await engine.bulk({
        body: [{ index: { _index: summary.index, _id: 'conv_unrouted' } }, { site_id: org.site.id }],
      });
      expect(unrouted.body.items[0].index?.error?.type).toBe('routing_missing_exception');
    });

    it('a site deleted while the index is built leaves none of its conversations in it', async () => {
      const org = await createOrganization(t.app);
      const other = await createSite(t.app, org.organization.id);
      const c = await recordConversation(t, org, {}, other.id);
      const kept = await recordConversation(t, org);
      const { lock, reindexing, building } = await reindexHeldAtItsIndex();
      try {
        // The indexer wrote the site's conversation there, then the site was deleted. (Read
        // through the lock's transaction: any other read of conversations waits for it.)
        const row = await sourceRow(c.id, lock);
        await writeDirectly(building, row, Number(row.search_version));
        await lock.query(`UPDATE sites SET deleted_at = clock_timestamp() WHERE id = $1`, [other.id]);
      } finally {
        await lock.release();
      }
      const summary = await reindexing;
      expect((await stored(summary.index, c.id, other.id)).found).toBe(false);
      expect((await stored(summary.index, kept.id, org.site.id)).found).toBe(true);
      expect(await countOf(summary.index, { term: { site_id: other.id } })).toBe(0);
    });

    it('a site whose deletion began before the build and committed while it copied leaves none of its conversations in it', async () => {
      const org = await createOrganization(t.app);
      const other = await createSite(t.app, org.organization.id);
      const c = await recordConversation(t, org, {}, other.id);
      const kept = await recordConversation(t, org);
      await indexer.drain();
      const live = await liveCount();
      // The site's deletion (as SitesRepository.markDeleted writes it: deleted_at = now(), its
      // transaction's start), begun before the reindex, committed once every batch is copied.
      const deletion = db.createQueryRunner();
      const sitesLock = db.createQueryRunner();
      let lockingSites: Promise<unknown> | undefined;
      try {
        for (const runner of [deletion, sitesLock]) {
          await runner.connect();
          await runner.startTransaction();
        }
        await deletion.query(`UPDATE sites SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL`, [
          other.id,
        ]);
        const reindexing = t.app.get(ReindexService).reindex({
          batchSize: 50,
          concurrency: 1,
          onProgress: ({ done, total }) => {
            // Every batch is copied, the site read as live (its deletion not committed): the
            // build's next read of sites waits behind this lock, which waits for the deletion.
            if (done > 0 && done >= total && !lockingSites)
              lockingSites = sitesLock.query(`LOCK TABLE sites IN ACCESS EXCLUSIVE MODE`);
          },
        });
        reindexing.catch(() => undefined);
        await eventually(async () => (lockingSites ? true : undefined), 'every batch copied');
        await deletion.commitTransaction();
        await lockingSites;
        await sitesLock.commitTransaction();
        const summary = await reindexing;
        // The copy read the site's conversation as live...
        expect(summary.documents).toBe(live);
        // ...and the new index keeps none of them.
        expect((await stored(summary.index, c.id, other.id)).found).toBe(false);
        expect(await countOf(summary.index, { term: { site_id: other.id } })).toBe(0);
        expect((await stored(summary.index, kept.id, org.site.id)).found).toBe(true);
      } finally {
        for (const runner of [deletion, sitesLock]) {
          if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
          await runner.release();
        }
      }
    });

    it('a copy written after the tombstone of a conversation deleted since it was read is refused, however late (index.gc_deletes)', async () => {
      // OpenSearch forgets a delete's tombstone after index.gc_deletes (60 s by default). The
      // suite's indices get 1 s by a template, so a copy held 3 s on the way shows in seconds
      // what one held over a minute (429 retries, a slow cluster) would do.
      const template = `${NAMES.alias}_short_gc_deletes`;
      await engine.indices.putIndexTemplate({
        name: template,
        body: { index_patterns: [`${NAMES.prefix}*`], template: { settings: { 'index.gc_deletes': '1s' } } },
      } as never);
      const proxy = new TcpPartitionProxy('127.0.0.1', Number(new URL(OPENSEARCH_URL!).port || 9200));
      const port = await proxy.start();
      let held = false;
      proxy.partitionWhen((chunk) => (held ||= chunk.includes('/_bulk')));
      // The reindex talks to OpenSearch through the proxy; the indexer directly.
      const slow = await createTestApp(
        { ...OWN_BUDGET, ...suiteEnv, OPENSEARCH_URL: `http://127.0.0.1:${port}` },
        { redisKeyPrefixSuffix: 'search-mirror-slow:' },
      );
      const deletion = db.createQueryRunner();
      try {
        const org = await createOrganization(t.app);
        const c = await recordConversation(t, org);
        const kept = await recordConversation(t, org);
        await indexer.drain();
        // Deleted in a transaction still open while the copy reads: the copy reads c.
        await deletion.connect();
        await deletion.startTransaction();
        await deletion.query(`DELETE FROM conversations WHERE id = $1`, [c.id]);
        const reindexing = slow.app.get(ReindexService).reindex({ batchSize: 10_000, concurrency: 1 });
        reindexing.catch(() => undefined);
        await eventually(async () => (held ? true : undefined), 'the copy held on its way');
        await deletion.commitTransaction();
        const [building] = await holders(NAMES.building);
        // The indexer deletes c from the index being built (a tombstone at c's last version)...
        expect((await indexer.drain()).targets).toEqual([NAMES.prefix, building].sort());
        expect((await stored(building, c.id, org.site.id)).found).toBe(false);
        // ...and the copy of c, older, arrives after the 1 s tombstone expiry.
        await new Promise((resolve) => setTimeout(resolve, 3000));
        proxy.heal();
        const summary = await reindexing;
        expect((await stored(summary.index, c.id, org.site.id)).found).toBe(false);
        expect(summary.newerAlready).toBe(1);
        expect((await stored(summary.index, kept.id, org.site.id)).found).toBe(true);
        // Once built the index forgets tombstones as any index does (the setting is reset).
        const { body } = await engine.indices.getSettings({ index: summary.index, flat_settings: true });
        expect(
          (body as Record<string, { settings: Record<string, unknown> }>)[summary.index].settings[
            'index.gc_deletes'
          ],
        ).toBeUndefined();
      } finally {
        proxy.heal();
        if (deletion.isTransactionActive) await deletion.rollbackTransaction().catch(() => undefined);
        await deletion.release();
        await slow.close();
        await proxy.close();
        await engine.indices.deleteIndexTemplate({ name: template }, { ignore: [404] });
      }
    }, 60_000);

    it('a copy never overwrites a newer state the indexer wrote meanwhile (external versions)', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org, { title: 'Older state' });
      const newer = (await versionOf(c.id)) + 1_000_000;
      const { lock, reindexing, building } = await reindexHeldAtItsIndex();
      try {
        // Written before the copy reads the conversation: the copy's state is older.
        await writeDirectly(building, await sourceRow(c.id, lock), newer, 'Newer state');
      } finally {
        await lock.release();
      }
      const summary = await reindexing;
      expect(summary.newerAlready).toBe(1);
      await expectStoredAt(NAMES.alias, c.id, org.site.id, newer, { title: 'Newer state' });
    });

    it('a reindex while the indexer drains loses no change and keeps every newest state', async () => {
      const org = await createOrganization(t.app);
      const ids = await recordConversations(t, org, 24);
      await indexer.drain();
      const deleted = new Set<string>();
      let drainsIntoBoth = 0;
      let settled = false;
      const reindexing = t.app
        .get(ReindexService)
        .reindex({ batchSize: 3, concurrency: 2 })
        .finally(() => (settled = true));
      for (let i = 0; !settled; i++) {
        const id = ids[i % ids.length];
        if (i % 5 === 4 && !deleted.has(id)) {
          await db.query(`DELETE FROM conversations WHERE id = $1`, [id]);
          deleted.add(id);
        } else if (!deleted.has(id))
          await db.query(`UPDATE conversations SET title = $2 WHERE id = $1`, [id, `Edit ${i}`]);
        if (i % 3 === 0) ids.push((await recordConversation(t, org)).id);
        if ((await indexer.drain()).targets.length === 2) drainsIntoBoth++;
      }
      const summary = await reindexing;
      await indexer.drain();
      // The indexer wrote into the index being built: the race under test took place.
      expect(drainsIntoBoth).toBeGreaterThan(0);

      const rows: Array<{ id: string; title: string; v: string }> = await db.query(
        `SELECT id, title, search_version::text AS v FROM conversations WHERE site_id = $1`,
        [org.site.id],
      );
      for (const row of rows) {
        const doc = await stored(summary.index, row.id, org.site.id);
        expect({ id: row.id, version: doc.version, title: doc.source?.title }).toEqual({
          id: row.id,
          version: Number(row.v),
          title: row.title,
        });
      }
      for (const id of deleted) expect((await stored(summary.index, id, org.site.id)).found).toBe(false);
      expect(await countOf(summary.index, { term: { site_id: org.site.id } })).toBe(rows.length);
    }, 60_000);

    it('a drain waiting for its rows while a reindex swaps the alias writes them to the new index', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      await indexer.drain();
      // The drain waits on the outbox; the reindex does not read it.
      const lock = await lockTable('search_outbox');
      const draining = indexer.drain();
      draining.catch(() => undefined);
      try {
        await eventually(async () => {
          const waiting = await db.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE SKIP LOCKED%'`,
          );
          return waiting.length ? true : undefined;
        }, 'the drain waiting on the outbox');
        const summary = await t.app.get(ReindexService).reindex({ batchSize: 50 });
        expect(await holders(NAMES.alias)).toEqual([summary.index]);
        await lock.query(`UPDATE conversations SET title = 'Changed after the copy' WHERE id = $1`, [c.id]);
      } finally {
        await lock.release();
      }
      expect((await draining).acknowledged).toBeGreaterThan(0);
      expect(await rowsFor(c.id)).toEqual([]);
      await expectCurrent(NAMES.alias, c.id, org.site.id, { title: 'Changed after the copy' });
    });

    it('a failed reindex leaves the outbox as it found it: off stays off, on stays on', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      await indexer.drain();
      const outbox = t.app.get(SearchOutboxRepository);
      // A document OpenSearch refuses (a real item error) fails the copy.
      await db.query(`UPDATE conversations SET agent_version_id = ${IMMENSE_TERM} WHERE id = $1`, [c.id]);
      try {
        await outbox.setMirrorEnabled(false);
        await expect(t.app.get(ReindexService).reindex({ batchSize: 50 })).rejects.toThrow(/immense term/);
        expect(await outbox.mirrorEnabled()).toBe(false);
        await outbox.setMirrorEnabled(true);
        await expect(t.app.get(ReindexService).reindex({ batchSize: 50 })).rejects.toThrow(/immense term/);
        expect(await outbox.mirrorEnabled()).toBe(true);
        // The half-built index was deleted; the alias still points at the previous one.
        expect(await indicesWithAliases()).toEqual({ [NAMES.prefix]: [NAMES.alias] });
        expect(await holders(NAMES.building)).toEqual([]);
      } finally {
        await outbox.setMirrorEnabled(true);
        await db.query(`UPDATE conversations SET agent_version_id = $2 WHERE id = $1`, [
          c.id,
          AGENT.versionId,
        ]);
      }
    });

    it('a build killed midway leaves its index carrying the building alias: the next reindex deletes it first, and the indexer writes to it no more', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      await indexer.drain();
      // Stops the build right after it created its index (its next step counts conversations).
      const lock = await lockTable('conversations');
      const build = spawnProcess(process.execPath, [...SOURCE_LOADER, 'src/cli/main.ts', 'search:reindex'], {
        ...suiteEnv,
        LOG_LEVEL: 'silent',
      });
      let leftover: string;
      try {
        [leftover] = await eventually(
          async () => {
            const found = await holders(NAMES.building);
            return found.length ? found : undefined;
          },
          'the index the build creates',
          60_000,
        );
      } finally {
        build.child.kill('SIGKILL');
        await build.exited;
        await lock.release();
      }
      // The dead build's sessions end (its advisory lock, if any, with them).
      await eventually(async () => {
        const held = await db.query(
          `SELECT 1 FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE l.locktype = 'advisory' AND d.datname = current_database()`,
        );
        return held.length === 0 ? true : undefined;
      }, 'the killed build to leave Postgres');
      expect(await indicesWithAliases()).toEqual({
        [NAMES.prefix]: [NAMES.alias],
        [leftover]: [NAMES.building],
      });
      // Left alone, it would get every change for ever.
      await db.query(`UPDATE conversations SET title = 'before the next reindex' WHERE id = $1`, [c.id]);
      expect((await indexer.drain()).targets).toEqual([NAMES.prefix, leftover].sort());

      const summary = await t.app.get(ReindexService).reindex({ batchSize: 50 });
      expect(await indicesWithAliases()).toEqual({ [NAMES.prefix]: [], [summary.index]: [NAMES.alias] });
      expect(summary.abandonedIndices).toEqual([leftover]);
      await db.query(`UPDATE conversations SET title = 'after the next reindex' WHERE id = $1`, [c.id]);
      expect((await indexer.drain()).targets).toEqual([summary.index]);
      expect((await engine.indices.exists({ index: leftover })).body).toBe(false);
      await expectCurrent(NAMES.alias, c.id, org.site.id, { title: 'after the next reindex' });
    }, 90_000);

    it('one reindex at a time: a second one started meanwhile fails at once, having changed nothing', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const service = t.app.get(ReindexService);
      const lock = await lockTable('conversations');
      const first = service.reindex({ batchSize: 50 });
      first.catch(() => undefined);
      let second: Promise<unknown> | undefined;
      let timer: NodeJS.Timeout | undefined;
      let building: string[] = [];
      try {
        building = await eventually(async () => {
          const found = await holders(NAMES.building);
          return found.length ? found : undefined;
        }, 'the first build');
        const before = await indicesWithAliases();
        second = service.reindex({ batchSize: 50 }).then(
          () => 'built',
          (error: unknown) => error,
        );
        const outcome = await Promise.race([
          second,
          new Promise((resolve) => (timer = setTimeout(() => resolve('still running after 5 s'), 5000))),
        ]);
        expect(outcome).toBeInstanceOf(ReindexError);
        expect((outcome as Error).message).toMatch(
          new RegExp(`another search:reindex of ${NAMES.alias} is running`),
        );
        // Neither a second index nor the first build's index deleted as a dead one.
        expect(await indicesWithAliases()).toEqual(before);
      } finally {
        clearTimeout(timer);
        await lock.release();
        await second;
      }
      const summary = await first;
      expect(summary.index).toBe(building[0]);
      expect(await indicesWithAliases()).toEqual({ [NAMES.prefix]: [], [summary.index]: [NAMES.alias] });
      await expectCurrent(NAMES.alias, c.id, org.site.id);
      // The lock went with the first build: the next one runs.
      await expect(service.reindex({ batchSize: 50 })).resolves.toMatchObject({ abandonedIndices: [] });
    });

    it('npm run cli -- search:reindex prints the JSON summary on stdout', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      let stdout = '';
      let stderr = '';
      const code = await runCli(['search:reindex', '--delete-previous'], {
        stdout: (s) => (stdout += s),
        stderr: (s) => (stderr += s),
        env: { ...process.env, ...suiteEnv, LOG_LEVEL: 'silent' },
      });
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      const summary = JSON.parse(stdout);
      expect(summary).toMatchObject({
        alias: NAMES.alias,
        previousIndices: [NAMES.prefix],
        deletedIndices: [NAMES.prefix],
        documents: await liveCount(),
        // Where the copy's time went.
        phases: {
          postgresReadMs: expect.any(Number),
          documentBuildMs: expect.any(Number),
          bulkMs: expect.any(Number),
          openSearchIndexingMs: expect.any(Number),
        },
      });
      expect(await indicesWithAliases()).toEqual({ [summary.index]: [NAMES.alias] });
      expect(await holders(NAMES.building)).toEqual([]);
      await expectCurrent(NAMES.alias, c.id, org.site.id);
    });

    it('search:reindex without OPENSEARCH_URL fails with a message on stderr', async () => {
      let stdout = '';
      let stderr = '';
      const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'silent' };
      // The service without OpenSearch at all (TEST_SEARCH_BACKEND=opensearch sets the backend too).
      for (const name of ['OPENSEARCH_URL', 'SEARCH_BACKEND', 'SEARCH_SYNC_FOR_TESTS']) delete env[name];
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

    it('the first build creates <alias>_v1 behind the alias', async () => {
      await deleteSuiteIndices();
      const summary = await t.app.get(ReindexService).reindex();
      expect(summary.index).toBe(NAMES.prefix);
      expect(summary.previousIndices).toEqual([]);
      expect(await indicesWithAliases()).toEqual({ [NAMES.prefix]: [NAMES.alias] });
      const mapping = (await engine.indices.getMapping({ index: NAMES.prefix })).body as Record<
        string,
        { mappings: { properties: Record<string, { type: string }> } }
      >;
      expect(mapping[NAMES.prefix].mappings.properties.title.type).toBe('text');
      expect(mapping[NAMES.prefix].mappings.properties.label_tokens.type).toBe('keyword');
      expect(await countOf(NAMES.alias)).toBe(await liveCount());
    });
  });

  describe('SEARCH_SYNC_FOR_TESTS (the parity suite): each search sees every write, and nothing falls back', () => {
    let synced: TestApp;
    beforeAll(async () => {
      synced = await createTestApp(
        { ...OWN_BUDGET, ...onTestOpenSearch(NAMES), ...suiteEnv, SEARCH_SYNC_FOR_TESTS: 'true' },
        { redisKeyPrefixSuffix: 'search-mirror:' },
      );
    });
    afterAll(() => synced?.close());

    it("the site's outbox is drained and the index refreshed before the search", async () => {
      // Never refreshed by itself: a search finds a document only after an explicit refresh.
      await engine.indices.putSettings({ index: NAMES.prefix, body: { index: { refresh_interval: '-1' } } });
      const own = await createOrganization(synced.app);
      // Postgres holds it, the index never received it: an answer from Postgres would list it.
      const outbox = synced.app.get(SearchOutboxRepository);
      await outbox.setMirrorEnabled(false);
      try {
        await recordConversation(synced, own, { title: 'Never mirrored' });
      } finally {
        await outbox.setMirrorEnabled(true);
      }
      const c = await recordConversation(synced, own, { title: 'Synced before search' });
      const res = await synced.http().get(`/api/v1/sites/${own.site.id}/conversations`).set(own.auth);
      expect(res.status).toBe(200);
      expect(res.body.data.map((x: { id: string }) => x.id)).toEqual([c.id]);
      expect(await rowsFor(c.id)).toEqual([]);
      await expectCurrent(NAMES.prefix, c.id, own.site.id, { title: 'Synced before search' });
    });
  });

  describe('with WORKERS=on and OPENSEARCH_URL set, a Bull job drains the outbox by itself', () => {
    let worker: TestApp;
    beforeAll(async () => {
      worker = await createTestApp(
        { ...suiteEnv, WORKERS: 'on' },
        { redisKeyPrefixSuffix: 'mirror-worker:' },
      );
    });
    afterAll(() => worker?.close());
    /** The outbox holds no row of `id` within `ms` (waits for the state, not for a duration). */
    const drainedWithin = async (id: string, ms: number) => {
      const deadline = Date.now() + ms;
      while (Date.now() < deadline && (await rowsFor(id)).length > 0)
        await new Promise((r) => setTimeout(r, 50));
      expect(await rowsFor(id)).toEqual([]);
    };

    it('a recorded conversation reaches the index without any call from the test', async () => {
      const org = await createOrganization(worker.app);
      const c = await recordConversation(worker, org, { title: 'Drained by the worker' });
      await drainedWithin(c.id, 20_000);
      await expectCurrent(NAMES.alias, c.id, org.site.id, { title: 'Drained by the worker' });
    });

    it("drains are woken by the outbox's notification, without waiting for the timer", async () => {
      // The timer stopped: only the notification of the commit can start a drain.
      const scheduler = worker.app.get(SearchMirrorScheduler);
      (scheduler as unknown as { job: { stop: () => void; start: () => void } }).job.stop();
      try {
        const org = await createOrganization(worker.app);
        const c = await recordConversation(worker, org, { title: 'Woken by the outbox' });
        await drainedWithin(c.id, 5_000);
        await expectCurrent(NAMES.alias, c.id, org.site.id, { title: 'Woken by the outbox' });
      } finally {
        (scheduler as unknown as { job: { start: () => void } }).job.start();
      }
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
        { ...suiteEnv, WORKERS: 'on', REDIS_URL: `redis://127.0.0.1:${port}` },
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
      expect((await stored(NAMES.alias, c.id, org.site.id)).found).toBe(false);

      await relay.up();
      for (let i = 0; i < 300 && (await rowsFor(c.id)).length > 0; i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(await rowsFor(c.id)).toEqual([]);
      await expectCurrent(NAMES.alias, c.id, org.site.id, { title: 'Recorded while Redis was down' });
    });
  });
});
