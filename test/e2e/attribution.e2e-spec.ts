import { describe, expect, it } from '@jest/globals';
import { appendMessages, recordConversation } from '../factories/conversations';
import { readFeed } from '../factories/events';
import { createOrganization, createSite, getAs, Org } from '../factories/organizations';
import { orderBody, ordersPath, putOrder } from '../factories/orders';
import { AttributionSweep } from '../../src/orders/attribution-sweep';
import { OrderAttribution } from '../../src/orders/order-attribution';
import { AppConfig } from '../../src/config/app-config';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';
import { seededRandom } from '../support/seeded-random';

/** outcomes-v1 §2 (attribution) and §6 (a deleted conversation's orders re-credited), one describe per rule. */
let t: TestApp;
testAppPerSuite((app) => (t = app), {}, { redisKeyPrefixSuffix: 'attribution:' });

const HOUR = 3_600_000;
const BASE = Date.UTC(2026, 9, 1, 12); // 1 Oct 2026 12:00 UTC
const at = (hours: number) => new Date(BASE + hours * HOUR).toISOString();
const text = (createdAt: string) => ({
  role: 'shopper',
  createdAt,
  blocks: [{ type: 'text', text: 'hello' }],
});
const cards = (createdAt: string, ...productIds: string[]) => ({
  role: 'agent',
  createdAt,
  blocks: [
    {
      type: 'product_cards',
      products: productIds.map((productId) => ({
        productId,
        name: productId,
        url: 'https://shop.example/p',
      })),
    },
  ],
});

/** Records a conversation created at `hours` after BASE, with these messages. */
const chat = async (org: Org, hours: number, extra: Record<string, unknown> = {}) =>
  (await recordConversation(t, org, { createdAt: at(hours), messages: [], ...extra })).id;

/** PUTs an order placed at `hours` after BASE; answers its attribution. */
async function order(org: Org, externalId: string, hours: number, extra: Record<string, unknown> = {}) {
  const res = await putOrder(t, org, externalId, orderBody({ placedAt: at(hours), ...extra }));
  if (res.status !== 201 && res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: string; attribution: { conversationId: string | null; kind: string | null } };
}
/**
 * A new organization where one visitor chats at 1 h and 2 h and then orders at 10 h: the order
 * is credited to the second chat (rule 2), as checked here.
 */
async function visitorsTwoChatsAndOrder(visitorId: string, externalId: string) {
  const org = await createOrganization(t.app);
  const first = await chat(org, 1, { visitorId });
  const second = await chat(org, 2, { visitorId });
  const o = await order(org, externalId, 10, { visitorId });
  expect(o.attribution.conversationId).toBe(second);
  return { org, first, second, o };
}
const credit = async (org: Org, orderId: string) =>
  (await getAs(t, org, ordersPath(org, `/${orderId}`)).expect(200)).body.data.attribution;

describe('rule 1: of its conversationIds on the site created at or before placedAt, the one created last', () => {
  it('takes the last created of those listed, not one created after placedAt nor another site’s', async () => {
    const org = await createOrganization(t.app);
    const other = await createSite(t.app, org.organization.id);
    const early = await chat(org, 0);
    const late = await chat(org, 5);
    const after = await chat(org, 20);
    const elsewhere = (await recordConversation(t, org, { createdAt: at(8), messages: [] }, other.id)).id;
    const o = await order(org, 'R1', 10, { conversationIds: [early, late, after, elsewhere] });
    expect(o.attribution).toEqual({ conversationId: late, kind: 'assisted' });
  });

  it('created at exactly placedAt counts; ties go to the greater id', async () => {
    const org = await createOrganization(t.app);
    const a = await chat(org, 10);
    const b = await chat(org, 10);
    const o = await order(org, 'R1-tie', 10, { conversationIds: [a, b] });
    expect(o.attribution.conversationId).toBe([a, b].sort().at(-1));
  });

  it('rule 1 comes before rule 2: a listed conversation wins over a later one of the visitor', async () => {
    const org = await createOrganization(t.app);
    const listed = await chat(org, 0);
    await chat(org, 9, { visitorId: 'visitor-rule-1' });
    const o = await order(org, 'R1-first', 10, { conversationIds: [listed], visitorId: 'visitor-rule-1' });
    expect(o.attribution.conversationId).toBe(listed);
  });

  it('no listed conversation qualifies: rule 2 decides', async () => {
    const org = await createOrganization(t.app);
    const later = await chat(org, 20);
    const visitor = await chat(org, 9, { visitorId: 'visitor-rule-1b' });
    const o = await order(org, 'R1-none', 10, { conversationIds: [later], visitorId: 'visitor-rule-1b' });
    expect(o.attribution.conversationId).toBe(visitor);
  });
});

