import { Injectable } from '@nestjs/common';
import { isDeepStrictEqual } from 'node:util';
import { DataSource, EntityManager } from 'typeorm';
import { AuditLog, AuditEvent } from '../audit/audit-log';
import { auditOf, WriteActor } from '../audit/write-actor';
import { canonicalFilters } from '../common/cursor/cursor-codec';
import { ApiError } from '../common/errors/api-error';
import { isId, newId } from '../common/ids/ids';
import { KeysetPage, KeysetPaging, newestFirst, PageRequest } from '../common/paging/keyset-page';
import { EventsWriter } from '../events/events.writer';
import { SitesService } from '../sites/sites.service';
import { seriesBuckets } from '../search/stats/series-buckets';
import { OrderInput, OrderListFilter, orderFilterText } from './dto/order-request';
import type { OrderStatsRequest } from './dto/order-stats-request';
import { OrderAttribution } from './order-attribution';
import type { OrderRecord } from './order.records';
import { OrderRow, OrdersRepository, StoredOrder } from './orders.repository';
import { VisitorIdHasher } from './visitor-id';

export const ORDER_ID = 'ord' as const;
const ORDER_ORDER = newestFirst('placedAt', ORDER_ID);

/** How many times a PUT takes its locks again when the order's credit moved while it waited. */
const LOCK_ATTEMPTS = 5;

/** The orders of a site (outcomes-v1 §1), credited as §2 says (OrderAttribution). */
@Injectable()
export class OrdersService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly orders: OrdersRepository,
    private readonly sites: SitesService,
    private readonly attribution: OrderAttribution,
    private readonly visitors: VisitorIdHasher,
    private readonly events: EventsWriter,
    private readonly audit: AuditLog,
    private readonly paging: KeysetPaging,
  ) {}

  /**
   * Creates (`created`) or replaces the order the shop knows by `externalId`, credited in the
   * same transaction. A body identical to the stored order changes nothing (no event, updatedAt
   * kept).
   */
  async put(
    actor: WriteActor,
    siteId: string,
    externalId: string,
    input: OrderInput,
  ): Promise<{ order: OrderRecord; created: boolean }> {
    const stored: StoredOrder = {
      placedAt: input.placedAt,
      currency: input.currency,
      total: input.total,
      refunded: input.refunded,
      status: input.status,
      lines: input.lines,
      conversationIds: input.conversationIds,
      visitorHash: input.visitorId === null ? null : this.visitors.hash(input.visitorId),
    };
    return retryOnDeadlock(() =>
      this.dataSource.transaction(async (manager) => {
        await this.sites.assertOwned(actor.organizationId, siteId, manager);
        for (let attempt = 1; ; attempt++) {
          const seen = await this.orders.findByExternalId(manager, siteId, externalId);
          const keys = await this.attribution.orderKeys(manager, siteId, {
            ...stored,
            creditedConversationId: seen?.creditedConversationId,
          });
          await this.attribution.lock(manager, keys);
          // None seen: the insert finds out (a concurrent first PUT's row makes it insert nothing).
          const existing = seen && (await this.orders.findByExternalId(manager, siteId, externalId, true));
          // Credited elsewhere while this waited: that conversation's key is not held yet.
          if (existing?.creditedConversationId !== seen?.creditedConversationId && attempt < LOCK_ATTEMPTS)
            continue;
          if (existing) {
            if (sameOrder(existing, stored)) return { order: existing, created: false };
            await this.orders.replace(manager, existing.id, stored);
            // Its net may have changed: its credited conversation's `converted` with it.
            const touched = existing.creditedConversationId ? [existing.creditedConversationId] : [];
            const [order] = await this.attribution.recredit(manager, siteId, [existing.id], touched);
            return { order, created: false };
          }
          // A new order's credit depends on the conversations only: computed first, stored with it.
          const credit = await this.attribution.creditFor(manager, {
            siteId,
            ...stored,
            productIds: stored.lines.map((l) => l.productId),
          });
          const inserted = await this.orders.insert(
            manager,
            { ...stored, id: newId(ORDER_ID), organizationId: actor.organizationId, siteId, externalId },
            credit,
          );
          // A concurrent first PUT of the same externalId stored it first: replace that one.
          if (!inserted) continue;
          await this.attribution.inserted(manager, inserted);
          return { order: inserted, created: true };
        }
      }),
    );
  }

  async get(organizationId: string, siteId: string, orderId: string): Promise<OrderRecord> {
    await this.sites.assertOwned(organizationId, siteId);
    return found(isId(ORDER_ID, orderId) ? await this.orders.findInSite(siteId, orderId) : undefined);
  }

  /** One page of the site's orders matching `filter`, placedAt newest first (cursors bind the filter). */
  async list(
    organizationId: string,
    siteId: string,
    filter: OrderListFilter,
    request: PageRequest,
  ): Promise<KeysetPage<OrderRecord>> {
    await this.sites.assertOwned(organizationId, siteId);
    const list = {
      binding: { resource: 'orders', scope: siteId, filters: canonicalFilters(orderFilterText(filter)) },
      order: ORDER_ORDER,
    };
    return this.paging.page(list, request, (limit, after) => this.orders.list(siteId, filter, limit, after));
  }

  /**
   * GET …/orders/stats (outcomes-v1 §4): the orders placed in the window and not cancelled, the
   * credited and direct ones among them, net per currency (alphabetical), and the series. One
   * statement over orders_placed_idx: exact after any write.
   */
  async stats(organizationId: string, siteId: string, request: OrderStatsRequest) {
    await this.sites.assertOwned(organizationId, siteId);
    const buckets = request.series ? seriesBuckets(request.series)! : undefined;
    const starts = buckets
      ? [...buckets.map((b) => b.at), ...(buckets.length ? [buckets.at(-1)!.end] : [])]
      : undefined;
    const rows = await this.orders.stats(siteId, { from: request.from, to: request.to }, starts);
    const figures = (of: typeof rows) => {
      const byCurrency = new Map<
        string,
        { currency: string; net: number; attributedNet: number; directNet: number }
      >();
      let orders = 0;
      let attributed = 0;
      let direct = 0;
      for (const r of of) {
        orders += r.orders;
        attributed += r.attributed;
        direct += r.direct;
        const entry = byCurrency.get(r.currency) ?? {
          currency: r.currency,
          net: 0,
          attributedNet: 0,
          directNet: 0,
        };
        entry.net += r.net;
        entry.attributedNet += r.attributedNet;
        entry.directNet += r.directNet;
        byCurrency.set(r.currency, entry);
      }
      const revenue = [...byCurrency.values()].sort((a, b) => (a.currency < b.currency ? -1 : 1));
      return { orders, attributed, direct, revenue };
    };
    const data: Record<string, unknown> = figures(rows);
    if (buckets)
      // width_bucket: 1 is the first bucket (placed at or after its start, before the next).
      data.series = buckets.map((b, i) => ({
        start: b.start,
        ...figures(rows.filter((r) => r.bucket === i + 1)),
      }));
    return data as ReturnType<typeof figures> & {
      series?: Array<ReturnType<typeof figures> & { start: string }>;
    };
  }

  /** Deletes the order (404 when absent): gone from every figure at once, `order.deleted`, an audit row. */
  async delete(actor: WriteActor, siteId: string, orderId: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await this.sites.assertOwned(actor.organizationId, siteId, manager);
      const order = isId(ORDER_ID, orderId)
        ? await this.orders.findInSite(siteId, orderId, manager)
        : undefined;
      if (!order) throw ApiError.notFound('order');
      const removed = await this.remove(manager, siteId, [order], (o) =>
        auditOf(actor, siteId, 'orders.delete', { type: 'order', id: o.id }),
      );
      if (removed === 0) throw ApiError.notFound('order');
    });
  }

  /**
   * Deletes orders in `manager`'s transaction (DELETE, retention): each with its `order.deleted`
   * event and audit row; the conversations they were credited to take `converted` again.
   * Returns how many it deleted (those already gone are skipped).
   */
  async remove(
    manager: EntityManager,
    siteId: string,
    orders: ReadonlyArray<Pick<OrderRow, 'id' | 'creditedConversationId'>>,
    auditRow: (order: OrderRecord) => AuditEvent,
  ): Promise<number> {
    const credited = orders.flatMap((o) => (o.creditedConversationId ? [o.creditedConversationId] : []));
    await this.attribution.lock(manager, await this.attribution.conversationKeys(manager, siteId, credited));
    const removed = await this.orders.delete(
      manager,
      siteId,
      orders.map((o) => o.id),
    );
    for (const order of removed) {
      await this.events.append(manager, {
        type: 'order.deleted',
        organizationId: order.organizationId,
        siteId,
        object: { id: order.id, siteId },
      });
      await this.audit.record(auditRow(order), manager);
    }
    await this.attribution.refreshConverted(
      manager,
      removed.flatMap((o) => (o.creditedConversationId ? [o.creditedConversationId] : [])),
    );
    return removed.length;
  }
}

