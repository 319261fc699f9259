import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { EventsWriter } from '../events/events.writer';
import { presentOrder } from './order.presenter';
import { ORDER_COLUMNS, OrderRecord } from './order.records';

/** The credit of an order (outcomes-v1 §2): a conversation and its kind, or none. */
export interface Credit {
  conversationId: string;
  kind: 'direct' | 'assisted';
}

/** What the rules read of an order. */
export interface CreditInputs {
  siteId: string;
  placedAt: Date;
  conversationIds: string[];
  visitorHash: Buffer | null;
  productIds: string[];
}

interface CreditRow {
  id: string;
  organizationId: string;
  siteId: string;
  placedAt: Date;
  conversationIds: string[];
  visitorHash: Buffer | null;
  productIds: string[];
  creditedConversationId: string | null;
  creditKind: 'direct' | 'assisted' | null;
}

const CREDIT_ROW_COLUMNS = `id, organization_id AS "organizationId", site_id AS "siteId", placed_at AS "placedAt",
  conversation_ids AS "conversationIds", visitor_hash AS "visitorHash",
  ARRAY(SELECT l->>'productId' FROM jsonb_array_elements(lines) l) AS "productIds",
  credited_conversation_id AS "creditedConversationId", credit_kind AS "creditKind"`;

/**
 * Attribution (outcomes-v1 §2): an order's credit computed by the rules, stored on the order,
 * and computed again in the transaction of every change of its inputs (the order replaced, a
 * conversation it could be credited to recorded or appended to, the credited conversation
 * deleted, the site's window changed: the sweep). It keeps `conversations.converted` and appends
 * `order.attributed` / `order.unattributed` when the credited conversation changes.
 *
 * Concurrency: every transaction that changes an input first takes the transaction-level
 * advisory locks of the attribution keys it touches, in sorted order, before any row lock. A
 * conversation's key is its visitor hash when it has one (so an order of that visitor and every
 * conversation of the visitor share it), else its id; an order takes the keys of its visitor, of
 * its listed conversations and of its current credit. An order can then never be computed from a
 * conversation's state that a concurrent uncommitted write is changing.
 */
@Injectable()
export class OrderAttribution {
  constructor(private readonly events: EventsWriter) {}

  // ---- Locks --------------------------------------------------------------------------------