describe('rule 2: of the visitor’s conversations, the latest last activity at or before placedAt, within the window', () => {
  it('last activity is the latest of createdAt and the messages not after placedAt', async () => {
    const org = await createOrganization(t.app);
    const v = { visitorId: 'visitor-activity' };
    const older = await chat(org, 0, { ...v, messages: [text(at(0)), text(at(9))] });
    await chat(org, 5, { ...v, messages: [text(at(5)), text(at(11))] }); // its 11 h message is after placedAt
    const o = await order(org, 'R2-a', 10, v);
    expect(o.attribution.conversationId).toBe(older);
  });

  it('the window is inclusive at both ends: placedAt − window counts, one millisecond earlier does not', async () => {
    const org = await createOrganization(t.app);
    await chat(org, 0, { visitorId: 'visitor-edge-1' });
    const inside = await order(org, 'R2-in', 168, { visitorId: 'visitor-edge-1' });
    expect(inside.attribution.conversationId).not.toBeNull();
    await chat(org, 0, { visitorId: 'visitor-edge-2' });
    const outside = await order(org, 'R2-out', 168, {
      visitorId: 'visitor-edge-2',
      placedAt: new Date(BASE + 168 * HOUR + 1).toISOString(),
    });
    expect(outside.attribution).toEqual({ conversationId: null, kind: null });
  });

  it('another visitor’s conversations and those created after placedAt are not candidates', async () => {
    const org = await createOrganization(t.app);
    await chat(org, 9, { visitorId: 'visitor-someone' });
    await chat(org, 11, { visitorId: 'visitor-mine-1' });
    const o = await order(org, 'R2-other', 10, { visitorId: 'visitor-mine-1' });
    expect(o.attribution.conversationId).toBeNull();
  });

  it('ties of last activity go to the greater id', async () => {
    const org = await createOrganization(t.app);
    const a = await chat(org, 3, { visitorId: 'visitor-tie-2' });
    const b = await chat(org, 3, { visitorId: 'visitor-tie-2' });
    const o = await order(org, 'R2-tie', 10, { visitorId: 'visitor-tie-2' });
    expect(o.attribution.conversationId).toBe([a, b].sort().at(-1));
  });

  it('an order that arrives before its chat is recorded is credited when the chat is recorded', async () => {
    const org = await createOrganization(t.app);
    const o = await order(org, 'R2-early', 10, { visitorId: 'visitor-early-1' });
    expect(o.attribution.conversationId).toBeNull();
    const c = await chat(org, 9, { visitorId: 'visitor-early-1' });
    expect(await credit(org, o.id)).toEqual({ conversationId: c, kind: 'assisted' });
  });

  it('a message appended after the order does not move the credit away; one before placedAt does', async () => {
    const { org, first, second, o } = await visitorsTwoChatsAndOrder('visitor-append-1', 'R2-append');
    await appendMessages(t, org, first, [text(at(11))]).expect(201);
    expect((await credit(org, o.id)).conversationId).toBe(second);
    await appendMessages(t, org, first, [text(at(8))]).expect(201);
    expect((await credit(org, o.id)).conversationId).toBe(first);
  });

  it('else none', async () => {
    const org = await createOrganization(t.app);
    const o = await order(org, 'R3', 10, {});
    expect(o.attribution).toEqual({ conversationId: null, kind: null });
  });
});

