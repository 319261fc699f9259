import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { TimeAndId } from '../common/paging/keyset-page';
import { newestFirstPageSql } from '../common/paging/newest-first-sql';
import type { OrderListFilter, OrderStatus } from './dto/order-request';
import { Credit, ORDER_COLUMNS, OrderInputs, OrderLine, OrderRecord } from './order.records';

/** What a PUT stores of an order. */
export interface StoredOrder {
  placedAt: Date;
  currency: string;
  total: number;
  refunded: number;
  status: OrderStatus;
  lines: OrderLine[];
  conversationIds: string[];
  visitorHash: Buffer | null;
}

export type OrderRow = OrderRecord & OrderInputs;

const ROW_COLUMNS = `${ORDER_COLUMNS}, conversation_ids AS "conversationIds", visitor_hash AS "visitorHash"`;

/** The order's time in a list position: placedAt. */
export const PLACED_AT = { column: 'placed_at', key: 'placedAt' } as const;

/**
 * What the shop sent of an order, as the values of placed_at, currency, total, refunded, status,
 * lines, conversation_ids and visitor_hash, in that order.
 */
function storedValues(order: StoredOrder): unknown[] {
  return [
    order.placedAt,
    order.currency,
    order.total,
    order.refunded,
    order.status,
    JSON.stringify(order.lines),
    order.conversationIds,
    order.visitorHash,
  ];
}

