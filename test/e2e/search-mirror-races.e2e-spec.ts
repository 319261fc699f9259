import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Client } from '@opensearch-project/opensearch';
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { DataSource } from 'typeorm';
import { CRITERIA } from '../../src/labels/taxonomy';
import { SearchIndexer } from '../../src/search/mirror/search-indexer.service';
import { SearchOutboxRepository } from '../../src/search/mirror/search-outbox.repository';
import {
  conversationIndexBody,
  ConversationSourceRow,
  SOURCE_COLUMNS,
  toDocument,
} from '../../src/search/opensearch/conversation-index';
import { indexNames } from '../../src/search/opensearch/opensearch-client';
import { OpenSearchClients } from '../../src/search/opensearch/opensearch-clients';
import { ReindexService } from '../../src/search/reindex.service';
import { SearchSyncForTests } from '../../src/search/testing/search-sync-for-tests';
import { appendMessages, label, labeledOutcome, recordConversation } from '../factories/conversations';
import { createOrganization, createSite } from '../factories/organizations';
import { describeOnOpenSearch } from '../setup/opensearch-suites';
import { createIsolatedDatabase } from '../setup/isolated-database';
import { createTestApp, OWN_BUDGET, TestApp } from '../setup/test-app';
import { testIndexNames, testOpenSearchClient, testOpenSearchUrl } from '../setup/test-opensearch';

const OPENSEARCH_URL = testOpenSearchUrl();
const describeRaces = describeOnOpenSearch('search mirror races (concurrent drains on the real node)');
/** The suite's own alias: it moves it (a reindex during the race). */
const NAMES = OPENSEARCH_URL ? testIndexNames('races') : indexNames('unused');
/** Drains racing each other, as worker processes and synced requests do. */
const DRAINS = 4;
const WRITERS = 4;
const RACE_MS = 12_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const pick = <T>(list: T[]): T => list[Math.floor(Math.random() * list.length)];
/** A word of its own per message (the transcript check looks each one up). */
const token = () => `tok${randomBytes(5).toString('hex')}`;

/**
 * The mirror's ordering under concurrency (docs/opensearch.md, "Ordering"): whatever the number of
 * drains, a document in OpenSearch is never older than one already written for the same
 * conversation, around deletes of conversations and sites and a reindex too; and a synced search
 * (SEARCH_SYNC_FOR_TESTS) sees every change committed before it, even the rows another drain is
 * writing at that moment. Real Postgres, the run's real OpenSearch; the suite has its own
 * database (its drains take every due row) and its own alias.
 */
