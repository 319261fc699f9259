import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import Redis from 'ioredis';
import { DeletionWorker } from '../../src/deletions/deletion-worker';
import { RetentionSweep } from '../../src/deletions/retention-sweep';
import { createOpenSearchClient } from '../../src/search/opensearch/opensearch-client';
import { ago, conversationBody } from '../factories/conversations';
import { readFeed } from '../factories/events';
import { createOrganization, getAs } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import { logCapture } from '../setup/log-capture';
import { OWN_BUDGET, type TestApp } from '../setup/test-app';
import { TEST_OPENSEARCH } from '../setup/test-opensearch';

/**
 * Erasure is complete (workflows-v1 §3), store by store: conversations carrying canaries (a word
 * of their own in the title and the messages, and personal data the patterns find) are recorded
 * and appended to under Idempotency-Keys, searched for, then erased every way the service offers
 * (a single delete, a deletion job by `q` and one by `keywords`, retention, redaction by pattern,
 * by message, by exact text and of the title). Then every table of the database is dumped, every
 * Redis key of the app read, the feed read, every write replayed and the service's log lines (at
 * `info`, as `npm start` writes them) read, and no erased string may be found; on the OpenSearch engine (TEST_SEARCH_BACKEND=opensearch) the site's documents, their
 * sources and stored fields, are read too. A control conversation never erased is found in the
 * tables, the feed, its replays (and the documents), so an absence there is real.
 */
type Org = Awaited<ReturnType<typeof createOrganization>>;
const text = (t: string) => [{ type: 'text', text: t }];
const word = (name: string) => `cnry${name}${randomBytes(4).toString('hex')}`;

interface Recorded {
  id: string;
  /** The requests sent under an Idempotency-Key, to replay. */
  writes: Array<{ path: string; key: string; body: object }>;
}

