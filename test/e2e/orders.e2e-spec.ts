import { describe, expect, it } from '@jest/globals';
import { recordConversation } from '../factories/conversations';
import { readFeed } from '../factories/events';
import { createOrganization, createSite, getAs, Org } from '../factories/organizations';
import { orderBody, ordersPath, putOrder } from '../factories/orders';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';

/** outcomes-v1 §1: the orders routes. */
let t: TestApp;
testAppPerSuite((app) => (t = app), {}, { redisKeyPrefixSuffix: 'orders:' });

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const faults = (res: { body: { errors: Array<Record<string, string>> } }) =>
  res.body.errors.map((e) => [e.pointer ?? `?${e.parameter}`, e.code]);
const orderCount = async (org: Org) =>
  Number((await t.db.query(`SELECT count(*) AS n FROM orders WHERE site_id = $1`, [org.site.id]))[0].n);

describe('PUT …/orders/{externalId}: 201 on create, 200 on replace, the order as GET answers it', () => {
  it('creates the order: { id: ord_…, externalId, siteId, placedAt, currency, total, refunded, net, status, lines, attribution, createdAt, updatedAt }', async () => {
    const org = await createOrganization(t.app);
    const res = await putOrder(t, org, 'SHOP-1001', orderBody({ visitorId: 'visitor-0001' })).expect(201);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^ord_[0-9A-Za-z]{22}$/),
      externalId: 'SHOP-1001',
      siteId: org.site.id,
      placedAt: '2026-11-20T10:15:00.000Z',
      currency: 'EUR',
      total: 4990,
      refunded: 0,
      net: 4990,
      status: 'placed',
      lines: [{ productId: 'sku-42', quantity: 1, amount: 4990 }],
      attribution: { conversationId: null, kind: null },
      createdAt: expect.stringMatching(ISO),
      updatedAt: res.body.data.createdAt,
    });
    const got = await getAs(t, org, ordersPath(org, `/${res.body.data.id}`)).expect(200);
    expect(got.body.data).toEqual(res.body.data);
  });

  it('visitorId and conversationIds are inputs: never returned; the visitor id is stored only as a 32-byte hash', async () => {
    const org = await createOrganization(t.app);
    const c = await recordConversation(t, org, { createdAt: '2026-11-20T09:00:00.000Z' });
    const res = await putOrder(
      t,
      org,
      'SHOP-1002',
      orderBody({ visitorId: 'visitor-secret-77', conversationIds: [c.id] }),
    ).expect(201);
    expect(JSON.stringify(res.body)).not.toContain('visitor-secret-77');
    expect(res.body.data).not.toHaveProperty('visitorId');
    expect(res.body.data).not.toHaveProperty('conversationIds');
    const [row] = await t.db.query(`SELECT visitor_hash FROM orders WHERE id = $1`, [res.body.data.id]);
    expect(row.visitor_hash).toHaveLength(32);
    expect(row.visitor_hash.toString('utf8')).not.toContain('visitor-secret-77');
  });

  it('net is total − refunded, and 0 when cancelled; status and refunded combine freely', async () => {
    const org = await createOrganization(t.app);
    const refunded = await putOrder(t, org, 'R1', orderBody({ status: 'refunded', refunded: 990 })).expect(
      201,
    );
    expect(refunded.body.data).toMatchObject({ total: 4990, refunded: 990, net: 4000, status: 'refunded' });
    const cancelled = await putOrder(t, org, 'C1', orderBody({ status: 'cancelled', refunded: 100 })).expect(
      201,
    );
    expect(cancelled.body.data).toMatchObject({ refunded: 100, net: 0, status: 'cancelled' });
    const partial = await putOrder(t, org, 'P1', orderBody({ refunded: 4990 })).expect(201);
    expect(partial.body.data).toMatchObject({ net: 0, status: 'placed' });
  });

  it('a replace answers 200 with the same id and createdAt, and moves updatedAt', async () => {
    const org = await createOrganization(t.app);
    const first = await putOrder(t, org, 'SHOP-2', orderBody()).expect(201);
    await new Promise((r) => setTimeout(r, 5));
    const second = await putOrder(t, org, 'SHOP-2', orderBody({ status: 'cancelled' })).expect(200);
    expect(second.body.data).toMatchObject({
      id: first.body.data.id,
      createdAt: first.body.data.createdAt,
      status: 'cancelled',
      net: 0,
    });
    expect(Date.parse(second.body.data.updatedAt)).toBeGreaterThan(Date.parse(first.body.data.updatedAt));
    expect(await orderCount(org)).toBe(1);
  });

  it('a replace with a body identical to the stored one answers 200 and changes nothing (no event, updatedAt kept)', async () => {
    const org = await createOrganization(t.app);
    const c = await recordConversation(t, org, { createdAt: '2026-11-20T09:00:00.000Z' });
    const body = orderBody({ conversationIds: [c.id], visitorId: 'visitor-same-1' });
    const first = await putOrder(t, org, 'SAME', body).expect(201);
    const events = (await readFeed(t, org, { types: ['order.attributed'] })).events;
    expect(events).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 5));
    const again = await putOrder(t, org, 'SAME', body).expect(200);
    expect(again.body.data).toEqual(first.body.data);
    expect((await readFeed(t, org, { types: ['order.attributed'] })).events).toHaveLength(1);
    // The same time written another way is the same order.
    await putOrder(t, org, 'SAME', { ...body, placedAt: '2026-11-20T11:15:00+01:00' }).expect(200);
    const [row] = await t.db.query(`SELECT updated_at FROM orders WHERE id = $1`, [first.body.data.id]);
    expect(row.updated_at.toISOString()).toBe(first.body.data.updatedAt);
  });

  it('a new order is answered 201 with its credit, as GET reads it; its one order.attributed carries the order as answered; its conversation is converted', async () => {
    const org = await createOrganization(t.app);
    const c = await recordConversation(t, org, {
      createdAt: '2026-11-20T09:00:00.000Z',
      visitorId: 'visitor-new-1',
    });
    const created = await putOrder(t, org, 'NEW', orderBody({ visitorId: 'visitor-new-1' })).expect(201);
    expect(created.body.data.attribution).toEqual({ conversationId: c.id, kind: 'assisted' });
    const got = await getAs(t, org, ordersPath(org, `/${created.body.data.id}`)).expect(200);
    expect(got.body.data).toEqual(created.body.data);
    const events = (await readFeed(t, org, { types: ['order.attributed'] })).events;
    expect(events.map((e) => e.data.object)).toEqual([created.body.data]);
    const [row] = await t.db.query(`SELECT converted FROM conversations WHERE id = $1`, [c.id]);
    expect(row.converted).toBe(true);
    // An order no rule credits: answered with no credit, no event.
    const store = await putOrder(t, org, 'STORE', orderBody()).expect(201);
    expect(store.body.data.attribution).toEqual({ conversationId: null, kind: null });
    expect((await readFeed(t, org, { types: ['order.attributed'] })).events).toHaveLength(1);
  });

  it('concurrent first PUTs of one externalId make one order: one 201, the others 200', async () => {
    const org = await createOrganization(t.app);
    const c = await recordConversation(t, org, {
      createdAt: '2026-11-20T09:00:00.000Z',
      visitorId: 'visitor-race-1',
    });
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        putOrder(t, org, 'RACE', orderBody({ visitorId: 'visitor-race-1', total: 1000 + i })),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(await orderCount(org)).toBe(1);
    expect(new Set(answers.map((a) => a.body.data.attribution.conversationId))).toEqual(new Set([c.id]));
    const events = (await readFeed(t, org, { types: ['order.attributed'] })).events;
    expect(events).toHaveLength(1);
  });

  it('the same externalId on two sites is two orders', async () => {
    const org = await createOrganization(t.app);
    const other = await createSite(t.app, org.organization.id);
    const a = await putOrder(t, org, 'X-1', orderBody()).expect(201);
    const b = await t
      .http()
      .put(`/api/v1/sites/${other.id}/orders/X-1`)
      .set(org.auth)
      .send(orderBody())
      .expect(201);
    expect(a.body.data.id).not.toBe(b.body.data.id);
  });

  it("another organization's site is 404 not_found", async () => {
    const org = await createOrganization(t.app);
    const stranger = await createOrganization(t.app);
    const res = await t.http().put(ordersPath(org, '/X-1')).set(stranger.auth).send(orderBody()).expect(404);
    expect(res.body.code).toBe('not_found');
  });
});

