import { InjectQueue } from '@nestjs/bull';
import { Injectable, Optional } from '@nestjs/common';
import type { Queue } from 'bull';
import { AppConfig } from '../../config/app-config';
import { MetricsService } from '../../metrics/metrics.service';
import { QueueMetrics } from '../../metrics/queue-metrics';
import { SEARCH_MIRROR_QUEUE } from './search-mirror.scheduler';
import { SearchOutboxRepository } from './search-outbox.repository';

/**
 * The search mirror's /metrics: whether OPENSEARCH_URL is set, and the outbox (switched on,
 * pending, failing, oldest age) read at scrape time (source `search_outbox`) in every process;
 * the drain queue where this process has it (OPENSEARCH_URL and WORKERS=on).
 */
@Injectable()
export class SearchMirrorMetrics {
  constructor(
    config: AppConfig,
    outbox: SearchOutboxRepository,
    @Optional() metrics?: MetricsService,
    @Optional() queues?: QueueMetrics,
    @Optional() @InjectQueue(SEARCH_MIRROR_QUEUE) queue?: Queue,
  ) {
    if (queue) queues?.observe(SEARCH_MIRROR_QUEUE, queue);
    if (!metrics) return;
    const gauge = (name: string, help: string) => metrics.gauge({ name, help });
    gauge('search_mirror_configured', 'Whether this process has OPENSEARCH_URL set (1) or not (0).').set(
      config.search.opensearchUrl ? 1 : 0,
    );
    const enabled = gauge(
      'search_mirror_enabled',
      'Whether conversation changes are written to the search outbox (1) or not (0).',
    );
    const pending = gauge('search_outbox_pending', 'Outbox rows not yet written to OpenSearch.');
    const failing = gauge(
      'search_outbox_failing',
      'Outbox rows kept for retry after at least one failed attempt.',
    );
    const oldest = gauge(
      'search_outbox_oldest_age_seconds',
      'Age of the oldest outbox row not yet written (0 when none).',
    );
    metrics.readAtScrape(
      'search_outbox',
      [enabled, pending, failing, oldest],
      () => Promise.all([outbox.lag(), outbox.mirrorEnabled()]),
      ([lag, on]) => {
        enabled.set(on ? 1 : 0);
        pending.set(lag.pending);
        failing.set(lag.failing);
        oldest.set(lag.oldestAgeSeconds);
      },
    );
  }
}