describe('erasure leaves nothing behind in any store the service writes (PostgreSQL engine)', () => {
  let t: TestApp;
  const log = logCapture();
  testAppPerSuite((app) => (t = app), OWN_BUDGET, {
    redisKeyPrefixSuffix: 'erasure-stores:',
    ownDatabase: true,
    logs: log.stream,
  });

  const conversations = (org: Org) => `/api/v1/sites/${org.site.id}/conversations`;
  const send = (org: Org, path: string, key: string, body: object) =>
    t.http().post(path).set(org.auth).set('Idempotency-Key', key).send(body);

  /** Records a conversation and appends one message to it, both under Idempotency-Keys. */
  async function record(org: Org, overrides: Record<string, unknown>, appended: object[]): Promise<Recorded> {
    const key = randomBytes(6).toString('hex');
    const body = conversationBody(overrides);
    const created = await send(org, conversations(org), `rec-${key}`, body).expect(201);
    const id = created.body.data.id as string;
    const append = { messages: appended };
    await send(org, `${conversations(org)}/${id}/messages`, `app-${key}`, append).expect(201);
    return {
      id,
      writes: [
        { path: conversations(org), key: `rec-${key}`, body },
        { path: `${conversations(org)}/${id}/messages`, key: `app-${key}`, body: append },
      ],
    };
  }

  /** Every row of every table of the app's database, as JSON text. */
  async function dumpTables(): Promise<string> {
    const tables: Array<{ name: string }> = await t.db.query(
      `SELECT quote_ident(table_name) AS name FROM information_schema.tables
       WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
    );
    expect(tables.length).toBeGreaterThan(20);
    const parts: string[] = [];
    for (const { name } of tables) {
      const [row] = await t.db.query(`SELECT coalesce(json_agg(x)::text, '') AS rows FROM ${name} x`);
      parts.push(`${name}: ${row.rows}`);
    }
    return parts.join('\n');
  }

  /** Every key of the app's Redis prefix with its value, as text. */
  async function dumpRedis(): Promise<string> {
    const client = new Redis(t.config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await client.connect();
    try {
      const parts: string[] = [];
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${t.config.redisKeyPrefix}*`, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) {
          const type = await client.type(key);
          const value =
            type === 'string'
              ? await client.get(key)
              : type === 'hash'
                ? await client.hgetall(key)
                : type === 'list'
                  ? await client.lrange(key, 0, -1)
                  : type === 'set'
                    ? await client.smembers(key)
                    : type === 'zset'
                      ? await client.zrange(key, 0, -1, 'WITHSCORES')
                      : type === 'stream'
                        ? await client.xrange(key, '-', '+')
                        : type;
          parts.push(`${key}: ${JSON.stringify(value)}`);
        }
      } while (cursor !== '0');
      return parts.join('\n');
    } finally {
      client.disconnect();
    }
  }

  /** The site's OpenSearch documents (source and stored fields) as text; undefined on Postgres. */
  async function dumpOpenSearch(siteId: string): Promise<string | undefined> {
    const { opensearchUrl, index, backend } = t.config.search;
    if (backend !== 'opensearch' || !opensearchUrl) return undefined;
    const client = createOpenSearchClient(opensearchUrl, 10_000);
    try {
      await client.indices.refresh({ index });
      // The run's index holds every suite's sites: this one's documents, by its routing and id.
      const res = await client.search({
        index,
        routing: siteId,
        body: { size: 10_000, query: { term: { site_id: siteId } }, stored_fields: ['*'], _source: true },
      } as never);
      return JSON.stringify((res.body as { hits: { hits: unknown[] } }).hits.hits);
    } finally {
      await client.close();
    }
  }

  it('after every kind of erasure, no table, Redis key, feed event, replayed answer or log line holds an erased string', async () => {
    const org = await createOrganization(t.app);
    const w = {
      deleted: word('del'),
      byQ: word('q'),
      byKeywords: word('kw'),
      retained: word('ret'),
      byMessage: word('msg'),
      byText: word('txt'),
      byTitle: word('ttl'),
      control: word('ctl'),
    };
    const pii = {
      email: `${word('mail')}@shopper-mail.test`,
      titleEmail: `${word('tmail')}@shopper-mail.test`,
      phone: '+33 6 98 76 54 32',
      card: '4111 1111 1111 1111',
      iban: 'DE89 3704 0044 0532 0130 00',
    };
    const shopper = (words: string) => ({ role: 'shopper', blocks: text(words) });

    const deleted = await record(
      org,
      { title: `Order ${w.deleted}`, messages: [shopper(`my ${w.deleted}`)] },
      [shopper(`again ${w.deleted}`)],
    );
    const byQ = await record(org, { title: 'Parcel question', messages: [shopper(`about ${w.byQ}`)] }, [
      shopper(`still ${w.byQ}`),
    ]);
    const byKeywords = await record(org, { title: `Refund ${w.byKeywords}`, messages: [shopper('hello')] }, [
      shopper(`more ${w.byKeywords}`),
    ]);
    const retained = await record(
      org,
      {
        title: `Old ${w.retained}`,
        createdAt: ago(3 * 24 * 60),
        messages: [{ ...shopper(`old ${w.retained}`), createdAt: ago(3 * 24 * 60) }],
      },
      [{ ...shopper(`older ${w.retained}`), createdAt: ago(3 * 24 * 60) }],
    );
    const byPattern = await record(
      org,
      { title: `Mail ${pii.titleEmail}`, messages: [shopper(`write ${pii.email} or ${pii.phone}`)] },
      [shopper(`card ${pii.card}, iban ${pii.iban}`)],
    );
    const byMessage = await record(
      org,
      { title: 'Whole message', messages: [shopper(`secret ${w.byMessage}`)] },
      [shopper(`also ${w.byMessage}`)],
    );
    const byText = await record(org, { title: `Exact ${w.byText}`, messages: [shopper(`say ${w.byText}`)] }, [
      shopper(`once more ${w.byText}`),
    ]);
    const byTitle = await record(
      org,
      { title: `Title ${w.byTitle}`, messages: [shopper('no secret here')] },
      [shopper('nothing')],
    );
    const control = await record(
      org,
      { title: `Kept ${w.control}`, messages: [shopper(`keep ${w.control}`)] },
      [shopper(`kept ${w.control}`)],
    );

    // Searched for before the erasure (search words are personal data too).
    for (const q of [w.byQ, w.deleted, w.control])
      await t.http().get(conversations(org)).query({ q }).set(org.auth).expect(200);

    // Erased every way.
    await t
      .http()
      .delete(`${conversations(org)}/${deleted.id}`)
      .set(org.auth)
      .expect(204);
    await send(org, `${conversations(org)}/deletions`, 'job-q', { filters: { q: w.byQ } }).expect(202);
    await send(org, `${conversations(org)}/deletions`, 'job-kw', {
      filters: { keywords: [w.byKeywords] },
    }).expect(202);
    await t.app.get(DeletionWorker).runAll();
    await t.http().patch(`/api/v1/sites/${org.site.id}`).set(org.auth).send({ retentionDays: 1 }).expect(200);
    await t.app.get(RetentionSweep).sweep();
    await t.app.get(DeletionWorker).runAll();
    const redact = (id: string, body: object) =>
      t
        .http()
        .post(`${conversations(org)}/${id}/redact`)
        .set(org.auth)
        .send(body)
        .expect(200);
    await redact(byPattern.id, { patterns: ['email', 'phone', 'payment_card', 'iban'] });
    const messageIds = (
      await getAs(t, org, `${conversations(org)}/${byMessage.id}`).expect(200)
    ).body.data.messages.map((m: { id: string }) => m.id);
    await redact(byMessage.id, { messageIds });
    await redact(byText.id, { text: w.byText });
    await redact(byTitle.id, { title: true });

    const listed = (await t.http().get(conversations(org)).query({ limit: '100' }).set(org.auth).expect(200))
      .body.data as Array<{ id: string }>;
    expect(listed.map((c) => c.id).sort()).toEqual(
      [byPattern.id, byMessage.id, byText.id, byTitle.id, control.id].sort(),
    );

    const erased = [
      w.deleted,
      w.byQ,
      w.byKeywords,
      w.retained,
      w.byMessage,
      w.byText,
      w.byTitle,
      pii.email,
      pii.titleEmail,
      pii.phone,
      pii.card,
      pii.iban,
    ];
    const hits = (store: string) => erased.filter((s) => store.includes(s));

    const tables = await dumpTables();
    expect(tables).toContain(w.control);
    expect(hits(tables)).toEqual([]);

    expect(hits(await dumpRedis())).toEqual([]);

    const documents = await dumpOpenSearch(org.site.id);
    if (process.env[TEST_OPENSEARCH.backend] === 'opensearch') expect(documents).toBeDefined();
    if (documents !== undefined) {
      expect(documents).toContain(w.control);
      expect(hits(documents)).toEqual([]);
    }

    const feed = JSON.stringify((await readFeed(t, org)).events);
    expect(feed).toContain(w.control);
    expect(hits(feed)).toEqual([]);

    const replays: string[] = [];
    for (const c of [deleted, byQ, byKeywords, retained, byPattern, byMessage, byText, byTitle, control])
      for (const write of c.writes) {
        const res = await send(org, write.path, write.key, write.body);
        expect([201, 404]).toContain(res.status);
        replays.push(res.text);
      }
    const replayed = replays.join('\n');
    expect(replayed).toContain(w.control);
    expect(hits(replayed)).toEqual([]);

    // The log holds every request (the listing read above with its query string, limit=100), and
    // no erased string: the searches for them by q and keywords wrote their values redacted.
    const logged = log.text();
    expect(logged).toContain('limit=100');
    expect(logged).toMatch(/[?&]q=/);
    expect(hits(logged)).toEqual([]);
  });
});