/** Times a PUT runs again after PostgreSQL broke a deadlock by aborting it. */
const DEADLOCK_ATTEMPTS = 3;

/**
 * Runs `write` again when PostgreSQL aborted it to break a deadlock (40P01): the attribution
 * keys are taken before any row lock, but a write elsewhere that holds a conversation's row
 * (labeling, engagement) without its key can still meet a PUT's update of `converted`. A PUT is
 * idempotent, so running it again is safe.
 */
async function retryOnDeadlock<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      const code = (error as { driverError?: { code?: string }; code?: string }).driverError?.code;
      if (code !== '40P01' || attempt >= DEADLOCK_ATTEMPTS) throw error;
    }
  }
}

function found(order: OrderRecord | undefined): OrderRecord {
  if (!order) throw ApiError.notFound('order');
  return order;
}

/** Whether the stored order is what `next` would store (placedAt to the millisecond). */
function sameOrder(row: OrderRow, next: StoredOrder): boolean {
  return (
    new Date(row.placedAt).getTime() === next.placedAt.getTime() &&
    row.currency === next.currency &&
    row.total === next.total &&
    row.refunded === next.refunded &&
    row.status === next.status &&
    isDeepStrictEqual(
      row.lines.map((l) => [l.productId, l.quantity, l.amount]),
      next.lines.map((l) => [l.productId, l.quantity, l.amount]),
    ) &&
    isDeepStrictEqual(row.conversationIds, next.conversationIds) &&
    (row.visitorHash === null
      ? next.visitorHash === null
      : next.visitorHash !== null && row.visitorHash.equals(next.visitorHash))
  );
}
