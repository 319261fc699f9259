import { describe, expect, it } from '@jest/globals';
import { EventsWriter } from '../../src/events/events.writer';
import { LabelWriter } from '../../src/labeling/label-writer.service';
import { PageImportsRepository } from '../../src/pages/page-imports.repository';
import { PagesRepository } from '../../src/pages/pages.repository';
import {
  appendMessages,
  conversationBody,
  label,
  labeledOutcome,
  listConversations,
  recordConversation,
} from '../factories/conversations';
import { FeedEvent, readFeed } from '../factories/events';
import { createOrganization, Org } from '../factories/organizations';
import { createRunningImport } from '../factories/page-imports';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';

/**
 * analytics-v1 §3: events are written in the same transaction as the change they describe,
 * with the resource as the API showed it right after the change.
 */
describe('events: written with the change they describe', () => {
  let t: TestApp;
  testAppPerSuite((app) => (t = app), {}, { redisKeyPrefixSuffix: 'events-writes:' });

  const conv = (org: Org, id: string, path = '') => `/api/v1/sites/${org.site.id}/conversations/${id}${path}`;
  /** Every event of the organization so far, oldest first. */
  const feed = async (org: Org) => (await readFeed(t, org)).events;
  const types = (events: FeedEvent[]) => events.map((e) => e.type);
  /** The conversation's list item as the listing shows it now. */
  const listItem = async (org: Org, id: string) => {
    const res = await listConversations(t, org, { limit: 100 }).expect(200);
    return (res.body.data as Array<{ id: string }>).find((c) => c.id === id);
  };

  describe('event shape', () => {
    it('an event is { id: evt_…, type, createdAt, siteId, data: { object } }', async () => {
      const org = await createOrganization(t.app);
      const before = Date.now();
      const c = await recordConversation(t, org);
      const [event] = await feed(org);
      expect(Object.keys(event).sort()).toEqual(['createdAt', 'data', 'id', 'siteId', 'type']);
      expect(event.id).toMatch(/^evt_[0-9A-Za-z]{22}$/);
      expect(event.siteId).toBe(org.site.id);
      expect(Object.keys(event.data)).toEqual(['object']);
      expect(event.data.object.id).toBe(c.id);
      expect(new Date(event.createdAt).toISOString()).toBe(event.createdAt);
      expect(Date.parse(event.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    });
  });

  describe('conversation.created (recording)', () => {
    it('recording a conversation writes conversation.created whose object is the list item, without messages', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org, { productEngagement: { impressions: 3, clicks: 1 } });
      const events = await feed(org);
      expect(types(events)).toEqual(['conversation.created']);
      expect(events[0].data.object).toEqual(await listItem(org, c.id));
      expect(events[0].data.object).not.toHaveProperty('messages');
      expect(events[0].data.object).toMatchObject({ messageCount: 2, labelStatus: 'pending' });
    });
  });

  describe('conversation.updated (messages, rating, engagement)', () => {
    /** The organization's events: its conversation created, then updated once; the update's object. */
    const theOneUpdate = async (org: Org) => {
      const events = await feed(org);
      expect(types(events)).toEqual(['conversation.created', 'conversation.updated']);
      return events[1].data.object;
    };

    it('appending messages writes conversation.updated with the conversation after the append', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      await appendMessages(t, org, c.id, [
        { role: 'shopper', blocks: [{ type: 'text', text: 'Thanks!' }] },
      ]).expect(201);
      const updated = await theOneUpdate(org);
      expect(updated).toMatchObject({ id: c.id, messageCount: 3 });
      expect(updated).toEqual(await listItem(org, c.id));
    });

    it('a rating that changes writes conversation.updated with the new feedback counts; the same rating again writes nothing', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const detail = await t.http().get(conv(org, c.id)).set(org.auth).expect(200);
      const messageId = detail.body.data.messages[1].id;
      const rate = (rating: string | null) =>
        t
          .http()
          .put(conv(org, c.id, `/messages/${messageId}/rating`))
          .set(org.auth)
          .send({ rating })
          .expect(200);
      await rate('negative');
      await rate('negative'); // no change
      expect(await theOneUpdate(org)).toMatchObject({ feedback: { positive: 0, negative: 1 } });
    });

    it('engagement writes conversation.updated with the new counts; adding zero writes nothing', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const engage = (impressions: number, clicks: number) =>
        t
          .http()
          .post(conv(org, c.id, '/engagement'))
          .set(org.auth)
          .send({ impressions, clicks })
          .expect(200);
      await engage(5, 2);
      await engage(0, 0);
      expect(await theOneUpdate(org)).toMatchObject({ productEngagement: { impressions: 5, clicks: 2 } });
    });

    it('new activity on a labeled conversation: the object shows it pending again', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      await label(t.app, c.id);
      await t
        .http()
        .post(conv(org, c.id, '/engagement'))
        .set(org.auth)
        .send({ impressions: 1, clicks: 0 })
        .expect(200);
      const events = await feed(org);
      expect(types(events)).toEqual(['conversation.created', 'conversation.labeled', 'conversation.updated']);
      expect(events[2].data.object).toMatchObject({ labelStatus: 'pending', labelSummary: null });
    });
  });

  describe('conversation.labeled, conversation.label_failed, conversation.not_eligible (label outcomes)', () => {
    it('each label outcome writes its event with the conversation as labeled', async () => {
      const org = await createOrganization(t.app);
      const labeled = await recordConversation(t, org);
      const failed = await recordConversation(t, org);
      const notEligible = await recordConversation(t, org);
      await label(t.app, labeled.id, labeledOutcome({ scores: { quality: 0.5, service: 0.6, trust: 0.7 } }));
      await label(t.app, failed.id, { status: 'failed', error: 'judge timed out', judge: null });
      await label(t.app, notEligible.id, { status: 'not_eligible', reason: 'too short' });
      const events = (await feed(org)).filter((e) => e.type !== 'conversation.created');
      expect(events.map((e) => [e.type, e.data.object.id, e.data.object.labelStatus])).toEqual([
        ['conversation.labeled', labeled.id, 'labeled'],
        ['conversation.label_failed', failed.id, 'failed'],
        ['conversation.not_eligible', notEligible.id, 'not_eligible'],
      ]);
      expect(events[0].data.object).toMatchObject({
        labelSummary: { scores: { quality: 0.5, service: 0.6, trust: 0.7 } },
      });
      expect(events[0].data.object).toEqual(await listItem(org, labeled.id));
    });

    it('a label the writer refuses to write (activity since the judge looked) writes no event', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      const result = await t.app
        .get(LabelWriter)
        .write(c.id, labeledOutcome(), { expectedUpdatedAt: new Date('2000-01-01T00:00:00.000Z') });
      expect(result).toEqual({ written: false, reason: 'changed_since' });
      expect(types(await feed(org))).toEqual(['conversation.created']);
    });
  });

  describe('page_import.closed (where an import closes)', () => {
    const importUrl = (org: Org, id: string) => `/api/v1/sites/${org.site.id}/pages/imports/${id}`;

    it('an import closed by its worker writes page_import.closed with the import as the API shows it', async () => {
      const org = await createOrganization(t.app);
      const running = await createRunningImport(t.app, org.site, org.organization.id);
      const imports = t.app.get(PageImportsRepository);
      expect(await imports.claim(running.id, 'worker-1', 60_000)).toBeDefined();
      const closed = await imports.close(running.id, 'worker-1', {
        counts: running.counts,
        boundsReached: [],
        sitemapUrl: null,
        outcome: 'failed',
        failureReason: 'no_sitemap_found',
      });
      expect(closed).toBe(true);
      const events = await feed(org);
      expect(types(events)).toEqual(['page_import.closed']);
      const shown = await t.http().get(importUrl(org, running.id)).set(org.auth).expect(200);
      expect(events[0].data.object).toEqual(shown.body.data);
      expect(events[0].data.object).toMatchObject({ state: 'closed', outcome: 'failed' });
    });

    it('an import closed failed by recovery writes page_import.closed once; closing it again writes nothing', async () => {
      const org = await createOrganization(t.app);
      const running = await createRunningImport(t.app, org.site, org.organization.id);
      const imports = t.app.get(PageImportsRepository);
      expect(await imports.failIfRunning(running.id, 'interrupted')).toBeDefined();
      expect(await imports.failIfRunning(running.id, 'interrupted')).toBeUndefined();
      expect(
        await imports.close(running.id, 'worker-1', {
          ...running,
          boundsReached: [],
          outcome: 'completed',
          failureReason: null,
        }),
      ).toBe(false);
      const events = await feed(org);
      expect(types(events)).toEqual(['page_import.closed']);
      expect(events[0].data.object).toMatchObject({ id: running.id, failureReason: 'interrupted' });
    });

    it('an import closed at once (site at its page limit) writes page_import.closed', async () => {
      const org = await createOrganization(t.app);
      const running = await createRunningImport(t.app, org.site, org.organization.id);
      await t.app
        .get(PagesRepository)
        .insertDiscovered(org.site.id, running.id, [
          { url: `${org.site.origin}/p/1`, type: 'product', languageHint: null, lastmod: null },
        ]);
      await t.app.get(PageImportsRepository).failIfRunning(running.id, 'interrupted');
      await t.db.query(`UPDATE sites SET page_limit = 1 WHERE id = $1`, [org.site.id]);
      const res = await t.http().post(`/api/v1/sites/${org.site.id}/pages/discover`).set(org.auth).send({});
      if (res.status !== 200)
        throw new Error(`expected an import closed at once: ${res.status} ${JSON.stringify(res.body)}`);
      const events = await feed(org);
      expect(types(events)).toEqual(['page_import.closed', 'page_import.closed']);
      expect(events[1].data.object).toEqual(res.body.data);
      expect(events[1].data.object).toMatchObject({ failureReason: 'page_limit_reached' });
    });
  });

  describe('not written when the change rolls back', () => {
    it('a refused request stores no event (404 on an unknown message, 400 on a bad body)', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      await t
        .http()
        .put(conv(org, c.id, '/messages/msg_DoesNotExist0000000000/rating'))
        .set(org.auth)
        .send({ rating: 'positive' })
        .expect(404);
      await t
        .http()
        .post(conv(org, c.id, '/engagement'))
        .set(org.auth)
        .send({ impressions: -1, clicks: 0 })
        .expect(400);
      await t
        .http()
        .post(`/api/v1/sites/${org.site.id}/conversations`)
        .set(org.auth)
        .send({ title: '' })
        .expect(400);
      expect(types(await feed(org))).toEqual(['conversation.created']);
    });

    it('an idempotent replay stores no second event, even when the retries arrive at once', async () => {
      const org = await createOrganization(t.app);
      const body = conversationBody();
      const send = () =>
        t
          .http()
          .post(`/api/v1/sites/${org.site.id}/conversations`)
          .set(org.auth)
          .set('Idempotency-Key', 'evt-replay')
          .send(body);
      const answers = await Promise.all([send(), send(), send()]);
      expect(answers.map((r) => r.status)).toEqual([201, 201, 201]);
      await send().expect(201);
      const events = await feed(org);
      expect(types(events)).toEqual(['conversation.created']);
      expect(events[0].data.object.id).toBe(answers[0].body.data.id);
    });

    it('a label outcome whose transaction rolls back leaves no event (and no label)', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      await expect(
        t.db.transaction(async (manager) => {
          const result = await t.app.get(LabelWriter).write(c.id, labeledOutcome(), { manager });
          expect(result.written).toBe(true);
          throw new Error('the caller fails after writing');
        }),
      ).rejects.toThrow('the caller fails after writing');
      expect(types(await feed(org))).toEqual(['conversation.created']);
      expect(await listItem(org, c.id)).toMatchObject({ labelStatus: 'pending' });
    });

    it('EventsWriter.append (what exports call in their closing transaction) commits or rolls back with the caller', async () => {
      const org = await createOrganization(t.app);
      const writer = t.app.get(EventsWriter);
      const exportEvent = (state: string) => ({
        type: (state === 'completed' ? 'export.completed' : 'export.failed') as
          'export.completed' | 'export.failed',
        organizationId: org.organization.id,
        siteId: org.site.id,
        object: { id: 'exp_Example', siteId: org.site.id, state },
      });
      await expect(
        t.db.transaction(async (manager) => {
          await writer.append(manager, exportEvent('failed'));
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      const id = await t.db.transaction((manager) => writer.append(manager, exportEvent('completed')));
      const events = await feed(org);
      expect(events.map((e) => [e.id, e.type, e.data.object])).toEqual([
        [id, 'export.completed', { id: 'exp_Example', siteId: org.site.id, state: 'completed' }],
      ]);
    });
  });
});
