import { DataSource } from 'typeorm';

/**
 * The mirror's watermark for one site: the instant up to which every committed change of the
 * site's conversations has been written to OpenSearch.
 *
 * Every change writes an outbox row in its own transaction (migration SearchOutbox), stamped
 * with that transaction's start time, which is no later than its commit; the indexer deletes
 * the row only after OpenSearch accepted the write. So, read in one snapshot at instant `now`:
 * a change committed before `min(now, oldest row of the site still in the outbox)` cannot still
 * have its row waiting (that row would be older than the oldest), hence it was written to
 * OpenSearch. Rows postponed after errors stay in the outbox and hold the watermark back, as
 * they should. While the outbox is switched off (`search_mirror_state.enabled` false) nothing
 * reaches the mirror: the watermark stops at the moment it was switched off.
 *
 * Written is not yet searchable: the stats engine refreshes the index after reading the
 * watermark, so that every write accepted before the read is visible to its search.
 */
export class MirrorWatermark {
  constructor(private readonly dataSource: DataSource) {}

  async read(siteId: string): Promise<Date> {
    const rows: Array<{ now: Date; oldest: Date | null; enabled: boolean | null; changed_at: Date | null }> =
      await this.dataSource.query(
        `SELECT now() AS now,
           (SELECT min(created_at) FROM search_outbox WHERE site_id = $1) AS oldest,
           s.enabled, s.changed_at
         FROM (SELECT 1) one LEFT JOIN search_mirror_state s ON true`,
        [siteId],
      );
    const { now, oldest, enabled, changed_at: changedAt } = rows[0];
    let watermark = now.getTime();
    if (oldest) watermark = Math.min(watermark, oldest.getTime());
    if (!enabled && changedAt) watermark = Math.min(watermark, changedAt.getTime());
    return new Date(watermark);
  }
}
