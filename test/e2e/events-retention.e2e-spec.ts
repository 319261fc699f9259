import { describe, expect, it } from '@jest/globals';
import { ERROR_CODES } from '../../src/common/errors/error-codes';
import { EventFeedJobs } from '../../src/events/event-feed-jobs';
import { EventsWriter } from '../../src/events/events.writer';
import { getEvents, readFeed } from '../factories/events';
import { createOrganization } from '../factories/organizations';
import { eventually } from '../setup/isolated-database';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';

type Org = Awaited<ReturnType<typeof createOrganization>>;

/**
 * analytics-v1 §3: "Events are kept 30 days (EVENT_RETENTION_DAYS); a cursor pointing before
 * that gives 410 cursor_expired." With the workers on, on a database of its own: the purge
 * moves the feed's retention mark, which every reader's cursor is compared with.
 */
describe('events: retention and the workers', () => {
  let t: TestApp;
  testAppPerSuite(
    (app) => (t = app),
    { WORKERS: 'on', EVENT_RETENTION_DAYS: '30' },
    { ownDatabase: true, redisKeyPrefixSuffix: 'events-retention:' },
  );

  const append = (org: Org, name: string) =>
    t.db.transaction((manager) =>
      t.app.get(EventsWriter).append(manager, {
        type: 'conversation.created',
        organizationId: org.organization.id,
        siteId: org.site.id,
        object: { id: name },
      }),
    );
  /** Makes the events look positioned `days` ago (as if committed then). */
  const age = (ids: string[], days: number) =>
    t.db.query(`UPDATE events SET sequenced_at = now() - make_interval(days => $2) WHERE id = ANY($1)`, [
      ids,
      days,
    ]);

  describe('events are kept EVENT_RETENTION_DAYS, then purged by the workers', () => {
    it('the purge deletes events older than the retention and keeps the younger ones', async () => {
      const org = await createOrganization(t.app);
      const old = [await append(org, 'old-1'), await append(org, 'old-2')];
      await readFeed(t, org); // positions them
      await append(org, 'young');
      await readFeed(t, org);
      await age(old, 31);
      expect(await t.app.get(EventFeedJobs).purge()).toBe(2);
      expect((await readFeed(t, org)).events.map((e) => e.data.object.id)).toEqual(['young']);
    });
  });

  describe('a cursor pointing before the retained window gives 410 cursor_expired', () => {
    it('a reader whose cursor had not reached purged events gets cursor_expired; one past them reads on', async () => {
      const org = await createOrganization(t.app);
      const behind = (await readFeed(t, org)).cursor;
      const ids = [await append(org, 'a'), await append(org, 'b')];
      const caughtUp = await readFeed(t, org, { cursor: behind });
      expect(caughtUp.events).toHaveLength(2);
      await append(org, 'c');
      await age(ids, 40);
      expect(await t.app.get(EventFeedJobs).purge()).toBe(2);

      const res = await getEvents(t, org, { cursor: behind });
      expect(res.status).toBe(410);
      expect(res.body).toMatchObject({
        code: 'cursor_expired',
        title: ERROR_CODES.cursor_expired.title,
        status: 410,
        type: expect.stringMatching(/\/docs\/api\/errors#cursor_expired$/),
      });
      const onward = await readFeed(t, org, { cursor: caughtUp.cursor });
      expect(onward.events.map((e) => e.data.object.id)).toEqual(['c']);
      // Starting again without a cursor works: from the oldest event kept.
      expect((await readFeed(t, org)).events.map((e) => e.data.object.id)).toEqual(['c']);
    });

    it('the errors page documents cursor_expired', async () => {
      const res = await t.http().get('/docs/api/errors').expect(200);
      expect(res.text).toContain('id="cursor_expired"');
    });
  });

  describe('an event is readable within 1 s of its commit', () => {
    it('the workers give committed events their position without any reader, every 250 ms', async () => {
      const org = await createOrganization(t.app);
      const id = await append(org, 'unread');
      const committed = Date.now();
      await eventually(
        async () =>
          (await t.db.query(`SELECT position FROM events WHERE id = $1`, [id]))[0].position !== null
            ? true
            : undefined,
        'the event is positioned',
        5000,
      );
      // Generous bound for a loaded machine; the job runs every 250 ms.
      expect(Date.now() - committed).toBeLessThan(2000);
    });
  });
});