/** The SQL of orders. */
@Injectable()
export class OrdersRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The site's order the shop knows by `externalId`, with its inputs; locked when `lock`. */
  findByExternalId(
    manager: EntityManager,
    siteId: string,
    externalId: string,
    lock = false,
  ): Promise<OrderRow | undefined> {
    return this.findRow(manager, siteId, 'external_id', externalId, lock);
  }

  /** The site's order by id, with its inputs; locked when `lock`. */
  findInSite(
    siteId: string,
    id: string,
    manager: EntityManager = this.dataSource.manager,
    lock = false,
  ): Promise<OrderRow | undefined> {
    return this.findRow(manager, siteId, 'id', id, lock);
  }

  private async findRow(
    manager: EntityManager,
    siteId: string,
    column: 'id' | 'external_id',
    value: string,
    lock: boolean,
  ): Promise<OrderRow | undefined> {
    const rows: OrderRow[] = await manager.query(
      `SELECT ${ROW_COLUMNS} FROM orders WHERE site_id = $1 AND ${column} = $2${lock ? ' FOR UPDATE' : ''}`,
      [siteId, value],
    );
    return rows[0];
  }

  /**
   * Inserts the order, credited with `credit`, unless the site has one of that externalId
   * (undefined then); answers it with its inputs.
   */
  async insert(
    manager: EntityManager,
    order: StoredOrder & { id: string; organizationId: string; siteId: string; externalId: string },
    credit: Credit | null,
  ): Promise<OrderRow | undefined> {
    const rows: OrderRow[] = await manager.query(
      `INSERT INTO orders (id, organization_id, site_id, external_id, placed_at, currency, total, refunded, status,
         lines, conversation_ids, visitor_hash, credited_conversation_id, credit_kind)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
       ON CONFLICT (site_id, external_id) DO NOTHING RETURNING ${ROW_COLUMNS}`,
      [
        order.id,
        order.organizationId,
        order.siteId,
        order.externalId,
        ...storedValues(order),
        credit?.conversationId ?? null,
        credit?.kind ?? null,
      ],
    );
    return rows[0];
  }

  /** Replaces what the shop sent of the order; `updatedAt` moves. */
  async replace(manager: EntityManager, id: string, order: StoredOrder): Promise<void> {
    await manager.query(
      `UPDATE orders SET placed_at = $2, currency = $3, total = $4, refunded = $5, status = $6, lines = $7,
         conversation_ids = $8, visitor_hash = $9,
         updated_at = GREATEST(date_trunc('milliseconds', clock_timestamp()), updated_at)
       WHERE id = $1`,
      [id, ...storedValues(order)],
    );
  }

  /** At most `limit` orders of the site matching `filter`, placedAt newest first, then id, after `after`. */
  list(
    siteId: string,
    filter: OrderListFilter,
    limit: number,
    after?: TimeAndId<'placedAt'>,
  ): Promise<OrderRecord[]> {
    const values: unknown[] = [siteId];
    const where = ['site_id = $1'];
    const add = (condition: (p: string) => string, value: unknown) => {
      values.push(value);
      where.push(condition(`$${values.length}`));
    };
    if (filter.from) add((p) => `placed_at >= ${p}`, filter.from);
    if (filter.to) add((p) => `placed_at < ${p}`, filter.to);
    if (filter.attributed !== undefined)
      where.push(`credited_conversation_id IS ${filter.attributed ? 'NOT ' : ''}NULL`);
    if (filter.conversationId) add((p) => `credited_conversation_id = ${p}`, filter.conversationId);
    if (filter.status) add((p) => `status = ${p}`, filter.status);
    return this.dataSource.query(
      ...newestFirstPageSql(
        { select: ORDER_COLUMNS, from: 'orders', where, values, time: PLACED_AT },
        limit,
        after,
      ),
    );
  }

  /** Deletes the site's orders of `ids` (locked, in id order); answers those deleted. */
  async delete(manager: EntityManager, siteId: string, ids: readonly string[]): Promise<OrderRecord[]> {
    if (ids.length === 0) return [];
    await manager.query(
      `SELECT id FROM orders WHERE site_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR UPDATE`,
      [siteId, ids],
    );
    const [rows]: [OrderRecord[], number] = await manager.query(
      `DELETE FROM orders WHERE site_id = $1 AND id = ANY($2::text[]) RETURNING ${ORDER_COLUMNS}`,
      [siteId, ids],
    );
    // Their earlier events keep only { id, siteId }, what order.deleted carries.
    await manager.query(
      `UPDATE events SET object = jsonb_build_object('id', object->'id', 'siteId', object->'siteId')
       WHERE type LIKE 'order.%' AND object->>'id' = ANY($1::text[]) AND type <> 'order.deleted'`,
      [rows.map((r) => r.id)],
    );
    return rows;
  }

  /** The ids of up to `limit` orders of the site placed before `cutoff` (retention). */
  async placedBefore(siteId: string, cutoff: Date, limit: number): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `SELECT id FROM orders WHERE site_id = $1 AND placed_at < $2 ORDER BY placed_at, id LIMIT $3`,
      [siteId, cutoff, limit],
    );
    return rows.map((r) => r.id);
  }

  /**
   * The figures of GET …/orders/stats: the site's orders placed in [from, to) and not cancelled,
   * per currency and (with `starts`, the series' bucket starts then its end) per bucket: bucket 0
   * is before the first start, `starts.length` at or after the end.
   */
  async stats(
    siteId: string,
    window: { from?: Date; to?: Date },
    starts?: Date[],
  ): Promise<
    Array<{
      bucket: number;
      currency: string;
      orders: number;
      attributed: number;
      direct: number;
      net: number;
      attributedNet: number;
      directNet: number;
    }>
  > {
    const values: unknown[] = [siteId, window.from ?? null, window.to ?? null];
    const bucket = starts ? `width_bucket(placed_at, $4::timestamptz[])` : '0';
    if (starts) values.push(starts);
    return this.dataSource.query(
      `SELECT ${bucket} AS bucket, currency, count(*)::int AS orders,
         count(credited_conversation_id)::int AS attributed,
         (count(*) FILTER (WHERE credit_kind = 'direct'))::int AS direct,
         sum(net)::float8 AS net,
         coalesce(sum(net) FILTER (WHERE credited_conversation_id IS NOT NULL), 0)::float8 AS "attributedNet",
         coalesce(sum(net) FILTER (WHERE credit_kind = 'direct'), 0)::float8 AS "directNet"
       FROM orders
       WHERE site_id = $1 AND status <> 'cancelled'
         AND ($2::timestamptz IS NULL OR placed_at >= $2) AND ($3::timestamptz IS NULL OR placed_at < $3)
       GROUP BY 1, 2`,
      values,
    );
  }

  /** The outcome of a conversation: its credited orders not cancelled, by currency. */
  async outcomeOf(
    conversationId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<{ orders: number; revenue: Array<{ currency: string; net: number }> }> {
    const rows: Array<{ currency: string; orders: number; net: number }> = await manager.query(
      `SELECT currency, count(*)::int AS orders, sum(net)::float8 AS net FROM orders
       WHERE credited_conversation_id = $1 AND status <> 'cancelled'
       GROUP BY currency ORDER BY currency COLLATE "C"`,
      [conversationId],
    );
    return {
      orders: rows.reduce((n, r) => n + r.orders, 0),
      revenue: rows.map((r) => ({ currency: r.currency, net: r.net })),
    };
  }
}
