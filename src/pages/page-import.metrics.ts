import { InjectQueue } from '@nestjs/bull';
import { Injectable, Optional } from '@nestjs/common';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { MetricsService } from '../metrics/metrics.service';
import { QueueMetrics } from '../metrics/queue-metrics';
import { scrapeTransaction } from '../metrics/scrape-transaction';
import { PAGE_IMPORT_QUEUE } from './page-import-queue';
import { PageImportsRepository } from './page-imports.repository';

/**
 * The page imports' /metrics: imports running and closed by outcome, read from Postgres at
 * scrape time (source `page_imports`), and the page-imports queue.
 */
@Injectable()
export class PageImportMetrics {
  constructor(
    dataSource: DataSource,
    imports: PageImportsRepository,
    @InjectQueue(PAGE_IMPORT_QUEUE) queue: Queue,
    @Optional() metrics?: MetricsService,
    @Optional() queues?: QueueMetrics,
  ) {
    queues?.observe(PAGE_IMPORT_QUEUE, queue);
    if (!metrics) return;
    const running = metrics.gauge({ name: 'page_imports_running', help: 'Page imports running now.' });
    const closed = metrics.gauge({
      name: 'page_imports_closed',
      help: 'Page imports closed, by outcome (completed, failed), as stored in the database.',
      labelNames: ['outcome'],
    });
    metrics.readAtScrape(
      'page_imports',
      [running, closed],
      () => scrapeTransaction(dataSource, (manager) => imports.countByState(manager)),
      (counts) => {
        running.set(counts.running);
        for (const [outcome, n] of Object.entries(counts.closed)) closed.set({ outcome }, n);
      },
    );
  }
}