describe('PUT: every fault is reported at once with its pointer, and nothing is stored', () => {
  it('lists every fault of the body and of externalId together', async () => {
    const org = await createOrganization(t.app);
    const res = await putOrder(t, org, 'bad id!', {
      placedAt: '2026-13-01T00:00:00Z',
      currency: 'eur',
      total: -1,
      lines: [{ productId: '', quantity: 0, amount: 1.5, note: 'x' }, 'nope'],
      status: 'shipped',
      refunded: 'all',
      conversationIds: ['conv_ok1', 'not-a-conversation'],
      visitorId: 'short',
      coupon: 'X',
    }).expect(400);
    expect(res.body.code).toBe('invalid_request');
    expect(faults(res).sort()).toEqual(
      [
        ['?externalId', 'invalid_format'],
        ['/coupon', 'unknown_field'],
        ['/placedAt', 'invalid_format'],
        ['/currency', 'invalid_value'],
        ['/total', 'out_of_range'],
        ['/lines/0/note', 'unknown_field'],
        ['/lines/0/productId', 'too_short'],
        ['/lines/0/quantity', 'out_of_range'],
        ['/lines/0/amount', 'invalid_type'],
        ['/lines/1', 'invalid_type'],
        ['/status', 'invalid_value'],
        ['/refunded', 'invalid_type'],
        ['/conversationIds/1', 'invalid_format'],
        ['/visitorId', 'too_short'],
      ].sort(),
    );
    // No value is echoed in a fault (a visitor id is personal data).
    expect(JSON.stringify(res.body)).not.toContain('"short"');
    expect(await orderCount(org)).toBe(0);
  });

  it('an unknown ISO 4217 code names /currency; required fields are named', async () => {
    const org = await createOrganization(t.app);
    const res = await putOrder(t, org, 'Q-1', { currency: 'XYZ' }).expect(400);
    expect(faults(res).sort()).toEqual(
      [
        ['/currency', 'invalid_value'],
        ['/lines', 'required'],
        ['/placedAt', 'required'],
        ['/total', 'required'],
      ].sort(),
    );
  });

  it('placedAt at most 5 minutes in the future; refunded at most total; at most 20 conversationIds and 500 lines', async () => {
    const org = await createOrganization(t.app);
    const res = await putOrder(
      t,
      org,
      'Q-2',
      orderBody({
        placedAt: new Date(Date.now() + 10 * 60_000).toISOString(),
        refunded: 5000,
        conversationIds: Array.from({ length: 21 }, (_, i) => `conv_x${i}`),
        lines: Array.from({ length: 501 }, () => ({ productId: 'a', quantity: 1, amount: 1 })),
      }),
    ).expect(400);
    expect(faults(res).sort()).toEqual(
      [
        ['/placedAt', 'out_of_range'],
        ['/refunded', 'out_of_range'],
        ['/conversationIds', 'too_long'],
        ['/lines', 'too_long'],
      ].sort(),
    );
    const ok = await putOrder(
      t,
      org,
      'Q-3',
      orderBody({ placedAt: new Date(Date.now() + 60_000).toISOString() }),
    );
    expect(ok.status).toBe(201);
  });

  it('an externalId of 129 characters is refused naming the parameter; 128 is accepted; . _ : - allowed', async () => {
    const org = await createOrganization(t.app);
    const long = await putOrder(t, org, 'a'.repeat(129), orderBody()).expect(400);
    expect(long.body.errors).toEqual([expect.objectContaining({ parameter: 'externalId' })]);
    await putOrder(t, org, 'a'.repeat(128), orderBody()).expect(201);
    await putOrder(t, org, 'A.b_c:d-9', orderBody()).expect(201);
  });

  it('a bad replace leaves the stored order as it was', async () => {
    const org = await createOrganization(t.app);
    const first = await putOrder(t, org, 'KEEP', orderBody()).expect(201);
    await putOrder(t, org, 'KEEP', { ...orderBody(), total: 'x' }).expect(400);
    const got = await getAs(t, org, ordersPath(org, `/${first.body.data.id}`)).expect(200);
    expect(got.body.data).toEqual(first.body.data);
  });

  it('a body that is not an object is one fault at the empty pointer', async () => {
    const org = await createOrganization(t.app);
    const res = await putOrder(t, org, 'ARR', [1, 2]).expect(400);
    expect(faults(res)).toEqual([['', 'invalid_type']]);
  });
});

