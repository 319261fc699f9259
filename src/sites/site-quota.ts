import type { EntityManager } from 'typeorm';

/** Tables of per-site resources with a cap (views: 500, alerts: 100 per site). */
export type SiteScopedTable = 'views' | 'alerts';

/**
 * How many rows of `table` the site has, counted with the site's row locked (FOR UPDATE) in the
 * caller's transaction, so concurrent creates for one site count in turn and never pass the cap.
 */
export async function countWithSiteLocked(
  manager: EntityManager,
  table: SiteScopedTable,
  siteId: string,
): Promise<number> {
  await manager.query(`SELECT id FROM sites WHERE id = $1 FOR UPDATE`, [siteId]);
  const rows: Array<{ n: number }> = await manager.query(
    `SELECT count(*)::int AS n FROM ${table} WHERE site_id = $1`,
    [siteId],
  );
  return rows[0].n;
}
