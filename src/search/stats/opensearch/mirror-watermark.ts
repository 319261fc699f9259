import { Injectable } from '@nestjs/common';
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
/** The outbox as of one instant, for every site at once (MirrorWatermark.snapshot). */
export interface MirrorSnapshot {
  now: Date;
  /** Per site, its oldest row still in the outbox (sites with none are absent). */
  oldest: Map<string, Date>;
  enabled: boolean | null;
  changedAt: Date | null;
}

/** A site's watermark in a snapshot: the same rule as MirrorWatermark.read. */
export function watermarkOf(snapshot: MirrorSnapshot, siteId: string): Date {
  let watermark = snapshot.now.getTime();
  const oldest = snapshot.oldest.get(siteId);
  if (oldest) watermark = Math.min(watermark, oldest.getTime());
  if (!snapshot.enabled && snapshot.changedAt) watermark = Math.min(watermark, snapshot.changedAt.getTime());
  return new Date(watermark);
}

@Injectable()
export class MirrorWatermark {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Every site's watermark at one instant (one grouped read of the outbox): a refresh started
   * after this read makes visible every change committed before the watermark of any site
   * (watermarkOf), so answers may reuse that refresh.
   */
  async snapshot(): Promise<MirrorSnapshot> {
    const rows: Array<{
      now: Date;
      oldest: Record<string, string>;
      enabled: boolean | null;
      changed_at: Date | null;
    }> = await this.dataSource.query(
      `SELECT now() AS now,
         (SELECT coalesce(json_object_agg(site_id, oldest), '{}')
          FROM (SELECT site_id, min(created_at) AS oldest FROM search_outbox GROUP BY site_id) o) AS oldest,
         s.enabled, s.changed_at
       FROM (SELECT 1) one LEFT JOIN search_mirror_state s ON true`,
    );
    const { now, oldest, enabled, changed_at: changedAt } = rows[0];
    // JSON keeps microseconds; Date.parse drops them, which moves a watermark earlier, never later.
    const bySite = new Map(Object.entries(oldest).map(([site, t]) => [site, new Date(Date.parse(t))]));
    return { now, oldest: bySite, enabled, changedAt };
  }

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
