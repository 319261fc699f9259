import { InjectQueue } from '@nestjs/bull';
import { Injectable, Optional } from '@nestjs/common';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { MetricsService } from '../metrics/metrics.service';
import { QueueMetrics } from '../metrics/queue-metrics';
import { scrapeTransaction } from '../metrics/scrape-transaction';
import { LABELING_QUEUE } from './labeling-queue';
import { LabelingQueueRepository } from './labeling-queue.repository';

/**
 * The labeling process's /metrics: the backlog of due conversations and its lag, read from
 * Postgres at scrape time (source `labeling`) in every process, and the labeling queue where
 * this process has it (WORKERS=on).
 */
@Injectable()
export class LabelingMetrics {
  constructor(
    config: AppConfig,
    dataSource: DataSource,
    repository: LabelingQueueRepository,
    @Optional() metrics?: MetricsService,
    @Optional() queues?: QueueMetrics,
    @Optional() @InjectQueue(LABELING_QUEUE) queue?: Queue,
  ) {
    if (queue) queues?.observe(LABELING_QUEUE, queue);
    if (!metrics) return;
    const quietSeconds = config.labeling.quietMinutes * 60;
    const due = metrics.gauge({
      name: 'labeling_due_conversations',
      help: 'Pending conversations quiet for LABEL_QUIET_MINUTES, waiting for a label.',
    });
    const lag = metrics.gauge({
      name: 'labeling_lag_seconds',
      help: 'Seconds since the oldest due pending conversation became due (0 when none).',
    });
    metrics.readAtScrape(
      'labeling',
      [due, lag],
      () => scrapeTransaction(dataSource, (manager) => repository.lag(manager, quietSeconds)),
      (value) => {
        due.set(value.due);
        lag.set(value.oldestDueSeconds);
      },
    );
  }
}
