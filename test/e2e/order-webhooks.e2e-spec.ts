import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { recordConversation } from '../factories/conversations';
import { createOrganization } from '../factories/organizations';
import { orderBody, ordersPath, putOrder } from '../factories/orders';
import { WebhookReceiver } from '../fixtures/webhook-receiver';
import { eventually } from '../setup/isolated-database';
import { createTestApp, TestApp } from '../setup/test-app';
import { subscribeWebhook } from '../factories/webhooks';

/** outcomes-v1 §2: order.attributed, order.unattributed and order.deleted reach webhooks, once per change. */
describe('order events are delivered to webhooks subscribed to them', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    t = await createTestApp(
      {
        WORKERS: 'on',
        SEARCH_BACKEND: 'postgres',
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_LOOPBACK: 'true',
        WEBHOOK_RETRY_SCALE: '0.001',
      },
      { redisKeyPrefixSuffix: 'order-webhooks:', ownDatabase: true },
    );
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
  }, 60_000);

  it('each change of credit is one delivery, with the order as its object; a deletion sends { id, siteId }', async () => {
    const org = await createOrganization(t.app);
    await subscribeWebhook(t, org, receiver.url('/orders'), [
      'order.attributed',
      'order.unattributed',
      'order.deleted',
    ]);
    const c = await recordConversation(t, org, { createdAt: '2026-11-01T00:00:00.000Z' });
    const created = await putOrder(t, org, 'W-1', orderBody({ conversationIds: [c.id] })).expect(201);
    // The same credit again: nothing to send.
    await putOrder(t, org, 'W-1', orderBody({ conversationIds: [c.id], refunded: 10 })).expect(200);
    await putOrder(t, org, 'W-1', orderBody()).expect(200);
    const deliveries = (n: number) =>
      eventually(
        async () => (receiver.on('/orders').length >= n ? receiver.on('/orders') : undefined),
        `${n} deliveries`,
        20_000,
      );
    await deliveries(2);
    // A deleted order's earlier events are cut to { id, siteId } (sends after it serve that).
    await t
      .http()
      .delete(ordersPath(org, `/${created.body.data.id}`))
      .set(org.auth)
      .expect(204);
    await deliveries(3);
    await new Promise((r) => setTimeout(r, 1500));
    const bodies = receiver.on('/orders').map((r) => JSON.parse(r.body));
    expect(bodies.map((b) => b.type)).toEqual(['order.attributed', 'order.unattributed', 'order.deleted']);
    expect(bodies[0].data.object).toMatchObject({
      id: created.body.data.id,
      attribution: { conversationId: c.id, kind: 'assisted' },
    });
    expect(bodies[1].data.object).toMatchObject({ attribution: { conversationId: null, kind: null } });
    expect(bodies[2].data.object).toEqual({ id: created.body.data.id, siteId: org.site.id });
  }, 60_000);
});
