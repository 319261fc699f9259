import { Injectable, Optional } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { MetricsService } from '../metrics/metrics.service';
import { scrapeTransaction } from '../metrics/scrape-transaction';
import { EXPORT_STATES } from './export.records';

/** The exports' /metrics gauge: exports by state, read from Postgres at scrape time (source `exports`). */
@Injectable()
export class ExportsMetrics {
  constructor(dataSource: DataSource, @Optional() metrics?: MetricsService) {
    if (!metrics) return;
    const exports = metrics.gauge({
      name: 'exports',
      help: 'Exports by state (queued, running, completed, failed, expired), as stored in the database.',
      labelNames: ['state'],
    });
    metrics.readAtScrape(
      'exports',
      [exports],
      () => scrapeTransaction(dataSource, countByState),
      (counts) => {
        for (const state of EXPORT_STATES) exports.set({ state }, counts[state] ?? 0);
      },
    );
  }
}

/** Exports by state; states with none are absent. */
async function countByState(manager: EntityManager): Promise<Record<string, number>> {
  const rows: Array<{ state: string; n: number }> = await manager.query(
    `SELECT state, count(*)::int AS n FROM exports GROUP BY state`,
  );
  return Object.fromEntries(rows.map((row) => [row.state, row.n]));
}
