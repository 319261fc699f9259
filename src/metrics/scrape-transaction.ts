import type { DataSource, EntityManager } from 'typeorm';
import { SCRAPE_TIMEOUT_MS } from './metrics.service';

/**
 * Runs the SQL of a scrape-time gauge: `work` in a read-only transaction whose statements
 * Postgres cancels after SCRAPE_TIMEOUT_MS, so a slow or locked table fails its source rather
 * than holding a connection past the scrape.
 */
export function scrapeTransaction<T>(
  dataSource: DataSource,
  work: (manager: EntityManager) => Promise<T>,
): Promise<T> {
  return dataSource.transaction(async (manager) => {
    await manager.query(`SET TRANSACTION READ ONLY`);
    await manager.query(`SELECT set_config('statement_timeout', $1, true)`, [`${SCRAPE_TIMEOUT_MS}ms`]);
    return work(manager);
  });
}
