import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ApplicationIntervalJob } from '../common/interval-job';
import { AppConfig } from '../config/app-config';
import { OrdersRepository } from './orders.repository';
import { OrdersService } from './orders.service';

/** Orders deleted per transaction by retention. */
const RETENTION_BATCH = 500;

/**
 * Retention of orders (outcomes-v1 §6): every RETENTION_SWEEP_INTERVAL_SECONDS the workers delete
 * each site's orders placed more than `retentionDays` ago, in batches, each order with its
 * `order.deleted` event and an audit row (actor: the system), as conversations are deleted by
 * their retention jobs.
 */
@Injectable()
export class OrderRetention extends ApplicationIntervalJob {
  private readonly logger = new Logger('OrderRetention');

  constructor(
    config: AppConfig,
    private readonly dataSource: DataSource,
    private readonly orders: OrdersRepository,
    private readonly service: OrdersService,
  ) {
    super({
      name: 'OrderRetention',
      everyMs: config.retention.sweepIntervalSeconds * 1000,
      immediately: true,
      unref: true,
      failure: (error) => `order retention failed (${error.message}); retried at the next interval`,
      recovered: 'order retention runs again',
    });
  }

  protected runJob(): Promise<number> {
    return this.sweep();
  }

  /** Deletes what is past each site's retention; returns how many orders it deleted. */
  async sweep(): Promise<number> {
    const sites: Array<{ id: string; organizationId: string; cutoff: Date; days: number }> =
      await this.dataSource.query(
        `SELECT id, organization_id AS "organizationId", retention_days AS days,
           date_trunc('milliseconds', now()) - make_interval(days => retention_days) AS cutoff
         FROM sites WHERE retention_days IS NOT NULL AND deleted_at IS NULL`,
      );
    let deleted = 0;
    for (const site of sites) {
      for (;;) {
        const ids = await this.orders.placedBefore(site.id, site.cutoff, RETENTION_BATCH);
        if (ids.length === 0) break;
        deleted += await this.dataSource.transaction(async (manager) => {
          const rows: Array<{ id: string; creditedConversationId: string | null }> = await manager.query(
            `SELECT id, credited_conversation_id AS "creditedConversationId" FROM orders WHERE id = ANY($1::text[])`,
            [ids],
          );
          return this.service.remove(manager, site.id, rows, (order) => ({
            organizationId: site.organizationId,
            siteId: site.id,
            actorType: 'system',
            action: 'orders.retention_delete',
            targetType: 'order',
            targetId: order.id,
            details: { retentionDays: site.days, placedAt: new Date(order.placedAt).toISOString() },
          }));
        });
        if (ids.length < RETENTION_BATCH) break;
      }
    }
    if (deleted) this.logger.log({ orders: deleted, msg: 'orders past retention deleted' });
    return deleted;
  }
}