describe('GET …/orders: placedAt newest first, then id; from, to, attributed, conversationId, status; cursors', () => {
  async function fiveOrders(org: Org) {
    const c = await recordConversation(t, org, { createdAt: '2026-11-01T00:00:00.000Z' });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await putOrder(
        t,
        org,
        `L-${i}`,
        orderBody({
          placedAt: new Date(Date.UTC(2026, 10, 10 + i)).toISOString(),
          status: i === 4 ? 'cancelled' : 'placed',
          conversationIds: i % 2 === 0 ? [c.id] : [],
        }),
      ).expect(201);
      ids.push(res.body.data.id);
    }
    return { ids, conversationId: c.id };
  }
  const list = (org: Org, query: string) => t.http().get(ordersPath(org, query)).set(org.auth);

  it('pages newest first with cursors; each filter narrows', async () => {
    const org = await createOrganization(t.app);
    const { ids, conversationId } = await fiveOrders(org);
    const first = await list(org, '?limit=2').expect(200);
    expect(first.body.data.map((o: { id: string }) => o.id)).toEqual([ids[4], ids[3]]);
    const rest = await list(org, `?limit=10&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`).expect(
      200,
    );
    expect(rest.body.data.map((o: { id: string }) => o.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(rest.body.meta.nextCursor).toBeNull();
    const window = await list(org, '?from=2026-11-11T00:00:00Z&to=2026-11-13T00:00:00Z').expect(200);
    expect(window.body.data.map((o: { id: string }) => o.id)).toEqual([ids[2], ids[1]]);
    const attributed = await list(org, '?attributed=true').expect(200);
    expect(attributed.body.data.map((o: { id: string }) => o.id)).toEqual([ids[4], ids[2], ids[0]]);
    const unattributed = await list(org, '?attributed=false').expect(200);
    expect(unattributed.body.data.map((o: { id: string }) => o.id)).toEqual([ids[3], ids[1]]);
    const byConversation = await list(org, `?conversationId=${conversationId}&status=placed`).expect(200);
    expect(byConversation.body.data.map((o: { id: string }) => o.id)).toEqual([ids[2], ids[0]]);
  });

  it('a cursor is bound to its filters (cursor_mismatch); strict parameters', async () => {
    const org = await createOrganization(t.app);
    await fiveOrders(org);
    const first = await list(org, '?limit=1&status=placed').expect(200);
    const mismatch = await list(
      org,
      `?limit=1&status=cancelled&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`,
    ).expect(400);
    expect(mismatch.body.code).toBe('cursor_mismatch');
    const bad = await list(
      org,
      '?status=placed&status=cancelled&attributed=yes&sort=asc&from=yesterday',
    ).expect(400);
    expect(faults(bad).sort()).toEqual(
      [
        ['?status', 'duplicate_parameter'],
        ['?attributed', 'invalid_value'],
        ['?sort', 'unknown_parameter'],
        ['?from', 'invalid_format'],
      ].sort(),
    );
    expect((await list(org, '?cursor=garbage').expect(400)).body.code).toBe('invalid_cursor');
  });

  it('GET …/orders/{orderId}: a malformed or unknown id, or another site’s order, is 404', async () => {
    const org = await createOrganization(t.app);
    const other = await createOrganization(t.app);
    const order = await putOrder(t, other, 'O-1', orderBody()).expect(201);
    await t.http().get(ordersPath(org, '/nope')).set(org.auth).expect(404);
    await getAs(t, org, ordersPath(org, `/${order.body.data.id}`)).expect(404);
  });
});

describe('DELETE …/orders/{orderId}: 204, gone everywhere at once; order.deleted; an audit row', () => {
  it('deletes the order, emits order.deleted { id, siteId } and cuts its earlier events to the same', async () => {
    const org = await createOrganization(t.app);
    const c = await recordConversation(t, org, { createdAt: '2026-11-20T09:00:00.000Z' });
    const order = await putOrder(t, org, 'D-1', orderBody({ conversationIds: [c.id] })).expect(201);
    const id = order.body.data.id;
    await t
      .http()
      .delete(ordersPath(org, `/${id}`))
      .set(org.auth)
      .expect(204);
    await getAs(t, org, ordersPath(org, `/${id}`)).expect(404);
    await t
      .http()
      .delete(ordersPath(org, `/${id}`))
      .set(org.auth)
      .expect(404);
    expect((await t.http().get(ordersPath(org, '')).set(org.auth).expect(200)).body.data).toEqual([]);
    const events = (await readFeed(t, org, { types: ['order.attributed', 'order.deleted'] })).events;
    expect(events.map((e) => [e.type, e.data.object])).toEqual([
      ['order.attributed', { id, siteId: org.site.id }],
      ['order.deleted', { id, siteId: org.site.id }],
    ]);
    const audit = await t.db.query(
      `SELECT action, actor_type, target_id FROM audit_events WHERE site_id = $1 AND target_type = 'order'`,
      [org.site.id],
    );
    expect(audit).toEqual([{ action: 'orders.delete', actor_type: 'api_key', target_id: id }]);
    // Removed from the conversation's outcome and its converted flag.
    const got = await getAs(t, org, `/api/v1/sites/${org.site.id}/conversations/${c.id}`).expect(200);
    expect(got.body.data.outcome).toEqual({ orders: 0, revenue: [] });
    const [row] = await t.db.query(`SELECT converted FROM conversations WHERE id = $1`, [c.id]);
    expect(row.converted).toBe(false);
  });
});
