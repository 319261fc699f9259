import { Injectable, Optional } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MetricsService } from '../metrics/metrics.service';
import { scrapeTransaction } from '../metrics/scrape-transaction';
import { EXPORT_STATES } from './export.records';
import { ExportsRepository } from './exports.repository';

/** The exports' /metrics gauge: exports by state, read from Postgres at scrape time (source `exports`). */
@Injectable()
export class ExportsMetrics {
  constructor(
    dataSource: DataSource,
    exportsRepository: ExportsRepository,
    @Optional() metrics?: MetricsService,
  ) {
    if (!metrics) return;
    const exports = metrics.gauge({
      name: 'exports',
      help: 'Exports by state (queued, running, completed, failed, expired), as stored in the database.',
      labelNames: ['state'],
    });
    metrics.readAtScrape(
      'exports',
      [exports],
      () => scrapeTransaction(dataSource, (manager) => exportsRepository.countByState(manager)),
      (counts) => {
        for (const state of EXPORT_STATES) exports.set({ state }, counts[state] ?? 0);
      },
    );
  }
}