describe('kind: direct when a line’s productId is among the product cards of the conversation’s messages', () => {
  it('direct with a card of a line’s product, assisted without; an append with the card makes it direct', async () => {
    const org = await createOrganization(t.app);
    const shown = await chat(org, 0, { messages: [cards(at(0), 'sku-1', 'sku-42')] });
    const o1 = await order(org, 'K1', 10, { conversationIds: [shown] });
    expect(o1.attribution).toEqual({ conversationId: shown, kind: 'direct' });
    const other = await chat(org, 0, { messages: [cards(at(0), 'sku-7')] });
    const o2 = await order(org, 'K2', 10, { conversationIds: [other] });
    expect(o2.attribution).toEqual({ conversationId: other, kind: 'assisted' });
    await appendMessages(t, org, other, [cards(at(12), 'sku-42')]).expect(201);
    expect(await credit(org, o2.id)).toEqual({ conversationId: other, kind: 'direct' });
    // A change of kind alone emits nothing.
    const events = (await readFeed(t, org, { types: ['order.attributed', 'order.unattributed'] })).events;
    expect(events.map((e) => e.data.object.id)).toEqual([o1.id, o2.id]);
  });
});

describe('re-crediting: replaced orders, deleted conversations (§6), events once per change', () => {
  it('deleting the credited conversation gives the order to the next candidate, then to none', async () => {
    const { org, first, second, o } = await visitorsTwoChatsAndOrder('visitor-delete-1', 'D1');
    await t.http().delete(`/api/v1/sites/${org.site.id}/conversations/${second}`).set(org.auth).expect(204);
    expect((await credit(org, o.id)).conversationId).toBe(first);
    await t.http().delete(`/api/v1/sites/${org.site.id}/conversations/${first}`).set(org.auth).expect(204);
    expect((await credit(org, o.id)).conversationId).toBeNull();
    const events = (await readFeed(t, org, { types: ['order.attributed', 'order.unattributed'] })).events;
    expect(
      events.map((e) => [e.type, (e.data.object as unknown as { attribution: unknown }).attribution]),
    ).toEqual([
      ['order.attributed', { conversationId: second, kind: 'assisted' }],
      ['order.attributed', { conversationId: first, kind: 'assisted' }],
      ['order.unattributed', { conversationId: null, kind: null }],
    ]);
  });

  it('a new order with no credit and a replace that leaves the credit as it was emit nothing', async () => {
    const org = await createOrganization(t.app);
    await order(org, 'E1', 10, {});
    const c = await chat(org, 0);
    await order(org, 'E2', 10, { conversationIds: [c] });
    await order(org, 'E2', 10, { conversationIds: [c], status: 'refunded', refunded: 4990 });
    const events = (await readFeed(t, org, { types: ['order.attributed', 'order.unattributed'] })).events;
    expect(events).toHaveLength(1);
  });
});

describe('concurrency: an order and a chat of its visitor written at once are credited as if one came after the other', () => {
  it('in 12 races of a recording and a PUT, the order is credited to the chat every time', async () => {
    const org = await createOrganization(t.app);
    const misses: string[] = [];
    for (let i = 0; i < 12; i++) {
      const visitorId = `visitor-race-${i}-${Date.now()}`;
      const [recorded, put] = await Promise.all([
        recordConversation(t, org, { createdAt: at(9), messages: [], visitorId }),
        putOrder(t, org, `RACE-${i}`, orderBody({ placedAt: at(10), visitorId })),
      ]);
      expect(put.status).toBe(201);
      const got = await credit(org, put.body.data.id);
      if (got.conversationId !== recorded.id) misses.push(`race ${i}`);
    }
    expect(misses).toEqual([]);
  });
});

