import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ApplicationIntervalJob } from '../common/interval-job';
import { AppConfig } from '../config/app-config';
import { OrderAttribution } from './order-attribution';

/** Orders re-credited per transaction by the sweep. */
const SWEEP_BATCH = 200;

/**
 * The window sweep (outcomes-v1 §2): a site whose attribution window changed is marked
 * (`sites.attribution_stale_since`); every ATTRIBUTION_SWEEP_INTERVAL_SECONDS the workers
 * re-credit its orders that have a visitor (rule 2 is the only rule the window enters), a batch
 * per transaction with each order's keys locked, and clear the mark unless the window changed
 * again meanwhile. Several workers may sweep one site at once: each batch takes its orders' locks,
 * so they re-credit in turn and the result is the same.
 */
@Injectable()
export class AttributionSweep extends ApplicationIntervalJob {
  private readonly logger = new Logger('AttributionSweep');

  constructor(
    config: AppConfig,
    private readonly dataSource: DataSource,
    private readonly attribution: OrderAttribution,
  ) {
    super({
      name: 'AttributionSweep',
      everyMs: config.attribution.sweepIntervalSeconds * 1000,
      immediately: true,
      unref: true,
      failure: (error) => `attribution sweep failed (${error.message}); retried at the next interval`,
      recovered: 'attribution sweep runs again',
    });
  }

  protected runJob(): Promise<number> {
    return this.sweep();
  }

  /** Re-credits the orders of every marked site; returns how many orders it went through. */
  async sweep(): Promise<number> {
    // The mark as text, to the microsecond: the mark is cleared only if no change came since.
    const sites: Array<{ id: string; since: string }> = await this.dataSource.query(
      `SELECT id, attribution_stale_since::text AS since FROM sites WHERE attribution_stale_since IS NOT NULL`,
    );
    let total = 0;
    for (const site of sites) {
      let after = '';
      for (;;) {
        const batch: Array<{
          id: string;
          visitorHash: Buffer;
          conversationIds: string[];
          creditedConversationId: string | null;
        }> = await this.dataSource.query(
          `SELECT id, visitor_hash AS "visitorHash", conversation_ids AS "conversationIds",
               credited_conversation_id AS "creditedConversationId"
             FROM orders WHERE site_id = $1 AND visitor_hash IS NOT NULL AND id COLLATE "C" > $2
             ORDER BY id COLLATE "C" LIMIT $3`,
          [site.id, after, SWEEP_BATCH],
        );
        if (batch.length === 0) break;
        await this.dataSource.transaction(async (manager) => {
          const keys: string[] = [];
          for (const order of batch)
            keys.push(...(await this.attribution.orderKeys(manager, site.id, order)));
          await this.attribution.lock(manager, keys);
          await this.attribution.recredit(
            manager,
            site.id,
            batch.map((o) => o.id),
          );
        });
        total += batch.length;
        after = batch[batch.length - 1].id;
      }
      await this.dataSource.query(
        `UPDATE sites SET attribution_stale_since = NULL WHERE id = $1 AND attribution_stale_since <= $2::timestamptz`,
        [site.id, site.since],
      );
    }
    if (sites.length) this.logger.log({ sites: sites.length, orders: total, msg: 'orders re-credited' });
    return total;
  }
}
