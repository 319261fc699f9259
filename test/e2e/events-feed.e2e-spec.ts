import { describe, expect, it } from '@jest/globals';
import type { ErrorCode } from '../../src/common/errors/error-codes';
import type { EventType } from '../../src/events/event-types';
import { EventsWriter } from '../../src/events/events.writer';
import { FeedEvent, getEvents, readFeed } from '../factories/events';
import { createOrganization, createSite, Org } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';
import { expectProblemOf } from '../support/problem-documents';

/** analytics-v1 §3: GET /api/v1/events, its parameters, answer and errors. */
describe('GET /api/v1/events', () => {
  let t: TestApp;
  testAppPerSuite((app) => (t = app), {}, { redisKeyPrefixSuffix: 'events-feed:' });

  /** Appends `n` events of the type on the site, committed together; returns their object ids in order. */
  const appendEvents = (
    org: Org,
    n: number,
    type: EventType = 'conversation.created',
    siteId = org.site.id,
  ) =>
    t.db.transaction(async (manager) => {
      const names: string[] = [];
      for (let i = 0; i < n; i++) {
        const name = `${type}-${siteId}-${i}`;
        await t.app.get(EventsWriter).append(manager, {
          type,
          organizationId: org.organization.id,
          siteId,
          object: { id: name },
        });
        names.push(name);
      }
      return names;
    });
  const names = (events: FeedEvent[]) => events.map((e) => e.data.object.id);
  /** The problem document of `code`; with `parameter`, its one error names that query parameter. */
  const expectProblem = (res: Parameters<typeof expectProblemOf>[0], code: ErrorCode, parameter?: string) =>
    expectProblemOf(res, code, parameter ? [expect.objectContaining({ parameter })] : undefined);

  describe('answer: { data: [event], meta: { nextCursor } }, nextCursor never null', () => {
    it('an organization without events gets an empty page and a cursor to poll with', async () => {
      const org = await createOrganization(t.app);
      const res = await getEvents(t, org).expect(200);
      expect(res.body).toEqual({ data: [], meta: { nextCursor: expect.any(String) } });
    });

    it('polling with the last page cursor returns exactly what happened since', async () => {
      const org = await createOrganization(t.app);
      await appendEvents(org, 2);
      const first = await getEvents(t, org).expect(200);
      expect(first.body.data).toHaveLength(2);
      const quiet = await getEvents(t, org, { cursor: first.body.meta.nextCursor }).expect(200);
      expect(quiet.body.data).toEqual([]);
      expect(quiet.body.meta.nextCursor).toEqual(expect.any(String));
      const later = await appendEvents(org, 1, 'conversation.updated');
      const next = await getEvents(t, org, { cursor: quiet.body.meta.nextCursor }).expect(200);
      expect(names(next.body.data)).toEqual(later);
    });

    it('another organization never sees these events', async () => {
      const org = await createOrganization(t.app);
      const other = await createOrganization(t.app);
      await appendEvents(org, 2);
      expect((await readFeed(t, other)).events).toEqual([]);
    });

    it('requires the API key (401 unauthorized)', async () => {
      const res = await t.http().get('/api/v1/events');
      expectProblem(res, 'unauthorized');
    });
  });

  describe('limit: 1–1,000, default 100', () => {
    it('without limit a page holds 100 events; limit=1000 holds up to 1,000', async () => {
      const org = await createOrganization(t.app);
      await appendEvents(org, 101);
      const page = await getEvents(t, org).expect(200);
      expect(page.body.data).toHaveLength(100);
      const rest = await getEvents(t, org, { cursor: page.body.meta.nextCursor }).expect(200);
      expect(rest.body.data).toHaveLength(1);
      expect((await getEvents(t, org, { limit: 1000 }).expect(200)).body.data).toHaveLength(101);
      expect((await getEvents(t, org, { limit: 1 }).expect(200)).body.data).toHaveLength(1);
    });

    it.each(['0', '1001', 'ten', '-1', '1.5'])('limit=%s is a 400 naming limit', async (limit) => {
      const org = await createOrganization(t.app);
      expectProblem(await getEvents(t, org, { limit }), 'invalid_request', 'limit');
    });

    it('the limit may change between pages', async () => {
      const org = await createOrganization(t.app);
      const all = await appendEvents(org, 5);
      const a = await getEvents(t, org, { limit: 2 }).expect(200);
      const b = await getEvents(t, org, { limit: 3, cursor: a.body.meta.nextCursor }).expect(200);
      expect([...names(a.body.data), ...names(b.body.data)]).toEqual(all);
    });
  });

  describe('types (repeatable): only events of those types; an unknown value is a 400 naming types', () => {
    it('filters on one or several types', async () => {
      const org = await createOrganization(t.app);
      const created = await appendEvents(org, 2, 'conversation.created');
      const labeled = await appendEvents(org, 1, 'conversation.labeled');
      const closed = await appendEvents(org, 1, 'page_import.closed');
      expect(names((await readFeed(t, org, { types: ['conversation.labeled'] })).events)).toEqual(labeled);
      expect(
        names((await readFeed(t, org, { types: ['page_import.closed', 'conversation.created'] })).events),
      ).toEqual([...created, ...closed]);
    });

    it.each(['conversation.exploded', 'webhook.test', ''])(
      'types=%p is a 400 invalid_request naming types',
      async (type) => {
        const org = await createOrganization(t.app);
        expectProblem(
          await getEvents(t, org, { types: ['conversation.created', type] }),
          'invalid_request',
          'types',
        );
      },
    );

    it('an unknown query parameter is a 400 unknown_parameter', async () => {
      const org = await createOrganization(t.app);
      const res = await getEvents(t, org, { type: 'conversation.created' });
      expectProblem(res, 'invalid_request', 'type');
      expect(res.body.errors[0].code).toBe('unknown_parameter');
    });
  });

  describe("siteId (repeatable): only that site's events; another organization's site is a 404 not_found", () => {
    it('filters on one or several sites', async () => {
      const org = await createOrganization(t.app);
      const second = await createSite(t.app, org.organization.id);
      const third = await createSite(t.app, org.organization.id);
      const onFirst = await appendEvents(org, 1, 'conversation.created', org.site.id);
      const onSecond = await appendEvents(org, 2, 'conversation.created', second.id);
      const onThird = await appendEvents(org, 1, 'conversation.created', third.id);
      expect(names((await readFeed(t, org, { siteId: [second.id] })).events)).toEqual(onSecond);
      expect(names((await readFeed(t, org, { siteId: [org.site.id, third.id] })).events)).toEqual([
        ...onFirst,
        ...onThird,
      ]);
    });

    it("another organization's site, an unknown site and a malformed id are 404 not_found", async () => {
      const org = await createOrganization(t.app);
      const other = await createOrganization(t.app);
      expectProblem(await getEvents(t, org, { siteId: [org.site.id, other.site.id] }), 'not_found');
      expectProblem(await getEvents(t, org, { siteId: ['site_DoesNotExist00000000000'] }), 'not_found');
      expectProblem(await getEvents(t, org, { siteId: ['not an id'] }), 'not_found');
    });

    it('types and siteId combine', async () => {
      const org = await createOrganization(t.app);
      const second = await createSite(t.app, org.organization.id);
      await appendEvents(org, 1, 'conversation.labeled', org.site.id);
      await appendEvents(org, 1, 'conversation.created', second.id);
      const wanted = await appendEvents(org, 1, 'conversation.labeled', second.id);
      const read = await readFeed(t, org, { siteId: [second.id], types: ['conversation.labeled'] });
      expect(names(read.events)).toEqual(wanted);
    });
  });

  describe('cursors: signed, bound to types and siteId (cursor_mismatch), invalid_cursor when altered', () => {
    it('a cursor used with other types or siteId is a 400 cursor_mismatch; the same filters in another order are accepted', async () => {
      const org = await createOrganization(t.app);
      const second = await createSite(t.app, org.organization.id);
      await appendEvents(org, 3);
      const page = await getEvents(t, org, {
        limit: 1,
        types: ['conversation.created', 'conversation.updated'],
        siteId: [org.site.id, second.id],
      }).expect(200);
      const cursor = page.body.meta.nextCursor;
      expectProblem(await getEvents(t, org, { cursor }), 'cursor_mismatch', 'cursor');
      expectProblem(
        await getEvents(t, org, {
          cursor,
          types: ['conversation.created'],
          siteId: [org.site.id, second.id],
        }),
        'cursor_mismatch',
      );
      expectProblem(
        await getEvents(t, org, {
          cursor,
          types: ['conversation.created', 'conversation.updated'],
          siteId: [second.id],
        }),
        'cursor_mismatch',
      );
      await getEvents(t, org, {
        cursor,
        types: ['conversation.updated', 'conversation.created'],
        siteId: [second.id, org.site.id],
      }).expect(200);
    });

    it("another organization's cursor is a cursor_mismatch", async () => {
      const org = await createOrganization(t.app);
      const other = await createOrganization(t.app);
      const cursor = (await getEvents(t, org).expect(200)).body.meta.nextCursor;
      expectProblem(await getEvents(t, other, { cursor }), 'cursor_mismatch');
    });

    it('an altered cursor is a 400 invalid_cursor; the cursor of another listing is a cursor_mismatch', async () => {
      const org = await createOrganization(t.app);
      const cursor: string = (await getEvents(t, org).expect(200)).body.meta.nextCursor;
      const [body, signature] = cursor.split('.');
      const forged = Buffer.from(
        JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), p: ['-1'] }),
      ).toString('base64url');
      expectProblem(await getEvents(t, org, { cursor: `${forged}.${signature}` }), 'invalid_cursor');
      expectProblem(await getEvents(t, org, { cursor: 'garbage' }), 'invalid_cursor');
      await createSite(t.app, org.organization.id);
      const listing = await t.http().get('/api/v1/sites?limit=1').set(org.auth).expect(200);
      expectProblem(await getEvents(t, org, { cursor: listing.body.meta.nextCursor }), 'cursor_mismatch');
    });
  });
});
