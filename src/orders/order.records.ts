import type { OrderStatus } from './dto/order-request';

/** An order line as stored and answered. */
export interface OrderLine {
  productId: string;
  quantity: number;
  amount: number;
}

/** An orders row as the repository reads it (amounts as numbers: at most 10^12, exact in a double). */
export interface OrderRecord {
  id: string;
  organizationId: string;
  siteId: string;
  externalId: string;
  placedAt: Date;
  currency: string;
  total: number;
  refunded: number;
  net: number;
  status: OrderStatus;
  lines: OrderLine[];
  creditedConversationId: string | null;
  creditKind: 'direct' | 'assisted' | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The credit of an order (outcomes-v1 §2): a conversation and its kind, or none. */
export interface Credit {
  conversationId: string;
  kind: 'direct' | 'assisted';
}

/** The inputs of attribution an order row keeps (never answered). */
export interface OrderInputs {
  conversationIds: string[];
  visitorHash: Buffer | null;
}

export const ORDER_COLUMNS = `id, organization_id AS "organizationId", site_id AS "siteId", external_id AS "externalId",
  placed_at AS "placedAt", currency, total::float8 AS total, refunded::float8 AS refunded, net::float8 AS net,
  status, lines, credited_conversation_id AS "creditedConversationId", credit_kind AS "creditKind",
  created_at AS "createdAt", updated_at AS "updatedAt"`;
