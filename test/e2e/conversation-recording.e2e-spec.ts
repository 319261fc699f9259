import { describe, expect, it } from '@jest/globals';
import {
  ago,
  appendMessages,
  conversationBody,
  label,
  labeledOutcome,
  recordConversation,
  shownMessage,
} from '../factories/conversations';
import { createOrganization, getAs } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';

type Org = Awaited<ReturnType<typeof createOrganization>>;

describe('recording conversations (product.md §2)', () => {
  let t: TestApp;
  // Own rate-limit counters: this suite's requests must not use up other suites' allowance.
  testAppPerSuite((app) => (t = app), {}, { redisKeyPrefixSuffix: 'conv-recording:' });

  const conversationsOf = async (org: Org) =>
    Number(
      (await t.db.query('SELECT count(*) AS n FROM conversations WHERE site_id = $1', [org.site.id]))[0].n,
    );
  const post = (org: Org, body: unknown, key?: string) => {
    const req = t.http().post(`/api/v1/sites/${org.site.id}/conversations`).set(org.auth);
    if (key) req.set('Idempotency-Key', key);
    return req.send(body as object);
  };
  const detailOf = (org: Org, id: string) =>
    t.http().get(`/api/v1/sites/${org.site.id}/conversations/${id}`).set(org.auth).expect(200);
  /** A conversation created at 2026-10-01T08:00:00.000Z with these messages (role, createdAt, rating), no blocks. */
  const recordWithMessages = (
    org: Org,
    ...messages: Array<[role: string, createdAt: string, rating?: string]>
  ) =>
    recordConversation(t, org, {
      createdAt: '2026-10-01T08:00:00.000Z',
      messages: messages.map(([role, createdAt, rating]) => ({ role, createdAt, rating, blocks: [] })),
    });

  describe('POST /api/v1/sites/{siteId}/conversations', () => {
    it('answers 201 with the conversation in the contract shape', async () => {
      // Sent, and answered as sent.
      const productCards = {
        type: 'product_cards',
        products: [
          {
            productId: 'sku-1',
            name: 'Shoe',
            url: 'https://shop.example/p/1',
            price: { amount: '19.90', currency: 'EUR' },
          },
        ],
      };
      const org = await createOrganization(t.app);
      const res = await post(
        org,
        conversationBody({
          title: 'Gift ideas',
          channel: 'playground',
          language: 'it',
          createdAt: '2026-11-01T10:00:00.000Z',
          entryWidget: { id: 'wdg_1', kind: 'bubble', name: 'Ask us' },
          pageContext: {
            pageType: 'product',
            productId: 'sku-1',
            categoryName: 'Shoes',
            pageUrl: 'https://shop.example/p/1;jsessionid=2?email=a@b.c#top',
          },
          metadata: { scenario: 'smoke' },
          productEngagement: { impressions: 4, clicks: 1 },
          messages: [
            {
              role: 'shopper',
              createdAt: '2026-11-01T10:00:05.000Z',
              blocks: [{ type: 'text', text: 'Hi' }],
            },
            {
              role: 'agent',
              createdAt: '2026-11-01T10:00:09.250Z',
              rating: 'positive',
              blocks: [productCards],
            },
          ],
        }),
      ).expect(201);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(/^conv_[0-9A-Za-z]{22}$/),
        title: 'Gift ideas',
        channel: 'playground',
        language: 'it',
        createdAt: '2026-11-01T10:00:00.000Z',
        updatedAt: '2026-11-01T10:00:09.250Z',
        siteId: org.site.id,
        agentId: 'agt_TestAgent0001',
        agentName: 'Shop helper',
        agentVersion: 3,
        agentVersionId: 'agtv_TestAgentV0003',
        entryWidget: { id: 'wdg_1', kind: 'bubble', name: 'Ask us' },
        pageContext: {
          pageType: 'product',
          productId: 'sku-1',
          categoryName: 'Shoes',
          pageUrl: 'https://shop.example/p/1',
        },
        messageCount: 2,
        durationMs: 9250,
        feedback: { positive: 1, negative: 0 },
        productEngagement: { impressions: 4, clicks: 1 },
        labelStatus: 'pending',
        labelSummary: null,
        messages: [
          shownMessage('shopper', '2026-11-01T10:00:05.000Z', null, { type: 'text', text: 'Hi' }),
          shownMessage('agent', '2026-11-01T10:00:09.250Z', 'positive', productCards),
        ],
        metadata: { scenario: 'smoke' },
        outcome: { orders: 0, revenue: [] },
      });
    });

    it('the create answers the same representation as GET of that conversation (messages and metadata included)', async () => {
      const org = await createOrganization(t.app);
      const created = await post(
        org,
        conversationBody({
          channel: 'playground',
          metadata: { run: 7 },
          createdAt: '2026-11-02T09:00:00.000Z',
        }),
      ).expect(201);
      const read = await getAs(
        t,
        org,
        `/api/v1/sites/${org.site.id}/conversations/${created.body.data.id}`,
      ).expect(200);
      expect(created.body).toEqual(read.body);
      expect(created.body.data.messages).toHaveLength(2);
      expect(created.body.data.metadata).toEqual({ run: 7 });
    });

    it('pageContext.pageUrl is null for a scheme other than an http-style one; pageContext is null when not sent', async () => {
      const org = await createOrganization(t.app);
      const js = await recordConversation(t, org, { pageContext: { pageUrl: 'javascript:alert(1)' } });
      expect(js.pageContext).toEqual({ pageType: null, productId: null, categoryName: null, pageUrl: null });
      expect((await recordConversation(t, org)).pageContext).toBeNull();
    });

    it('durationMs = updatedAt minus createdAt; updatedAt is the latest of createdAt and the messages', async () => {
      const org = await createOrganization(t.app);
      const c = await recordWithMessages(
        org,
        ['shopper', '2026-10-01T08:03:00.000Z'],
        ['agent', '2026-10-01T08:01:00.000Z'],
      );
      expect(c.updatedAt).toBe('2026-10-01T08:03:00.000Z');
      expect(c.durationMs).toBe(180_000);
      const early = await recordWithMessages(org, ['shopper', '2026-09-30T08:00:00.000Z']);
      expect(early.updatedAt).toBe('2026-10-01T08:00:00.000Z');
      expect(early.durationMs).toBe(0);
    });

    it('its messages are numbered from 1 in the order sent, and a message appended later after them', async () => {
      const org = await createOrganization(t.app);
      const c = await recordWithMessages(
        org,
        ['shopper', '2026-10-01T08:02:00.000Z'],
        ['agent', '2026-10-01T08:01:00.000Z', 'negative'],
      );
      expect(c).toMatchObject({ messageCount: 2, feedback: { positive: 0, negative: 1 } });
      await appendMessages(t, org, c.id, [{ role: 'shopper', blocks: [] }]).expect(201);
      const rows = await t.db.query(
        'SELECT role, position FROM messages WHERE conversation_id = $1 ORDER BY position',
        [c.id],
      );
      expect(rows).toEqual([
        { role: 'shopper', position: 1 },
        { role: 'agent', position: 2 },
        { role: 'shopper', position: 3 },
      ]);
      const detail = await detailOf(org, c.id);
      expect(detail.body.data).toMatchObject({ messageCount: 3, feedback: { positive: 0, negative: 1 } });
    });

    it('back-filled times may be in the past, never more than 5 minutes in the future', async () => {
      const org = await createOrganization(t.app);
      await post(
        org,
        conversationBody({ createdAt: new Date(Date.now() + 4 * 60_000).toISOString() }),
      ).expect(201);
      const res = await post(
        org,
        conversationBody({
          createdAt: new Date(Date.now() + 6 * 60_000).toISOString(),
          messages: [
            { role: 'agent', createdAt: new Date(Date.now() + 3_600_000).toISOString(), blocks: [] },
          ],
        }),
      ).expect(400);
      expect(res.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([
        '/createdAt',
        '/messages/0/createdAt',
      ]);
    });

    it('bad input gives one problem document listing every field at fault, and nothing is stored', async () => {
      const org = await createOrganization(t.app);
      const res = await post(org, {
        title: 'x'.repeat(501),
        channel: 'email',
        language: 'pt',
        agent: { id: 'bot_1', name: 'A', version: 'three', versionId: 'agtv_1' },
        metadata: { blob: 'y'.repeat(17 * 1024) },
        messages: [{ role: 'robot', blocks: [{ type: 'text', text: 5 }] }],
        surprise: true,
      }).expect(400);
      expect(res.body.code).toBe('invalid_request');
      expect(res.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(
        [
          '/agent/id',
          '/agent/version',
          '/channel',
          '/language',
          '/messages/0/blocks/0/text',
          '/messages/0/role',
          '/metadata',
          '/surprise',
          '/title',
        ].sort(),
      );
      expect(await conversationsOf(org)).toBe(0);
    });

    it('more than 1,000 messages per request is refused', async () => {
      const org = await createOrganization(t.app);
      const messages = Array.from({ length: 1001 }, () => ({ role: 'shopper', blocks: [] }));
      const res = await post(org, conversationBody({ messages })).expect(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ pointer: '/messages', code: 'too_long' })]);
      await post(org, conversationBody({ messages: messages.slice(1) })).expect(201);
    });

    it('concurrent retries with one Idempotency-Key record one conversation', async () => {
      const org = await createOrganization(t.app);
      const body = conversationBody();
      const results = await Promise.all([
        post(org, body, 'race-1'),
        post(org, body, 'race-1'),
        post(org, body, 'race-1'),
      ]);
      expect(results.map((r) => r.status)).toEqual([201, 201, 201]);
      expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
      expect(await conversationsOf(org)).toBe(1);
    });

    it('more concurrent retries than the database pool has connections (10) all get the first answer', async () => {
      const org = await createOrganization(t.app);
      const body = conversationBody();
      const results = await Promise.all(Array.from({ length: 30 }, () => post(org, body, 'race-30')));
      expect(results.map((r) => r.status)).toEqual(Array.from({ length: 30 }, () => 201));
      expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
      expect(await conversationsOf(org)).toBe(1);
    });
  });

  describe('metadata: for playground conversations, else null (product.md §1)', () => {
    it('metadata sent with a channel other than playground is refused with 400 naming /metadata, and nothing is stored', async () => {
      const org = await createOrganization(t.app);
      for (const channel of ['web', 'hosted']) {
        const res = await post(org, conversationBody({ channel, metadata: { scenario: 'x' } })).expect(400);
        expect(res.body.code).toBe('invalid_request');
        expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/metadata']);
      }
      expect(await conversationsOf(org)).toBe(0);
    });

    it('metadata null or left out is accepted on every channel; a playground conversation keeps its metadata', async () => {
      const org = await createOrganization(t.app);
      expect((await recordConversation(t, org, { channel: 'web', metadata: null })).metadata).toBeNull();
      expect((await recordConversation(t, org, { channel: 'hosted' })).metadata).toBeNull();
      expect(
        (await recordConversation(t, org, { channel: 'playground', metadata: { a: 1 } })).metadata,
      ).toEqual({ a: 1 });
    });

    it('a conversation of another channel stored with metadata (recorded before the rule) is presented with metadata null', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org, { channel: 'web' });
      await t.db.query(`UPDATE conversations SET metadata = '{"legacy": true}' WHERE id = $1`, [c.id]);
      const res = await getAs(t, org, `/api/v1/sites/${org.site.id}/conversations/${c.id}`).expect(200);
      expect(res.body.data.metadata).toBeNull();
    });
  });

  describe('Idempotency-Key', () => {
    it('a retried request with the same key and body returns the first result and records nothing twice', async () => {
      const org = await createOrganization(t.app);
      const body = conversationBody();
      const first = await post(org, body, 'key-1').expect(201);
      const again = await post(org, body, 'key-1').expect(201);
      expect(again.body).toEqual(first.body);
      expect(await conversationsOf(org)).toBe(1);
    });

    it('the same key with a different body gives 409 conflict', async () => {
      const org = await createOrganization(t.app);
      await post(org, conversationBody({ title: 'one' }), 'key-2').expect(201);
      const res = await post(org, conversationBody({ title: 'two' }), 'key-2').expect(409);
      expect(res.body.code).toBe('conflict');
      expect(await conversationsOf(org)).toBe(1);
    });

    it('keys are per organization, and a failed request keeps no key', async () => {
      const org = await createOrganization(t.app);
      const other = await createOrganization(t.app);
      await post(org, conversationBody(), 'shared').expect(201);
      await post(other, conversationBody(), 'shared').expect(201);
      await post(org, { title: 'broken' }, 'retry-me').expect(400);
      await post(org, conversationBody(), 'retry-me').expect(201);
    });

    it('covers appending messages: a retried append records the messages once', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const url = `/api/v1/sites/${org.site.id}/conversations/${c.id}/messages`;
      const body = { messages: [{ role: 'shopper', blocks: [{ type: 'text', text: 'again' }] }] };
      const append = () =>
        t.http().post(url).set(org.auth).set('Idempotency-Key', 'append-1').send(body).expect(201);
      const first = await append();
      const again = await append();
      expect(again.body).toEqual(first.body);
      const detail = await getAs(t, org, `/api/v1/sites/${org.site.id}/conversations/${c.id}`).expect(200);
      expect(detail.body.data.messageCount).toBe(3);
      expect(detail.body.data.messages).toHaveLength(3);
    });

    it('is kept 24 hours: an expired key is free again', async () => {
      const org = await createOrganization(t.app);
      await post(org, conversationBody({ title: 'first' }), 'old-key').expect(201);
      await t.db.query(
        `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE organization_id = $1`,
        [org.organization.id],
      );
      await post(org, conversationBody({ title: 'second' }), 'old-key').expect(201);
      expect(await conversationsOf(org)).toBe(2);
      const [row] = await t.db.query(
        `SELECT round(extract(epoch FROM expires_at - created_at))::int AS kept FROM idempotency_keys WHERE organization_id = $1`,
        [org.organization.id],
      );
      expect(row.kept).toBe(24 * 3600);
    });

    it('the same key on another route gives 409 conflict, and that route records nothing', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const engagement = `/api/v1/sites/${org.site.id}/conversations/${c.id}/engagement`;
      await post(org, conversationBody(), 'one-route').expect(201);
      const res = await t
        .http()
        .post(engagement)
        .set(org.auth)
        .set('Idempotency-Key', 'one-route')
        .send({ impressions: 1, clicks: 1 })
        .expect(409);
      expect(res.body.code).toBe('conflict');
      const detail = await detailOf(org, c.id);
      expect(detail.body.data.productEngagement).toEqual(c.productEngagement);
    });

    it('covers engagement: a retry answers 200 with the first body and adds the counts once, even when retries arrive at once', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org, { productEngagement: { impressions: 0, clicks: 0 } });
      const url = `/api/v1/sites/${org.site.id}/conversations/${c.id}/engagement`;
      const send = () =>
        t
          .http()
          .post(url)
          .set(org.auth)
          .set('Idempotency-Key', 'engage-1')
          .send({ impressions: 2, clicks: 1 });
      const results = await Promise.all([send(), send(), send()]);
      expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(results[1].body).toEqual(results[0].body);
      expect(results[2].body).toEqual(results[0].body);
      const again = await send().expect(200);
      expect(again.body).toEqual(results[0].body);
      expect(again.body.data.productEngagement).toEqual({ impressions: 2, clicks: 1 });
    });

    it('covers rating: a retry answers 200 with the first body', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const detail = await detailOf(org, c.id);
      const url = `/api/v1/sites/${org.site.id}/conversations/${c.id}/messages/${detail.body.data.messages[0].id}/rating`;
      const send = () =>
        t.http().put(url).set(org.auth).set('Idempotency-Key', 'rate-1').send({ rating: 'positive' });
      const first = await send().expect(200);
      const again = await send().expect(200);
      expect(again.body).toEqual(first.body);
      expect(first.body.data.rating).toBe('positive');
    });

    it('a request that fails after the key is claimed (unknown conversation) keeps no key', async () => {
      const org = await createOrganization(t.app);
      const body = { messages: [{ role: 'shopper', blocks: [{ type: 'text', text: 'hello' }] }] };
      await t
        .http()
        .post(`/api/v1/sites/${org.site.id}/conversations/conv_Unknown0000000000000000/messages`)
        .set(org.auth)
        .set('Idempotency-Key', 'after-404')
        .send(body)
        .expect(404);
      const c = await recordConversation(t, org);
      await t
        .http()
        .post(`/api/v1/sites/${org.site.id}/conversations/${c.id}/messages`)
        .set(org.auth)
        .set('Idempotency-Key', 'after-404')
        .send(body)
        .expect(201);
      const [row] = await t.db.query(
        `SELECT count(*)::int AS n FROM idempotency_keys WHERE organization_id = $1 AND key = 'after-404'`,
        [org.organization.id],
      );
      expect(row.n).toBe(1);
    });

    it('a malformed key is refused', async () => {
      const org = await createOrganization(t.app);
      const res = await post(org, conversationBody(), 'x'.repeat(256)).expect(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ parameter: 'Idempotency-Key' })]);
    });
  });

  describe('POST …/conversations/{id}/messages appends', () => {
    it('appends after the existing messages, moves updatedAt and the counts', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org, { createdAt: ago(60) });
      const res = await appendMessages(t, org, c.id, [
        {
          role: 'agent',
          rating: 'negative',
          createdAt: ago(1),
          blocks: [{ type: 'text', text: 'sorry' }],
        },
      ]).expect(201);
      expect(res.body.data.messages).toEqual([
        shownMessage('agent', expect.any(String), 'negative', { type: 'text', text: 'sorry' }),
      ]);
      const conv = res.body.data.conversation;
      expect(conv.messageCount).toBe(3);
      expect(conv.feedback).toEqual({ positive: 0, negative: 1 });
      expect(conv.updatedAt).toBe(res.body.data.messages[0].createdAt);
      expect(conv.durationMs).toBe(Date.parse(conv.updatedAt) - Date.parse(conv.createdAt));
    });

    it('a labeled conversation that gets new messages returns to pending; its old record stays in history', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      await label(t.app, c.id, labeledOutcome());
      await appendMessages(t, org, c.id, [{ role: 'shopper', blocks: [] }]).expect(201);
      const detail = await getAs(t, org, `/api/v1/sites/${org.site.id}/conversations/${c.id}`).expect(200);
      expect(detail.body.data.labelStatus).toBe('pending');
      expect(detail.body.data.labelSummary).toBeNull();
      const labels = await getAs(t, org, `/api/v1/sites/${org.site.id}/conversations/${c.id}/labels`).expect(
        200,
      );
      expect(labels.body.data).toMatchObject({ status: 'pending', resolution: null, tokens: null });
      const history = await t.db.query(
        'SELECT status, is_current FROM label_records WHERE conversation_id = $1',
        [c.id],
      );
      expect(history).toEqual([{ status: 'labeled', is_current: false }]);
    });
  });

  describe('PUT …/messages/{messageId}/rating', () => {
    it('feedback counts follow ratings', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const detail = await getAs(t, org, `/api/v1/sites/${org.site.id}/conversations/${c.id}`).expect(200);
      const [first, second] = detail.body.data.messages.map((m: { id: string }) => m.id);
      const rate = (id: string, rating: string | null) =>
        t
          .http()
          .put(`/api/v1/sites/${org.site.id}/conversations/${c.id}/messages/${id}/rating`)
          .set(org.auth)
          .send({ rating });
      const feedback = async () =>
        (await t.http().get(`/api/v1/sites/${org.site.id}/conversations/${c.id}`).set(org.auth)).body.data
          .feedback;
      expect((await rate(second, 'positive').expect(200)).body.data).toMatchObject({
        id: second,
        rating: 'positive',
      });
      expect(await feedback()).toEqual({ positive: 1, negative: 0 });
      await rate(first, 'negative').expect(200);
      await rate(second, 'negative').expect(200);
      expect(await feedback()).toEqual({ positive: 0, negative: 2 });
      await rate(second, null).expect(200);
      await rate(second, null).expect(200);
      expect(await feedback()).toEqual({ positive: 0, negative: 1 });
      expect((await rate(second, 'meh').expect(400)).body.errors).toEqual([
        expect.objectContaining({ pointer: '/rating' }),
      ]);
      expect((await rate('msg_doesNotExist', 'positive').expect(404)).body.code).toBe('not_found');
    });

    it('a new rating on a labeled conversation returns it to pending', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      await label(t.app, c.id);
      const detail = await getAs(t, org, `/api/v1/sites/${org.site.id}/conversations/${c.id}`).expect(200);
      await t
        .http()
        .put(
          `/api/v1/sites/${org.site.id}/conversations/${c.id}/messages/${detail.body.data.messages[1].id}/rating`,
        )
        .set(org.auth)
        .send({ rating: 'negative' })
        .expect(200);
      expect(
        (await t.http().get(`/api/v1/sites/${org.site.id}/conversations/${c.id}`).set(org.auth)).body.data
          .labelStatus,
      ).toBe('pending');
    });
  });

  describe('POST …/conversations/{id}/engagement', () => {
    it('adds impressions and clicks to the counts', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org, { productEngagement: { impressions: 2, clicks: 0 } });
      const url = `/api/v1/sites/${org.site.id}/conversations/${c.id}/engagement`;
      await t.http().post(url).set(org.auth).send({ impressions: 3, clicks: 1 }).expect(200);
      const res = await t.http().post(url).set(org.auth).send({ impressions: 0, clicks: 2 }).expect(200);
      expect(res.body.data.productEngagement).toEqual({ impressions: 5, clicks: 3 });
      const bad = await t
        .http()
        .post(url)
        .set(org.auth)
        .send({ impressions: -1, clicks: 'many' })
        .expect(400);
      expect(bad.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([
        '/clicks',
        '/impressions',
      ]);
    });
  });
});
