import { describe, expect, it } from '@jest/globals';
import { recordConversation } from '../factories/conversations';
import { readFeed } from '../factories/events';
import { createOrganization, getAs, Org } from '../factories/organizations';
import { orderBody, ordersPath, putOrder } from '../factories/orders';
import { testAppPerSuite } from '../setup/app-per-suite';
import { OWN_BUDGET, TestApp } from '../setup/test-app';

/**
 * The workers' part of outcomes-v1: the window sweep (§2: a changed window re-credits the
 * site's orders, ATTRIBUTION_SWEEP_INTERVAL_SECONDS, 1 here) and the orders' retention (§6).
 */
let t: TestApp;
testAppPerSuite(
  (app) => (t = app),
  {
    ...OWN_BUDGET,
    SEARCH_BACKEND: 'postgres',
    WORKERS: 'on',
    ATTRIBUTION_SWEEP_INTERVAL_SECONDS: '1',
    RETENTION_SWEEP_INTERVAL_SECONDS: '1',
  },
  { redisKeyPrefixSuffix: 'attribution-sweep:', ownDatabase: true },
);

const HOUR = 3_600_000;
const sitePath = (org: Org) => `/api/v1/sites/${org.site.id}`;
async function eventually<T>(read: () => Promise<T>, until: (value: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (until(value) || Date.now() > end) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('attributionWindowHours: integer 1–720, default 168, PATCH …/sites/{siteId}; null is 400', () => {
  it('the site shows 168 by default and takes a new window; null, 0, 721 and 1.5 are refused naming the field', async () => {
    const org = await createOrganization(t.app);
    const site = await t.http().get(sitePath(org)).set(org.auth).expect(200);
    expect(site.body.data.attributionWindowHours).toBe(168);
    const changed = await t
      .http()
      .patch(sitePath(org))
      .set(org.auth)
      .send({ attributionWindowHours: 24 })
      .expect(200);
    expect(changed.body.data.attributionWindowHours).toBe(24);
    for (const bad of [null, 0, 721, 1.5, '24']) {
      const res = await t
        .http()
        .patch(sitePath(org))
        .set(org.auth)
        .send({ attributionWindowHours: bad })
        .expect(400);
      expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/attributionWindowHours']);
    }
  });
});

describe('the window sweep: after a change of window the site’s orders are credited again, by the workers', () => {
  it('a narrower window takes the credit away, a wider one gives it back, each with its event', async () => {
    const org = await createOrganization(t.app);
    const placedAt = Date.now() - HOUR;
    const c = await recordConversation(t, org, {
      createdAt: new Date(placedAt - 48 * HOUR).toISOString(),
      messages: [],
      visitorId: 'visitor-sweep-01',
    });
    const order = await putOrder(
      t,
      org,
      'S-1',
      orderBody({ placedAt: new Date(placedAt).toISOString(), visitorId: 'visitor-sweep-01' }),
    ).expect(201);
    expect(order.body.data.attribution.conversationId).toBe(c.id);
    const creditOf = async () =>
      (await getAs(t, org, ordersPath(org, `/${order.body.data.id}`)).expect(200)).body.data.attribution
        .conversationId as string | null;

    await t.http().patch(sitePath(org)).set(org.auth).send({ attributionWindowHours: 24 }).expect(200);
    expect(await eventually(creditOf, (v) => v === null)).toBeNull();
    await t.http().patch(sitePath(org)).set(org.auth).send({ attributionWindowHours: 72 }).expect(200);
    expect(await eventually(creditOf, (v) => v === c.id)).toBe(c.id);

    const events = (await readFeed(t, org, { types: ['order.attributed', 'order.unattributed'] })).events;
    expect(events.map((e) => e.type)).toEqual(['order.attributed', 'order.unattributed', 'order.attributed']);
    // The sweep clears the site's mark once its orders are credited again.
    const stale = await eventually(
      async () =>
        (await t.db.query(`SELECT attribution_stale_since AS s FROM sites WHERE id = $1`, [org.site.id]))[0]
          .s,
      (value) => value === null,
    );
    expect(stale).toBeNull();
  });
});

describe('retention (retentionDays) deletes orders by placedAt, each with order.deleted and an audit row', () => {
  it('an order placed before the cutoff goes; a recent one stays', async () => {
    const org = await createOrganization(t.app);
    const old = await putOrder(
      t,
      org,
      'OLD',
      orderBody({ placedAt: new Date(Date.now() - 3 * 24 * HOUR).toISOString() }),
    ).expect(201);
    const recent = await putOrder(t, org, 'NEW', orderBody({ placedAt: new Date().toISOString() })).expect(
      201,
    );
    await t.http().patch(sitePath(org)).set(org.auth).send({ retentionDays: 1 }).expect(200);
    const gone = await eventually(
      async () => (await getAs(t, org, ordersPath(org, `/${old.body.data.id}`))).status,
      (status) => status === 404,
    );
    expect(gone).toBe(404);
    await getAs(t, org, ordersPath(org, `/${recent.body.data.id}`)).expect(200);
    const deleted = (await readFeed(t, org, { types: ['order.deleted'] })).events;
    expect(deleted.map((e) => e.data.object)).toEqual([{ id: old.body.data.id, siteId: org.site.id }]);
    const audit = await t.db.query(`SELECT action, actor_type FROM audit_events WHERE target_id = $1`, [
      old.body.data.id,
    ]);
    expect(audit).toEqual([{ action: 'orders.retention_delete', actor_type: 'system' }]);
  });
});
