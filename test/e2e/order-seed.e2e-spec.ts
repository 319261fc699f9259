import { describe, expect, it } from '@jest/globals';
import { SeedService } from '../../src/conversations/seed/seed.service';
import { OrderAttribution } from '../../src/orders/order-attribution';
import { createOrganization } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';

/** seed --orders-share F: visitors, orders credited as the rules say, the rest of the store, refunds, currencies. */
let t: TestApp;
testAppPerSuite((app) => (t = app), {}, { redisKeyPrefixSuffix: 'order-seed:' });

describe('the seed writes orders: a share of conversations converting, store orders, cancellations, refunds, currencies', () => {
  it('writes them, each credited exactly as a from-scratch computation of the rules says', async () => {
    const org = await createOrganization(t.app);
    const result = await t.app.get(SeedService).seed({
      siteId: org.site.id,
      organizationId: org.organization.id,
      conversations: 400,
      days: 30,
      labeledShare: 0.8,
      ordersShare: 0.3,
    });
    expect(result.orders).toBeGreaterThan(200);
    expect(result.attributedOrders).toBeGreaterThan(40);
    const [shape] = await t.db.query(
      `SELECT count(DISTINCT currency)::int AS currencies,
         count(*) FILTER (WHERE status = 'cancelled')::int AS cancelled,
         count(*) FILTER (WHERE status = 'refunded')::int AS refunded,
         count(*) FILTER (WHERE visitor_hash IS NULL AND cardinality(conversation_ids) = 0)::int AS store,
         count(*) FILTER (WHERE credit_kind = 'direct')::int AS direct,
         count(*) FILTER (WHERE placed_at > now())::int AS future
       FROM orders WHERE site_id = $1`,
      [org.site.id],
    );
    expect(shape.currencies).toBeGreaterThanOrEqual(3);
    expect(shape.cancelled).toBeGreaterThan(0);
    expect(shape.refunded).toBeGreaterThan(0);
    expect(shape.store).toBeGreaterThan(100);
    expect(shape.direct).toBeGreaterThan(0);
    expect(shape.future).toBe(0);
    const [visitors] = await t.db.query(
      `SELECT count(*) FILTER (WHERE visitor_hash IS NOT NULL)::float / count(*) AS share
       FROM conversations WHERE site_id = $1`,
      [org.site.id],
    );
    expect(visitors.share).toBeGreaterThan(0.55);
    expect(visitors.share).toBeLessThan(0.85);

    const attribution = t.app.get(OrderAttribution);
    const orders: Array<{
      id: string;
      placedAt: Date;
      conversationIds: string[];
      visitorHash: Buffer | null;
      productIds: string[];
      credited: string | null;
      kind: string | null;
    }> = await t.db.query(
      `SELECT id, placed_at AS "placedAt", conversation_ids AS "conversationIds", visitor_hash AS "visitorHash",
         ARRAY(SELECT l->>'productId' FROM jsonb_array_elements(lines) l) AS "productIds",
         credited_conversation_id AS credited, credit_kind AS kind
       FROM orders WHERE site_id = $1 AND (visitor_hash IS NOT NULL OR cardinality(conversation_ids) > 0)`,
      [org.site.id],
    );
    for (const order of orders) {
      const credit = await attribution.creditFor(t.db.manager, { siteId: org.site.id, ...order });
      expect({ id: order.id, credited: order.credited, kind: order.kind }).toEqual({
        id: order.id,
        credited: credit?.conversationId ?? null,
        kind: credit?.kind ?? null,
      });
    }
    const [converted] = await t.db.query(
      `SELECT count(*)::int AS wrong FROM conversations c WHERE c.site_id = $1 AND c.converted IS DISTINCT FROM
         EXISTS (SELECT 1 FROM orders o WHERE o.credited_conversation_id = c.id AND o.net > 0)`,
      [org.site.id],
    );
    expect(converted.wrong).toBe(0);
  }, 120_000);
});
