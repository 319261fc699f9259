import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { EventsWriter } from '../events/events.writer';
import { presentOrder } from './order.presenter';
import { Credit, ORDER_COLUMNS, OrderInputs, OrderRecord } from './order.records';

/** What the rules read of an order. */
export interface CreditInputs {
  siteId: string;
  placedAt: Date;
  conversationIds: string[];
  visitorHash: Buffer | null;
  productIds: string[];
}

/** An order as recredit reads it: as stored, with the inputs of the rules. */
type CreditRow = OrderRecord & OrderInputs & { productIds: string[] };

const CREDIT_ROW_COLUMNS = `${ORDER_COLUMNS}, conversation_ids AS "conversationIds", visitor_hash AS "visitorHash",
  ARRAY(SELECT l->>'productId' FROM jsonb_array_elements(lines) l) AS "productIds"`;

/** The order as stored, without what the rules read. */
function recordOf(row: CreditRow): OrderRecord {
  const { conversationIds: _c, visitorHash: _v, productIds: _p, ...record } = row;
  return record;
}

/*
 * The rules' parts, as subqueries of one statement (creditFor): $1 the site, $2 the order's
 * placedAt, $3 its lines' productIds, then the parameters of the rules the order can use. A rule
 * the order cannot use is left out of the statement (its plan would be a scan of the site).
 * COALESCE reads rule 2 only when rule 1 finds none.
 */

/** Rule 1: of the listed conversations on the site created at or before placedAt, the last created. */
const byListedConversations = (ids: string) => `SELECT id FROM conversations
  WHERE site_id = $1 AND id = ANY(${ids}::text[]) AND created_at <= $2
  ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT 1`;

/**
 * Rule 2: of the visitor's conversations created at or before placedAt, the one whose last
 * activity at or before placedAt (its creation, its messages' times not after placedAt) is the
 * latest, provided it lies within the site's window before placedAt (both ends inclusive).
 */
const byVisitor = (hash: string) => `SELECT id FROM (
    SELECT c.id, GREATEST(c.created_at,
             (SELECT max(m.created_at) FROM messages m
              WHERE m.conversation_id = c.id AND m.created_at <= $2)) AS last_activity
    FROM conversations c
    WHERE c.site_id = $1 AND c.visitor_hash = ${hash}::bytea AND c.created_at <= $2
  ) candidates
  WHERE last_activity >= $2::timestamptz - make_interval(hours =>
    COALESCE((SELECT attribution_window_hours FROM sites WHERE id = $1), 168))
  ORDER BY last_activity DESC, id COLLATE "C" DESC LIMIT 1`;

/** `direct`: a line's productId is among the product cards of the credited conversation's messages. */
const SHOWED_PRODUCT = `EXISTS (
    SELECT 1 FROM messages m
    CROSS JOIN LATERAL jsonb_array_elements(
      CASE WHEN jsonb_typeof(m.blocks) = 'array' THEN m.blocks ELSE '[]'::jsonb END) b
    CROSS JOIN LATERAL jsonb_array_elements(
      CASE WHEN jsonb_typeof(b->'products') = 'array' THEN b->'products' ELSE '[]'::jsonb END) p
    WHERE m.conversation_id = credit.id AND b->>'type' = 'product_cards'
      AND p->>'productId' = ANY($3::text[]))`;

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
    const sorted = [...new Set(keys)].sort();
    if (sorted.length === 0) return;
    // One statement: unnest yields the keys in the array's order, each locked as its row is read.
    await manager.query(
      `SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0))) FROM unnest($1::text[]) AS k`,
      [sorted],
    );
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

  /**
   * The credit the rules give an order now, reading the conversations in `manager`'s
   * transaction: rule 1, else rule 2 within the site's window, and its kind, in one statement.
   */
  async creditFor(manager: EntityManager, order: CreditInputs): Promise<Credit | null> {
    const values: unknown[] = [order.siteId, order.placedAt, order.productIds];
    const param = (value: unknown) => `$${values.push(value)}`;
    const rules: string[] = [];
    if (order.conversationIds.length > 0) rules.push(byListedConversations(param(order.conversationIds)));
    if (order.visitorHash) rules.push(byVisitor(param(order.visitorHash)));
    if (rules.length === 0) return null;
    const rows: Array<{ conversationId: string | null; direct: boolean }> = await manager.query(
      `SELECT credit.id AS "conversationId", credit.id IS NOT NULL AND ${SHOWED_PRODUCT} AS direct
       FROM (SELECT COALESCE(${rules.map((r) => `(${r})`).join(', ')}) AS id) credit`,
      values,
    );
    const { conversationId, direct } = rows[0];
    return conversationId ? { conversationId, kind: direct ? 'direct' : 'assisted' } : null;
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
    const rows: CreditRow[] =
      orderIds.length === 0
        ? []
        : await manager.query(
            `SELECT ${CREDIT_ROW_COLUMNS} FROM orders WHERE site_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR UPDATE`,
            [siteId, orderIds],
          );
    const concerned = new Set(touched);
    const stored: OrderRecord[] = [];
    for (const row of rows) {
      const credit = await this.creditFor(manager, row);
      const conversationId = credit?.conversationId ?? null;
      const kind = credit?.kind ?? null;
      if (conversationId === row.creditedConversationId && kind === row.creditKind) {
        stored.push(recordOf(row));
        continue;
      }
      const [updated]: [OrderRecord[], number] = await manager.query(
        `UPDATE orders SET credited_conversation_id = $2, credit_kind = $3 WHERE id = $1 RETURNING ${ORDER_COLUMNS}`,
        [row.id, conversationId, kind],
      );
      stored.push(updated[0]);
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
    await this.refreshConverted(manager, [...concerned]);
    return stored;
  }

  /**
   * What follows the insert of an order stored with the credit creditFor gave it (in the
   * insert's transaction, under its keys): `order.attributed` and `converted` when it is credited.
   */
  async inserted(manager: EntityManager, order: OrderRecord): Promise<void> {
    if (!order.creditedConversationId) return;
    await this.events.append(manager, {
      type: 'order.attributed',
      organizationId: order.organizationId,
      siteId: order.siteId,
      object: presentOrder(order),
    });
    await this.refreshConverted(manager, [order.creditedConversationId]);
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
