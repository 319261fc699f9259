import type { OrderRecord } from './order.records';

/** The one mapping of an orders row to the order resource (outcomes-v1 §1): inputs never shown. */
export function presentOrder(o: OrderRecord) {
  return {
    id: o.id,
    externalId: o.externalId,
    siteId: o.siteId,
    placedAt: new Date(o.placedAt).toISOString(),
    currency: o.currency,
    total: o.total,
    refunded: o.refunded,
    net: o.net,
    status: o.status,
    lines: o.lines.map((l) => ({ productId: l.productId, quantity: l.quantity, amount: l.amount })),
    attribution: { conversationId: o.creditedConversationId, kind: o.creditKind },
    createdAt: new Date(o.createdAt).toISOString(),
    updatedAt: new Date(o.updatedAt).toISOString(),
  };
}

export type PresentedOrder = ReturnType<typeof presentOrder>;
