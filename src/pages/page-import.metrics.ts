import { InjectQueue } from '@nestjs/bull';
import { Injectable, Optional } from '@nestjs/common';
import type { Queue } from 'bull';
import { DataSource, EntityManager } from 'typeorm';
import { MetricsService } from '../metrics/metrics.service';
import { QueueMetrics } from '../metrics/queue-metrics';
import { scrapeTransaction } from '../metrics/scrape-transaction';
import { PAGE_IMPORT_QUEUE } from './page-import-queue';

interface ImportCounts {
  running: number;
  closed: Record<'completed' | 'failed', number>;
}

/**
 * The page imports' /metrics: imports running and closed by outcome, read from Postgres at
 * scrape time (source `page_imports`), and the page-imports queue.
 */
@Injectable()
export class PageImportMetrics {
  constructor(
    dataSource: DataSource,
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
      () => scrapeTransaction(dataSource, countImports),
      (counts) => {
        running.set(counts.running);
        for (const [outcome, n] of Object.entries(counts.closed)) closed.set({ outcome }, n);
      },
    );
  }
}

async function countImports(manager: EntityManager): Promise<ImportCounts> {
  const rows: Array<{ state: string; outcome: string | null; n: number }> = await manager.query(
    `SELECT state, outcome, count(*)::int AS n FROM page_imports GROUP BY state, outcome`,
  );
  const counts: ImportCounts = { running: 0, closed: { completed: 0, failed: 0 } };
  for (const row of rows) {
    if (row.state === 'running') counts.running += row.n;
    else if (row.outcome === 'completed' || row.outcome === 'failed') counts.closed[row.outcome] += row.n;
  }
  return counts;
}