describe('converted and the outcome of the single conversation', () => {
  const listIds = async (org: Org, query: string) =>
    (
      await t.http().get(`/api/v1/sites/${org.site.id}/conversations${query}`).set(org.auth).expect(200)
    ).body.data.map((c: { id: string }) => c.id);

  it('converted=true lists conversations with a credited order of net > 0; false the others; outcome counts orders not cancelled', async () => {
    const org = await createOrganization(t.app);
    const sold = await chat(org, 0);
    const cancelledOnly = await chat(org, 0);
    const none = await chat(org, 0);
    await order(org, 'O1', 10, { conversationIds: [sold], currency: 'USD', total: 500 });
    await order(org, 'O2', 10, { conversationIds: [sold], currency: 'EUR', total: 1990 });
    await order(org, 'O3', 10, {
      conversationIds: [sold],
      currency: 'EUR',
      total: 1000,
      status: 'cancelled',
    });
    await order(org, 'O4', 10, { conversationIds: [cancelledOnly], status: 'cancelled' });
    expect(await listIds(org, '?converted=true')).toEqual([sold]);
    expect((await listIds(org, '?converted=false')).sort()).toEqual([cancelledOnly, none].sort());
    const got = await getAs(t, org, `/api/v1/sites/${org.site.id}/conversations/${sold}`).expect(200);
    expect(got.body.data.outcome).toEqual({
      orders: 2,
      revenue: [
        { currency: 'EUR', net: 1990 },
        { currency: 'USD', net: 500 },
      ],
    });
    const plain = await getAs(t, org, `/api/v1/sites/${org.site.id}/conversations/${none}`).expect(200);
    expect(plain.body.data.outcome).toEqual({ orders: 0, revenue: [] });
    // A full refund: net 0, no longer converted.
    await order(org, 'O1', 10, { conversationIds: [sold], currency: 'USD', total: 500, refunded: 500 });
    await order(org, 'O2', 10, {
      conversationIds: [sold],
      currency: 'EUR',
      total: 1990,
      status: 'cancelled',
    });
    expect(await listIds(org, '?converted=true')).toEqual([]);
    // List items do not carry the outcome.
    const list = await t.http().get(`/api/v1/sites/${org.site.id}/conversations`).set(org.auth).expect(200);
    expect(list.body.data[0]).not.toHaveProperty('outcome');
  });

  it('converted goes wherever the listing’s filters go: with keywords, in statistics, in a view', async () => {
    const org = await createOrganization(t.app);
    const sold = await chat(org, 0, { title: 'Red running shoes' });
    await chat(org, 0, { title: 'Red running shoes again' });
    await chat(org, 0, { title: 'Blue socks' });
    await order(org, 'W1', 10, { conversationIds: [sold] });
    expect(await listIds(org, '?converted=true&keywords=red')).toEqual([sold]);
    expect((await listIds(org, '?converted=false&keywords=red')).length).toBe(1);
    const stats = await getAs(
      t,
      org,
      `/api/v1/sites/${org.site.id}/conversations/stats?converted=true`,
    ).expect(200);
    expect(stats.body.data.total).toBe(1);
    const unconverted = await getAs(
      t,
      org,
      `/api/v1/sites/${org.site.id}/conversations/stats?converted=false`,
    ).expect(200);
    expect(unconverted.body.data.total).toBe(2);
    const view = await t
      .http()
      .post(`/api/v1/sites/${org.site.id}/views`)
      .set(org.auth)
      .send({ name: 'Sold', filters: { converted: true } })
      .expect(201);
    expect(view.body.data.filters).toEqual({ converted: true });
    expect(await listIds(org, `?view=${view.body.data.id}`)).toEqual([sold]);
    const bad = await t
      .http()
      .post(`/api/v1/sites/${org.site.id}/views`)
      .set(org.auth)
      .send({ name: 'Bad', filters: { converted: 'yes' } })
      .expect(400);
    expect(bad.body.errors[0].pointer).toBe('/filters/converted');
  });

  it('the visitor id is never returned, and stored only as a hash', async () => {
    const org = await createOrganization(t.app);
    const res = await recordConversationRaw(org, 'visitor-never-shown-1');
    expect(JSON.stringify(res.body)).not.toContain('visitor-never-shown-1');
    const [row] = await t.db.query(`SELECT visitor_hash FROM conversations WHERE id = $1`, [
      res.body.data.id,
    ]);
    expect(row.visitor_hash).toHaveLength(32);
  });
  const recordConversationRaw = (org: Org, visitorId: string) =>
    t
      .http()
      .post(`/api/v1/sites/${org.site.id}/conversations`)
      .set(org.auth)
      .send({
        title: 'Shoes',
        channel: 'web',
        language: 'en',
        agent: { id: 'agt_A1', name: 'A', version: 1, versionId: 'agtv_A1v1' },
        visitorId,
      })
      .expect(201);
});

