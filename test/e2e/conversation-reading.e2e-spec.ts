import { describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { InvalidLabelError } from '../../src/labels/label-outcome';
import { LabelWriter } from '../../src/labeling/label-writer.service';
import { TAXONOMY_TOKENS } from '../../src/labels/taxonomy';
import { labelMask } from '../../src/search/filter-sql/conversation-filter-sql';
import {
  conversationBody,
  label,
  labeledOutcome,
  listConversations,
  recordConversation,
  shownMessage,
} from '../factories/conversations';
import { createOrganization, createSite, Org } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';

describe('reading conversations, labels and the vocabulary', () => {
  let t: TestApp;
  // Own rate-limit counters: this suite's requests must not use up other suites' allowance.
  testAppPerSuite((app) => (t = app), {}, { redisKeyPrefixSuffix: 'conv-reading:' });
  /** GET of a conversation of the organization's site (`path`: '' or '/labels'). */
  const read = (org: Org, id: string, path = '') =>
    t.http().get(`/api/v1/sites/${org.site.id}/conversations/${id}${path}`).set(org.auth);

  describe('GET /api/v1/sites/{siteId}/conversations/{id}', () => {
    it('returns { data: conversation } with all conversation fields plus messages (oldest first) and metadata', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org, {
        channel: 'playground',
        metadata: { scenario: 'returns', tester: 'qa' },
        createdAt: '2026-11-01T10:00:00.000Z',
        messages: [
          {
            role: 'agent',
            createdAt: '2026-11-01T10:00:02.000Z',
            rating: 'positive',
            blocks: [{ type: 'text', text: 'second' }],
          },
          {
            role: 'shopper',
            createdAt: '2026-11-01T10:00:01.000Z',
            blocks: [{ type: 'text', text: 'first' }],
          },
          {
            role: 'system',
            createdAt: '2026-11-01T10:00:03.000Z',
            blocks: [
              {
                type: 'product_cards',
                products: [{ productId: 'p1', name: 'Boot', url: 'https://shop.example/boot', price: null }],
              },
            ],
          },
        ],
      });
      const res = await read(org, c.id).expect(200);
      const { messages, metadata, ...fields } = res.body.data;
      // The create answered this same representation (messages and metadata included).
      expect(res.body.data).toEqual(c);
      expect(fields).not.toHaveProperty('messages');
      expect(metadata).toEqual({ scenario: 'returns', tester: 'qa' });
      expect(messages).toEqual([
        shownMessage('shopper', '2026-11-01T10:00:01.000Z', null, { type: 'text', text: 'first' }),
        shownMessage('agent', '2026-11-01T10:00:02.000Z', 'positive', { type: 'text', text: 'second' }),
        shownMessage('system', '2026-11-01T10:00:03.000Z', null, {
          type: 'product_cards',
          products: [{ productId: 'p1', name: 'Boot', url: 'https://shop.example/boot', price: null }],
        }),
      ]);
    });

    it('metadata is null when none was recorded; the list never returns messages', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      expect((await read(org, c.id).expect(200)).body.data.metadata).toBeNull();
      const list = await t.http().get(`/api/v1/sites/${org.site.id}/conversations`).set(org.auth).expect(200);
      expect(list.body.data[0]).not.toHaveProperty('messages');
      expect(list.body.data[0]).not.toHaveProperty('metadata');
    });

    it('a list item is the single conversation without messages and metadata, whichever plan lists it', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org, {
        title: 'Running shoes refund',
        channel: 'playground',
        language: 'nl',
        entryWidget: { id: 'wdg_1', kind: 'bubble', name: 'Ask us' },
        pageContext: {
          pageType: 'product',
          productId: 'sku-9',
          categoryName: 'Shoes',
          pageUrl: 'https://s.example/p',
        },
        metadata: { scenario: 'list-vs-detail' },
        productEngagement: { impressions: 5, clicks: 2 },
        messages: [
          { role: 'shopper', blocks: [{ type: 'text', text: 'Refund?' }] },
          { role: 'agent', rating: 'negative', blocks: [{ type: 'text', text: 'Sure.' }] },
        ],
      });
      await label(t.app, c.id, labeledOutcome({ failing: ['safe_response'], raised: ['abusive_visitor'] }));
      const { messages, metadata, outcome, ...item } = (await read(org, c.id).expect(200)).body.data;
      expect(messages).toHaveLength(2);
      expect(outcome).toEqual({ orders: 0, revenue: [] });
      expect(metadata).toEqual({ scenario: 'list-vs-detail' });
      expect(item.labelSummary.failedCriteria).toEqual(['safe_response']);
      // No filter (the creation-time walk), column filters (the bounded walk), a keyword and a
      // problem token (the postings), and a keyword with a token (GIN or postings).
      for (const query of [
        {},
        { channel: 'playground', language: 'nl' },
        { keywords: 'refund' },
        { 'labels.all': 'abusive_visitor:true' },
        { keywords: 'running shoes', 'labels.all': 'safe_response:fail' },
      ]) {
        const list = await listConversations(t, org, query).expect(200);
        expect({ query, data: list.body.data }).toEqual({ query, data: [item] });
      }
    });

    it('an unknown id gives 404 not_found', async () => {
      const org = await createOrganization(t.app);
      for (const id of ['conv_doesNotExist', 'nonsense']) {
        expect((await read(org, id).expect(404)).body.code).toBe('not_found');
      }
    });
  });

  describe('GET /api/v1/sites/{siteId}/conversations/{id}/labels', () => {
    it('for a conversation not yet labeled, returns the status with the label fields null (200, not 404)', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const res = await read(org, c.id, '/labels').expect(200);
      expect(res.body.data).toEqual({
        id: null,
        conversationId: c.id,
        taxonomyVersion: '1.1',
        status: 'pending',
        labeledAt: null,
        judge: null,
        resolution: null,
        reviewReason: null,
        flags: null,
        criteria: null,
        scores: null,
        failedCriteria: null,
        tokens: null,
        rationale: null,
        error: null,
        review: null,
      });
    });

    it('returns the full label record of a labeled conversation, and the summary on the conversation follows it', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const at = new Date('2026-11-20T10:00:00.000Z');
      await label(
        t.app,
        c.id,
        labeledOutcome({
          resolution: 'unresolved',
          reviewReason: 'service',
          failing: ['grounded'],
          notApplicable: ['policy_compliant'],
          raised: ['visitor_frustrated'],
          scores: { quality: 0.25, service: null, trust: 1 },
          labeledAt: at,
          judge: { kind: 'http', model: 'judge-x', version: '7' },
        }),
      );
      const res = await read(org, c.id, '/labels').expect(200);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(/^lbl_/),
        conversationId: c.id,
        taxonomyVersion: '1.1',
        status: 'labeled',
        labeledAt: '2026-11-20T10:00:00.000Z',
        judge: { kind: 'http', model: 'judge-x', version: '7' },
        resolution: 'unresolved',
        reviewReason: 'service',
        flags: {
          visitor_frustrated: true,
          human_requested: false,
          purchase_intent: false,
          out_of_scope: false,
          abusive_visitor: false,
        },
        criteria: {
          grounded: 'fail',
          answered_question: 'pass',
          product_accuracy: 'pass',
          policy_compliant: 'not_applicable',
          on_brand: 'pass',
          safe_response: 'pass',
        },
        scores: { quality: 0.25, service: null, trust: 1 },
        failedCriteria: ['grounded'],
        tokens: expect.arrayContaining([
          'resolution:unresolved',
          'review_reason:service',
          'visitor_frustrated:true',
          'human_requested:false',
          'grounded:fail',
          'answered_question:pass',
        ]),
        rationale: 'test',
        error: null,
        review: null,
      });
      expect(res.body.data.tokens).toHaveLength(12);
      expect(res.body.data.tokens.some((tk: string) => tk.startsWith('policy_compliant:'))).toBe(false);
      const conv = await read(org, c.id).expect(200);
      expect(conv.body.data.labelStatus).toBe('labeled');
      expect(conv.body.data.labelSummary).toEqual({
        resolution: 'unresolved',
        reviewReason: 'service',
        scores: { quality: 0.25, service: null, trust: 1 },
        failedCriteria: ['grounded'],
        source: 'judge',
      });
    });

    it('a failed label keeps the error; the conversation has no summary', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      await label(t.app, c.id, {
        status: 'failed',
        error: 'judge returned 502 three times',
        judge: { kind: 'http' },
      });
      const res = await read(org, c.id, '/labels').expect(200);
      expect(res.body.data).toMatchObject({
        status: 'failed',
        error: 'judge returned 502 three times',
        resolution: null,
        scores: null,
        tokens: null,
      });
      const conv = await read(org, c.id).expect(200);
      expect(conv.body.data).toMatchObject({ labelStatus: 'failed', labelSummary: null });
    });
  });

  describe('LabelWriter (the labeling process calls it)', () => {
    it('one current record per conversation; earlier ones stay in history', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      await label(t.app, c.id, { status: 'failed', error: 'timeout' });
      await label(t.app, c.id, labeledOutcome());
      const rows = await t.app
        .get(DataSource)
        .query(
          'SELECT status, is_current FROM label_records WHERE conversation_id = $1 ORDER BY created_at, status',
          [c.id],
        );
      expect(rows).toEqual(
        expect.arrayContaining([
          { status: 'failed', is_current: false },
          { status: 'labeled', is_current: true },
        ]),
      );
      expect(rows).toHaveLength(2);
    });

    it('writes nothing when the conversation changed since the judge read it', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const result = await t.app.get(LabelWriter).write(c.id, labeledOutcome(), {
        expectedUpdatedAt: new Date(Date.parse(c.updatedAt as string) - 1),
      });
      expect(result).toEqual({ written: false, reason: 'changed_since' });
      const ok = await t.app
        .get(LabelWriter)
        .write(c.id, labeledOutcome(), { expectedUpdatedAt: new Date(c.updatedAt as string) });
      expect(ok.written).toBe(true);
    });

    it('refuses an outcome that does not follow the taxonomy, writing nothing', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      await expect(
        t.app
          .get(LabelWriter)
          .write(c.id, labeledOutcome({ resolution: 'fixed', scores: { quality: 2, service: 0, trust: 0 } })),
      ).rejects.toBeInstanceOf(InvalidLabelError);
      expect((await read(org, c.id)).body.data.labelStatus).toBe('pending');
    });
  });

  describe('label tokens in the database', () => {
    it('the bitmask the listing walks use numbers every vocabulary token as the query builder does', async () => {
      const db = t.app.get(DataSource);
      for (const token of TAXONOMY_TOKENS) {
        const [row] = await db.query('SELECT conversation_label_bits($1::text[])::text AS bits', [[token]]);
        expect([token, row.bits]).toEqual([token, labelMask([token])]);
      }
      const [all] = await db.query('SELECT conversation_label_bits($1::text[])::text AS bits', [
        [...TAXONOMY_TOKENS, 'not:a_token'],
      ]);
      expect(all.bits).toBe(labelMask([...TAXONOMY_TOKENS]));
    });
  });

  describe('GET /api/v1/labels/vocabulary', () => {
    it('lists every label token the filters accept, in the product.md shape', async () => {
      const org = await createOrganization(t.app);
      const res = await t.http().get('/api/v1/labels/vocabulary').set(org.auth).expect(200);
      expect(res.body.data.taxonomyVersion).toBe('1.1');
      expect(res.body.data.labels).toContainEqual({
        label: 'resolution',
        kind: 'category',
        values: ['resolved', 'partially_resolved', 'unresolved', 'abandoned'],
      });
      expect(res.body.data.labels).toContainEqual({
        label: 'abusive_visitor',
        kind: 'flag',
        values: ['true', 'false'],
      });
      expect(res.body.data.labels).toContainEqual({
        label: 'safe_response',
        kind: 'criterion',
        values: ['pass', 'fail'],
      });
      expect(res.body.data.labels).toHaveLength(13);
      expect(res.body.data.tokens).toEqual(TAXONOMY_TOKENS);
      expect(res.body.data.tokens).toHaveLength(4 + 6 + 5 * 2 + 6 * 2);
      expect(res.body.data.tokens.filter((tk: string) => tk.endsWith(':true'))).toEqual([
        'visitor_frustrated:true',
        'human_requested:true',
        'purchase_intent:true',
        'out_of_scope:true',
        'abusive_visitor:true',
      ]);
    });
    it('needs the API key', async () => {
      await t.http().get('/api/v1/labels/vocabulary').expect(401);
    });
  });

  describe("tenant isolation: another organization's or site's conversation reads as 404 not_found on every route", () => {
    it('refuses every conversation route across organizations and across sites', async () => {
      const owner = await createOrganization(t.app);
      const intruder = await createOrganization(t.app);
      const secondSite = await createSite(t.app, owner.organization.id);
      const c = await recordConversation(t, owner);
      const detail = await read(owner, c.id).expect(200);
      const messageId = detail.body.data.messages[0].id;
      const attempts = (siteId: string, auth: Record<string, string>) => [
        t.http().get(`/api/v1/sites/${siteId}/conversations`).set(auth),
        t.http().post(`/api/v1/sites/${siteId}/conversations`).set(auth).send(conversationBody()),
        t.http().get(`/api/v1/sites/${siteId}/conversations/${c.id}`).set(auth),
        t.http().get(`/api/v1/sites/${siteId}/conversations/${c.id}/labels`).set(auth),
        t
          .http()
          .post(`/api/v1/sites/${siteId}/conversations/${c.id}/messages`)
          .set(auth)
          .send({ messages: [{ role: 'shopper', blocks: [] }] }),
        t
          .http()
          .put(`/api/v1/sites/${siteId}/conversations/${c.id}/messages/${messageId}/rating`)
          .set(auth)
          .send({ rating: 'negative' }),
        t
          .http()
          .post(`/api/v1/sites/${siteId}/conversations/${c.id}/engagement`)
          .set(auth)
          .send({ impressions: 1, clicks: 1 }),
      ];
      // Another organization's key, on the owner's site.
      for (const res of await Promise.all(attempts(owner.site.id, intruder.auth))) {
        expect([res.status, res.body.code]).toEqual([404, 'not_found']);
      }
      // The owner's key, with the conversation addressed under another of its sites (the list and
      // create routes are legitimate there; the five routes naming the conversation are not).
      const sameOrg = await Promise.all(attempts(secondSite.id, owner.auth));
      for (const res of sameOrg.slice(2)) expect([res.status, res.body.code]).toEqual([404, 'not_found']);
      expect(sameOrg[0].body.data).toEqual([]);
      // Nothing changed on the conversation.
      const after = await read(owner, c.id).expect(200);
      expect(after.body.data).toEqual(detail.body.data);
      // And the intruder's listing of its own site does not show it.
      expect(
        (await t.http().get(`/api/v1/sites/${intruder.site.id}/conversations`).set(intruder.auth).expect(200))
          .body.data,
      ).toEqual([]);
    });
  });
});