describeRaces('search mirror under concurrent drains', () => {
  let database: { url: string; drop: () => Promise<void> };
  let t: TestApp;
  let db: DataSource;
  let engine: Client;
  let sync: SearchSyncForTests;
  /** Drains of their own (own transactions, own bulks), like those of separate processes. */
  const drains: SearchIndexer[] = [];

  const stored = async (id: string, routing: string) => {
    const { body } = await engine.get({ index: NAMES.alias, id, routing }, { ignore: [404] });
    const doc = body as { found?: boolean; _version?: number; _source?: Record<string, unknown> };
    return { found: doc.found === true, version: doc._version, source: doc._source };
  };
  /** The conversation's current row when it exists on a live site, else undefined. */
  const liveRow = async (id: string): Promise<ConversationSourceRow | undefined> =>
    (
      await db.query(
        `SELECT ${SOURCE_COLUMNS} FROM conversations c JOIN sites s ON s.id = c.site_id AND s.deleted_at IS NULL WHERE c.id = $1`,
        [id],
      )
    )[0];
  const versionOf = async (id: string): Promise<number | undefined> => {
    const rows = await db.query(`SELECT search_version::text AS v FROM conversations WHERE id = $1`, [id]);
    return rows[0] ? Number(rows[0].v) : undefined;
  };
  const drainAll = async () => {
    for (;;) {
      const r = await drains[0].drain(50);
      if (r.taken === 0) return;
    }
  };
  /** Holds `LOCK TABLE <table> IN ACCESS EXCLUSIVE MODE` until release(): a drain reading it waits there. */
  const lockTable = async (table: string) => {
    const runner = db.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    await runner.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    return {
      release: async () => {
        await runner.commitTransaction();
        await runner.release();
      },
    };
  };
  /** Waits until a backend waits for a lock on `table` (the drain has reached that step). */
  const waitingOn = async (table: string) => {
    for (let i = 0; i < 200; i++) {
      const [{ n }] = await db.query(
        `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE NOT l.granted AND c.relname = $1`,
        [table],
      );
      if (n > 0) return;
      await sleep(25);
    }
    throw new Error(`no backend came to wait on ${table}`);
  };
  const resetIndex = async () => {
    await engine.indices.delete({ index: `${NAMES.prefix}*`, expand_wildcards: 'all' } as never, {
      ignore: [404],
    });
    await engine.indices.create({
      index: NAMES.prefix,
      body: { ...conversationIndexBody(2, 0), aliases: { [NAMES.alias]: {} } } as never,
    });
  };

  beforeAll(async () => {
    engine = testOpenSearchClient();
    database = await createIsolatedDatabase();
    t = await createTestApp(
      {
        ...OWN_BUDGET,
        DATABASE_URL: database.url,
        OPENSEARCH_URL: OPENSEARCH_URL!,
        OPENSEARCH_INDEX: NAMES.alias,
        OPENSEARCH_SHARDS: '2',
        OPENSEARCH_REPLICAS: '0',
      },
      { redisKeyPrefixSuffix: 'search-mirror-races:' },
    );
    db = t.app.get(DataSource);
    const clients = t.app.get(OpenSearchClients);
    for (let i = 0; i < DRAINS; i++)
      drains.push(new SearchIndexer(db, new SearchOutboxRepository(db), clients.bulk(), clients.names));
    sync = new SearchSyncForTests(t.config, db, clients);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await database?.drop();
    if (engine)
      await engine.indices
        .delete({ index: `${NAMES.prefix}*`, expand_wildcards: 'all' } as never, { ignore: [404] })
        .finally(() => engine.close());
  });
  beforeEach(async () => {
    await drainAll();
    await resetIndex();
  });

  describe('a document in OpenSearch is never older than one already written for the same conversation', () => {
    it('drains racing over reviews, relabels, appends, redactions and deletions (of conversations and of a site) and a reindex leave every document as Postgres holds it', async () => {
      const org = await createOrganization(t.app);
      const doomed = await createSite(t.app, org.organization.id);
      const conversations: Array<{ id: string; siteId: string }> = [];
      const tokens = new Map<string, string[]>();
      for (let i = 0; i < 36; i++) {
        const siteId = i % 4 === 3 ? doomed.id : org.site.id;
        const word = token();
        const c = await recordConversation(
          t,
          org,
          { messages: [{ role: 'shopper', blocks: [{ type: 'text', text: `hello ${word}` }] }] },
          siteId,
        );
        await label(t.app, c.id);
        conversations.push({ id: c.id, siteId });
        tokens.set(c.id, [word]);
      }
      await drainAll();

      let stop = false;
      const failures: string[] = [];
      const fail = (what: string) => failures.length < 20 && failures.push(what);

      // The racing drains: small batches, so one conversation's rows spread over several of them.
      const racing = drains.map(async (indexer) => {
        while (!stop) {
          try {
            await indexer.drainBatch(1 + Math.floor(Math.random() * 6));
          } catch (error) {
            fail(`drain failed: ${(error as Error).message}`);
          }
          await sleep(Math.random() * 4);
        }
      });

      // What a reader sees never goes back: a document's version never decreases.
      const seen = new Map<string, number>();
      const sampler = (async () => {
        while (!stop) {
          const c = pick(conversations);
          const doc = await stored(c.id, c.siteId);
          if (doc.found) {
            const before = seen.get(c.id) ?? 0;
            if (doc.version! < before) fail(`${c.id}: version ${doc.version} read after ${before}`);
            seen.set(c.id, Math.max(before, doc.version!));
          }
        }
      })();

      const siteDeleted = { at: Infinity };
      const review = (c: { id: string }) =>
        t
          .http()
          .put(`/api/v1/sites/${org.site.id}/conversations/${c.id}/review`)
          .set(org.auth)
          .send({ reviewer: 'qa', resolution: pick(['resolved', 'abandoned', 'unresolved']) });
      const writes: Array<(c: { id: string; siteId: string }) => Promise<unknown>> = [
        (c) =>
          c.siteId === org.site.id
            ? review(c)
            : label(t.app, c.id, labeledOutcome({ resolution: 'abandoned' })).catch(() => undefined),
        (c) =>
          label(
            t.app,
            c.id,
            labeledOutcome({ resolution: pick(['resolved', 'abandoned']), failing: [pick([...CRITERIA])] }),
          ).catch(() => undefined),
        async (c) => {
          const word = token();
          tokens.get(c.id)!.push(word);
          await appendMessages(t, { site: { id: c.siteId }, auth: org.auth }, c.id, [
            { role: 'shopper', blocks: [{ type: 'text', text: `again ${word}` }] },
          ]);
        },
        (c) =>
          t
            .http()
            .post(`/api/v1/sites/${c.siteId}/conversations/${c.id}/redact`)
            .set(org.auth)
            .send({ text: pick(tokens.get(c.id)!) }),
      ];
      const deleted = new Set<string>();
      let writesDone = 0;
      const writer = async (w: number) => {
        const started = Date.now();
        while (Date.now() - started < RACE_MS) {
          const c = pick(conversations);
          if (Math.random() < 0.03 && !deleted.has(c.id)) {
            deleted.add(c.id);
            await t.http().delete(`/api/v1/sites/${c.siteId}/conversations/${c.id}`).set(org.auth);
          } else await pick(writes)(c);
          writesDone++;
          // Synced mode: a search after the write sees it, even while other drains hold its rows.
          if (w === 0 && c.siteId === org.site.id) {
            const committed = await versionOf(c.id);
            await sync.siteSync({ refresh: false })(c.siteId);
            const doc = await stored(c.id, c.siteId);
            if (committed !== undefined && (await liveRow(c.id)) && !(doc.found && doc.version! >= committed))
              fail(
                `${c.id}: a synced drain returned before version ${committed} was written (index holds ${doc.found ? doc.version : 'nothing'})`,
              );
          }
        }
      };
      const deleteSite = (async () => {
        await sleep(RACE_MS / 3);
        await t.http().delete(`/api/v1/sites/${doomed.id}`).set(org.auth).expect(204);
        siteDeleted.at = Date.now();
      })();
      const reindex = (async () => {
        await sleep(RACE_MS / 2);
        await t.app.get(ReindexService).reindex({ batchSize: 7, concurrency: 2 });
      })();

      await Promise.all([...Array.from({ length: WRITERS }, (_, w) => writer(w)), deleteSite, reindex]);
      stop = true;
      await Promise.all([...racing, sampler]);
      await drainAll();
      await engine.indices.refresh({ index: NAMES.alias });

      // Document by document against Postgres.
      for (const c of conversations) {
        const row = await liveRow(c.id);
        const doc = await stored(c.id, c.siteId);
        if (!row) {
          if (doc.found) fail(`${c.id}: deleted in Postgres, still in the index at version ${doc.version}`);
          continue;
        }
        if (!doc.found) {
          fail(`${c.id}: missing from the index`);
          continue;
        }
        if (doc.version !== Number(row.search_version))
          fail(`${c.id}: index at version ${doc.version}, Postgres at ${row.search_version}`);
        const { transcript_en: _, ...expected } = toDocument(row, []) as Record<string, unknown>;
        if (!isDeepStrictEqual(doc.source, expected))
          fail(`${c.id}: index holds ${JSON.stringify(doc.source)}, Postgres ${JSON.stringify(expected)}`);
        // The transcript: each word is found in the index exactly when a message still holds it.
        const texts: Array<{ text: string }> = await db.query(
          `SELECT transcript_message_text(blocks) AS text FROM messages WHERE conversation_id = $1`,
          [c.id],
        );
        for (const word of tokens.get(c.id)!) {
          const inPostgres = texts.some((m) => m.text.includes(word));
          const { body } = await engine.count({
            index: NAMES.alias,
            routing: c.siteId,
            body: {
              query: {
                bool: { filter: [{ term: { id: c.id } }, { match: { 'transcript_en.shopper': word } }] },
              },
            },
          } as never);
          const inIndex = (body as { count: number }).count === 1;
          if (inIndex !== inPostgres)
            fail(`${c.id}: "${word}" ${inPostgres ? 'missing from' : 'still in'} the index's transcript`);
        }
      }
      expect(writesDone).toBeGreaterThan(50);
      expect(failures).toEqual([]);
    }, 120_000);

    it("a drain that read a conversation as live before its site's deletion, and writes after the site's delete-by-query, leaves no document of the site", async () => {
      const org = await createOrganization(t.app);
      const site = await createSite(t.app, org.organization.id);
      const c = await recordConversation(t, org, {}, site.id);
      // The drain reads the conversation's row, then waits for the messages table.
      const messages = await lockTable('messages');
      const late = drains[0].drainBatch(10);
      await waitingOn('messages');
      // The site's deletion commits and another drain sends its delete-by-query meanwhile.
      await t.http().delete(`/api/v1/sites/${site.id}`).set(org.auth).expect(204);
      const deletion = drains[1].drainBatch(10);
      await sleep(500);
      await messages.release();
      await Promise.all([late, deletion]);
      await drainAll();
      expect(await stored(c.id, site.id)).toMatchObject({ found: false });
    });
  });

  describe('a synced search sees every change committed before it (SEARCH_SYNC_FOR_TESTS)', () => {
    it("waits for the site's rows another drain is writing, instead of skipping them", async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const messages = await lockTable('messages');
      const other = drains[0].drainBatch(10);
      await waitingOn('messages');
      const synced = sync.siteSync({ refresh: true })(org.site.id);
      const released = sleep(500).then(() => messages.release());
      await synced;
      // What the synced search would read now.
      const doc = await stored(c.id, org.site.id);
      await Promise.all([released, other]);
      expect(doc).toMatchObject({ found: true, version: await versionOf(c.id) });
    });
  });
});