/**
 * The property: random sequences of orders, conversations, appends, deletions and window changes
 * always leave every order credited exactly as a from-scratch computation of §2 says, and
 * `converted` true exactly for the conversations credited with an order of net > 0.
 */
describe('property: after any sequence of writes, every order is credited as a from-scratch computation says', () => {
  interface ModelConversation {
    id: string;
    createdAt: number;
    visitor: string | null;
    messages: Array<{ at: number; products: string[] }>;
  }
  interface ModelOrder {
    externalId: string;
    id: string;
    placedAt: number;
    visitor: string | null;
    conversationIds: string[];
    products: string[];
    net: number;
  }

  function fromScratch(
    o: ModelOrder,
    conversations: Map<string, ModelConversation>,
    windowHours: number,
  ): { conversationId: string | null; kind: string | null } {
    const later = (a: { key: number; id: string }, b: { key: number; id: string }) =>
      a.key !== b.key ? a.key > b.key : a.id > b.id;
    let best: { key: number; id: string } | undefined;
    for (const id of o.conversationIds) {
      const c = conversations.get(id);
      if (!c || c.createdAt > o.placedAt) continue;
      const candidate = { key: c.createdAt, id };
      if (!best || later(candidate, best)) best = candidate;
    }
    if (!best && o.visitor)
      for (const c of conversations.values()) {
        if (c.visitor !== o.visitor || c.createdAt > o.placedAt) continue;
        const last = Math.max(c.createdAt, ...c.messages.filter((m) => m.at <= o.placedAt).map((m) => m.at));
        if (last < o.placedAt - windowHours * HOUR) continue;
        const candidate = { key: last, id: c.id };
        if (!best || later(candidate, best)) best = candidate;
      }
    if (!best) return { conversationId: null, kind: null };
    const shown = new Set(conversations.get(best.id)!.messages.flatMap((m) => m.products));
    return { conversationId: best.id, kind: o.products.some((p) => shown.has(p)) ? 'direct' : 'assisted' };
  }

  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`seed ${seed}: 40 random writes`, async () => {
      const rnd = seededRandom(seed);
      const pick = <T>(items: readonly T[]) => items[Math.floor(rnd() * items.length)];
      const org = await createOrganization(t.app);
      const visitors = ['visitor-p-0001', 'visitor-p-0002', 'visitor-p-0003'];
      const products = ['p1', 'p2', 'p3', 'p4'];
      const conversations = new Map<string, ModelConversation>();
      const orders = new Map<string, ModelOrder>();
      let windowHours = 168;
      const hoursAt = () => Math.floor(rnd() * 400); // within ~17 days

      for (let step = 0; step < 40; step++) {
        const r = rnd();
        if (r < 0.3) {
          const createdAt = BASE + hoursAt() * HOUR;
          const visitor = rnd() < 0.8 ? pick(visitors) : null;
          const messages =
            rnd() < 0.5 ? [{ at: createdAt + HOUR, products: rnd() < 0.5 ? [pick(products)] : [] }] : [];
          const id = (
            await recordConversation(t, org, {
              createdAt: new Date(createdAt).toISOString(),
              ...(visitor ? { visitorId: visitor } : {}),
              messages: messages.map((m) =>
                m.products.length
                  ? cards(new Date(m.at).toISOString(), ...m.products)
                  : text(new Date(m.at).toISOString()),
              ),
            })
          ).id;
          conversations.set(id, { id, createdAt, visitor, messages });
        } else if (r < 0.6) {
          const externalId = `P-${Math.floor(rnd() * 8)}`;
          const placedAt = BASE + hoursAt() * HOUR;
          const visitor = rnd() < 0.7 ? pick(visitors) : null;
          const listed = [...conversations.keys()].filter(() => rnd() < 0.15).slice(0, 3);
          const lineProducts = [pick(products)];
          const cancelled = rnd() < 0.2;
          const res = await putOrder(
            t,
            org,
            externalId,
            orderBody({
              placedAt: new Date(placedAt).toISOString(),
              lines: lineProducts.map((productId) => ({ productId, quantity: 1, amount: 100 })),
              total: 100,
              status: cancelled ? 'cancelled' : 'placed',
              conversationIds: listed,
              ...(visitor ? { visitorId: visitor } : {}),
            }),
          );
          expect([200, 201]).toContain(res.status);
          orders.set(externalId, {
            externalId,
            id: res.body.data.id,
            placedAt,
            visitor,
            conversationIds: listed,
            products: lineProducts,
            net: cancelled ? 0 : 100,
          });
        } else if (r < 0.75 && conversations.size > 0) {
          const c = conversations.get(pick([...conversations.keys()]))!;
          const m = { at: BASE + hoursAt() * HOUR, products: rnd() < 0.5 ? [pick(products)] : [] };
          await appendMessages(t, org, c.id, [
            m.products.length
              ? cards(new Date(m.at).toISOString(), ...m.products)
              : text(new Date(m.at).toISOString()),
          ]).expect(201);
          c.messages.push(m);
        } else if (r < 0.85 && conversations.size > 0) {
          const id = pick([...conversations.keys()]);
          await t.http().delete(`/api/v1/sites/${org.site.id}/conversations/${id}`).set(org.auth).expect(204);
          conversations.delete(id);
        } else if (r < 0.92 && orders.size > 0) {
          const o = orders.get(pick([...orders.keys()]))!;
          await t
            .http()
            .delete(ordersPath(org, `/${o.id}`))
            .set(org.auth)
            .expect(204);
          orders.delete(o.externalId);
        } else {
          windowHours = pick([1, 24, 72, 168, 720]);
          await t
            .http()
            .patch(`/api/v1/sites/${org.site.id}`)
            .set(org.auth)
            .send({ attributionWindowHours: windowHours })
            .expect(200);
          // The workers' sweep, run here at once.
          await new AttributionSweep(t.app.get(AppConfig), t.db, t.app.get(OrderAttribution)).sweep();
        }
      }

      const converted = new Set<string>();
      for (const o of orders.values()) {
        const expected = fromScratch(o, conversations, windowHours);
        expect({ order: o.externalId, credit: await credit(org, o.id) }).toEqual({
          order: o.externalId,
          credit: expected,
        });
        if (expected.conversationId && o.net > 0) converted.add(expected.conversationId);
      }
      const rows: Array<{ id: string; converted: boolean }> = await t.db.query(
        `SELECT id, converted FROM conversations WHERE site_id = $1`,
        [org.site.id],
      );
      expect(
        rows
          .filter((r) => r.converted)
          .map((r) => r.id)
          .sort(),
      ).toEqual([...converted].sort());
    }, 120_000);
  }
});