  /** Takes the advisory locks of `keys` (sorted, each once) for the rest of the transaction. */
  async lock(manager: EntityManager, keys: Iterable<string>): Promise<void> {
    for (const key of [...new Set(keys)].sort())
      await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [key]);
  }

  /** The key of a visitor's orders and conversations. */
  visitorKey(siteId: string, visitorHash: Buffer): string {
    return `attr:${siteId}:v:${visitorHash.toString('hex')}`;
  }

  /** The keys of conversations (their visitor's, or their own id's without a visitor). */
  async conversationKeys(manager: EntityManager, siteId: string, ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows: Array<{ id: string; visitorHash: Buffer | null }> = await manager.query(
      `SELECT id, visitor_hash AS "visitorHash" FROM conversations WHERE site_id = $1 AND id = ANY($2::text[])`,
      [siteId, ids],
    );
    const found = new Map(rows.map((r) => [r.id, r.visitorHash]));
    return ids.map((id) => {
      const hash = found.get(id);
      return hash ? this.visitorKey(siteId, hash) : `attr:${siteId}:c:${id}`;
    });
  }

  /** The keys an order's credit can depend on: its visitor's, its listed conversations', its current credit's. */
  async orderKeys(
    manager: EntityManager,
    siteId: string,
    order: { visitorHash: Buffer | null; conversationIds: string[]; creditedConversationId?: string | null },
  ): Promise<string[]> {
    const ids = [...order.conversationIds];
    if (order.creditedConversationId) ids.push(order.creditedConversationId);
    const keys = await this.conversationKeys(manager, siteId, ids);
    if (order.visitorHash) keys.push(this.visitorKey(siteId, order.visitorHash));
    return keys;
  }

  /**
   * The keys a change to these conversations needs: theirs and those of the orders credited to
   * them (which a deletion or an append re-credits, possibly to a conversation of another key).
   */
  async keysForConversations(
    manager: EntityManager,
    siteId: string,
    ids: readonly string[],
  ): Promise<string[]> {
    if (ids.length === 0) return [];
    const keys = await this.conversationKeys(manager, siteId, ids);
    const orders: Array<{ visitorHash: Buffer | null; conversationIds: string[] }> = await manager.query(
      `SELECT visitor_hash AS "visitorHash", conversation_ids AS "conversationIds"
       FROM orders WHERE credited_conversation_id = ANY($1::text[])`,
      [ids],
    );
    for (const order of orders) keys.push(...(await this.orderKeys(manager, siteId, order)));
    return keys;
  }

  // ---- The rules ------------------------------------------------------------------------------

  /** The credit the rules give an order now, reading the conversations in `manager`'s transaction. */
  async creditFor(manager: EntityManager, order: CreditInputs, windowHours: number): Promise<Credit | null> {
    const conversationId =
      (await this.byListedConversations(manager, order)) ??
      (await this.byVisitor(manager, order, windowHours));
    if (!conversationId) return null;
    return {
      conversationId,
      kind: (await this.showedProduct(manager, conversationId, order.productIds)) ? 'direct' : 'assisted',
    };
  }

  /** Rule 1: of the listed conversations on the site created at or before placedAt, the last created. */
  private async byListedConversations(
    manager: EntityManager,
    order: CreditInputs,
  ): Promise<string | undefined> {
    if (order.conversationIds.length === 0) return undefined;
    const rows: Array<{ id: string }> = await manager.query(
      `SELECT id FROM conversations
       WHERE site_id = $1 AND id = ANY($2::text[]) AND created_at <= $3
       ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT 1`,
      [order.siteId, order.conversationIds, order.placedAt],
    );
    return rows[0]?.id;
  }

  /**
   * Rule 2: of the visitor's conversations created at or before placedAt, the one whose last
   * activity at or before placedAt (its creation, its messages' times not after placedAt) is the
   * latest, provided it lies within the window before placedAt (both ends inclusive).
   */
  private async byVisitor(
    manager: EntityManager,
    order: CreditInputs,
    windowHours: number,
  ): Promise<string | undefined> {
    if (!order.visitorHash) return undefined;
    const rows: Array<{ id: string }> = await manager.query(
      `SELECT id FROM (
         SELECT c.id, GREATEST(c.created_at,
                  (SELECT max(m.created_at) FROM messages m
                   WHERE m.conversation_id = c.id AND m.created_at <= $3)) AS last_activity
         FROM conversations c
         WHERE c.site_id = $1 AND c.visitor_hash = $2 AND c.created_at <= $3
       ) candidates
       WHERE last_activity >= $3::timestamptz - make_interval(hours => $4)
       ORDER BY last_activity DESC, id COLLATE "C" DESC LIMIT 1`,
      [order.siteId, order.visitorHash, order.placedAt, windowHours],
    );
    return rows[0]?.id;
  }

  /** `direct`: a line's productId is among the product cards of the conversation's messages. */
  private async showedProduct(
    manager: EntityManager,
    conversationId: string,
    productIds: string[],
  ): Promise<boolean> {
    if (productIds.length === 0) return false;
    const rows: Array<{ shown: boolean }> = await manager.query(
      `SELECT EXISTS (
         SELECT 1 FROM messages m
         CROSS JOIN LATERAL jsonb_array_elements(
           CASE WHEN jsonb_typeof(m.blocks) = 'array' THEN m.blocks ELSE '[]'::jsonb END) b
         CROSS JOIN LATERAL jsonb_array_elements(
           CASE WHEN jsonb_typeof(b->'products') = 'array' THEN b->'products' ELSE '[]'::jsonb END) p
         WHERE m.conversation_id = $1 AND b->>'type' = 'product_cards' AND p->>'productId' = ANY($2::text[])
       ) AS shown`,
      [conversationId, productIds],
    );
    return rows[0].shown;
  }

  // ---- Re-crediting ---------------------------------------------------------------------------

  /**
   * Computes the credit of each order again (locked, in id order), stores what changed, appends
   * `order.attributed` or `order.unattributed` for each order whose credited conversation
   * changed (a change of kind alone emits nothing) and brings `converted` of the conversations
   * concerned up to date. `touched`: conversations whose `converted` may have changed for another
   * reason (an order's net or status replaced, an order deleted). Returns the orders as stored.
   */
  async recredit(
    manager: EntityManager,
    siteId: string,
    orderIds: readonly string[],
    touched: Iterable<string> = [],
  ): Promise<OrderRecord[]> {
    const concerned = new Set(touched);
    if (orderIds.length > 0) {
      const rows: CreditRow[] = await manager.query(
        `SELECT ${CREDIT_ROW_COLUMNS} FROM orders WHERE site_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR UPDATE`,
        [siteId, orderIds],
      );
      const windowHours = await this.windowOf(manager, siteId);
      for (const row of rows) {
        const credit = await this.creditFor(manager, row, windowHours);
        const conversationId = credit?.conversationId ?? null;
        const kind = credit?.kind ?? null;
        if (conversationId === row.creditedConversationId && kind === row.creditKind) continue;
        const [updated]: [OrderRecord[], number] = await manager.query(
          `UPDATE orders SET credited_conversation_id = $2, credit_kind = $3 WHERE id = $1 RETURNING ${ORDER_COLUMNS}`,
          [row.id, conversationId, kind],
        );
        if (row.creditedConversationId) concerned.add(row.creditedConversationId);
        if (conversationId) concerned.add(conversationId);
        if (conversationId !== row.creditedConversationId)
          await this.events.append(manager, {
            type: conversationId ? 'order.attributed' : 'order.unattributed',
            organizationId: row.organizationId,
            siteId,
            object: presentOrder(updated[0]),
          });
      }
    }
    await this.refreshConverted(manager, [...concerned]);
    if (orderIds.length === 0) return [];
    return manager.query(`SELECT ${ORDER_COLUMNS} FROM orders WHERE id = ANY($1::text[])`, [orderIds]);
  }

  /**
   * `converted` of each conversation: whether an order credited to it has net > 0. Rows are
   * written only where it flips (the search outbox gets a row by the conversations trigger).
   */
  async refreshConverted(manager: EntityManager, conversationIds: readonly string[]): Promise<void> {
    if (conversationIds.length === 0) return;
    await manager.query(
      `UPDATE conversations c SET converted = x.converted
       FROM (
         SELECT c2.id, EXISTS (
           SELECT 1 FROM orders o WHERE o.credited_conversation_id = c2.id AND o.net > 0) AS converted
         FROM conversations c2 WHERE c2.id = ANY($1::text[])
       ) x
       WHERE c.id = x.id AND c.converted IS DISTINCT FROM x.converted`,
      [conversationIds],
    );
  }

  private async windowOf(manager: EntityManager, siteId: string): Promise<number> {
    const rows: Array<{ hours: number }> = await manager.query(
      `SELECT attribution_window_hours AS hours FROM sites WHERE id = $1`,
      [siteId],
    );
    return rows[0]?.hours ?? 168;
  }

  // ---- What conversations' writes call ------------------------------------------------------

  /**
   * A conversation recorded or appended to: the orders it could now be credited with (its
   * visitor's, placed at or after its creation) and those credited to it (their kind) are
   * credited again. Call after the write, in its transaction, with the keys of
   * keysForConversations taken first.
   */
  async conversationChanged(manager: EntityManager, siteId: string, conversationId: string): Promise<void> {
    await this.recreditFound(
      manager,
      siteId,
      `SELECT o.id FROM conversations c
       JOIN orders o ON o.site_id = c.site_id AND o.visitor_hash = c.visitor_hash AND o.placed_at >= c.created_at
       WHERE c.id = $1 AND c.visitor_hash IS NOT NULL
       UNION
       SELECT id FROM orders WHERE credited_conversation_id = $1`,
      [conversationId],
    );
  }

  /** Conversations deleted: the orders credited to them go to the next candidate, or to none. */
  async conversationsRemoved(
    manager: EntityManager,
    siteId: string,
    conversationIds: readonly string[],
  ): Promise<void> {
    if (conversationIds.length === 0) return;
    await this.recreditFound(
      manager,
      siteId,
      `SELECT id FROM orders WHERE credited_conversation_id = ANY($1::text[])`,
      [conversationIds],
    );
  }

  /** Credits again the orders whose ids `sql` selects (nothing when it selects none). */
  private async recreditFound(
    manager: EntityManager,
    siteId: string,
    sql: string,
    params: unknown[],
  ): Promise<void> {
    const rows: Array<{ id: string }> = await manager.query(sql, params);
    if (rows.length > 0)
      await this.recredit(
        manager,
        siteId,
        rows.map((r) => r.id),
      );
  }
}
