import { getQueueToken } from '@nestjs/bull';
import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Job, Queue } from 'bull';
import type { Counter, Gauge } from 'prom-client';
import { AppConfig } from '../config/app-config';
import { EXPORT_STATES } from '../exports/export.records';
import { LABELING_QUEUE } from '../labeling-queue/labeling-queue';
import { PAGE_IMPORT_QUEUE } from '../pages/page-import-queue';
import { SEARCH_MIRROR_QUEUE } from '../search/mirror/search-mirror.scheduler';
import { SearchOutboxRepository } from '../search/mirror/search-outbox.repository';
import { MetricsRepository } from './metrics.repository';
import { MetricsService } from './metrics.service';
import { within } from '../common/resilience';

/** The Bull queues /metrics reports on, when this process has them (some need WORKERS or OPENSEARCH_URL). */
export const OBSERVED_QUEUES = [LABELING_QUEUE, PAGE_IMPORT_QUEUE, SEARCH_MIRROR_QUEUE] as const;

/** Longest a scrape waits for one source (Postgres, Redis) before reporting it as failed. */
export const SCRAPE_TIMEOUT_MS = 2000;

const JOB_STATES = ['waiting', 'active', 'delayed', 'failed', 'paused'] as const;

/**
 * The metrics read from Postgres and Redis when Prometheus scrapes (never on the request path),
 * and the Bull job outcome counters of the queues this process runs. A source that fails or is
 * slower than SCRAPE_TIMEOUT_MS leaves its gauges NaN (labelled ones absent) for that scrape and
 * counts one `metrics_collect_errors_total{source}`; the rest of the scrape still answers.
 */
@Injectable()
export class MetricsCollectors implements OnApplicationBootstrap {
  private readonly logger = new Logger('Metrics');
  private readonly queues = new Map<string, Queue>();
  private readonly errors: Counter<'source'>;

  constructor(
    private readonly metrics: MetricsService,
    private readonly config: AppConfig,
    private readonly outbox: SearchOutboxRepository,
    private readonly repository: MetricsRepository,
    private readonly moduleRef: ModuleRef,
  ) {
    this.errors = metrics.counter({
      name: 'metrics_collect_errors_total',
      help: 'Scrapes in which a source (search_outbox, labeling, page_imports, exports, queues) failed or timed out.',
      labelNames: ['source'],
    });
    this.registerSearchMirror();
    this.registerLabeling();
    this.registerImports();
    this.registerExports();
    this.registerQueues();
  }

  onApplicationBootstrap(): void {
    for (const name of OBSERVED_QUEUES) {
      try {
        this.queues.set(name, this.moduleRef.get<Queue>(getQueueToken(name), { strict: false }));
      } catch {
        // Not registered in this process (WORKERS=off, no OPENSEARCH_URL): nothing to report.
      }
    }
    this.countJobOutcomes();
  }

  /** The five gauges the hand-written /metrics had: same names, same meaning. */
  private registerSearchMirror(): void {
    this.gauge('search_mirror_configured', 'Whether this process has OPENSEARCH_URL set (1) or not (0).').set(
      this.config.search.opensearchUrl ? 1 : 0,
    );
    const enabled = this.gauge(
      'search_mirror_enabled',
      'Whether conversation changes are written to the search outbox (1) or not (0).',
    );
    const pending = this.gauge('search_outbox_pending', 'Outbox rows not yet written to OpenSearch.');
    const failing = this.gauge(
      'search_outbox_failing',
      'Outbox rows kept for retry after at least one failed attempt.',
    );
    const oldest = this.gauge(
      'search_outbox_oldest_age_seconds',
      'Age of the oldest outbox row not yet written (0 when none).',
    );
    this.onScrape(
      'search_outbox',
      [enabled, pending, failing, oldest],
      () => Promise.all([this.outbox.lag(), this.outbox.mirrorEnabled()]),
      ([lag, on]) => {
        enabled.set(on ? 1 : 0);
        pending.set(lag.pending);
        failing.set(lag.failing);
        oldest.set(lag.oldestAgeSeconds);
      },
    );
  }

  private registerLabeling(): void {
    const quietSeconds = this.config.labeling.quietMinutes * 60;
    const due = this.gauge(
      'labeling_due_conversations',
      'Pending conversations quiet for LABEL_QUIET_MINUTES, waiting for a label.',
    );
    const lag = this.gauge(
      'labeling_lag_seconds',
      'Seconds since the oldest due pending conversation became due (0 when none).',
    );
    this.onScrape(
      'labeling',
      [due, lag],
      () => this.repository.labelingLag(quietSeconds, SCRAPE_TIMEOUT_MS),
      (value) => {
        due.set(value.due);
        lag.set(value.oldestDueSeconds);
      },
    );
  }

  private registerImports(): void {
    const running = this.gauge('page_imports_running', 'Page imports running now.');
    const closed = this.metrics.gauge({
      name: 'page_imports_closed',
      help: 'Page imports closed, by outcome (completed, failed), as stored in the database.',
      labelNames: ['outcome'],
    });
    this.onScrape(
      'page_imports',
      [running, closed],
      () => this.repository.importCounts(SCRAPE_TIMEOUT_MS),
      (counts) => {
        running.set(counts.running);
        for (const [outcome, n] of Object.entries(counts.closed)) closed.set({ outcome }, n);
      },
    );
  }

  private registerExports(): void {
    const exports = this.metrics.gauge({
      name: 'exports',
      help: 'Exports by state (queued, running, completed, failed, expired), as stored in the database.',
      labelNames: ['state'],
    });
    this.onScrape(
      'exports',
      [exports],
      () => this.repository.exportCounts(SCRAPE_TIMEOUT_MS),
      (counts) => {
        for (const state of EXPORT_STATES) exports.set({ state }, counts[state] ?? 0);
      },
    );
  }

  private registerQueues(): void {
    const jobs = this.metrics.gauge({
      name: 'queue_jobs',
      help: 'Jobs in a Bull queue, by queue and state (waiting, active, delayed, failed, paused).',
      labelNames: ['queue', 'state'],
    });
    this.onScrape(
      'queues',
      [jobs],
      () =>
        Promise.all(
          [...this.queues].map(async ([queue, bull]) => ({
            queue,
            counts: (await bull.getJobCounts()) as unknown as Record<string, number | undefined>,
          })),
        ),
      (all) => {
        for (const { queue, counts } of all)
          for (const state of JOB_STATES) jobs.set({ queue, state }, counts[state] ?? 0);
      },
    );
  }

  /** Outcomes of the jobs this process ran (Bull's local events). */
  private countJobOutcomes(): void {
    const finished = this.metrics.counter({
      name: 'queue_jobs_finished_total',
      help: 'Jobs this process finished, by queue and outcome (completed; failed; retried: failed, another attempt scheduled).',
      labelNames: ['queue', 'outcome'],
    });
    const duration = this.metrics.histogram({
      name: 'queue_job_duration_seconds',
      help: 'Run time of the jobs this process finished, by queue and outcome.',
      labelNames: ['queue', 'outcome'],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900],
    });
    for (const [queue, bull] of this.queues) {
      const record = (job: Job, outcome: string) => {
        finished.inc({ queue, outcome });
        if (job.processedOn) duration.observe({ queue, outcome }, (Date.now() - job.processedOn) / 1000);
      };
      bull.on('completed', (job: Job) => record(job, 'completed'));
      bull.on('failed', (job: Job) =>
        record(job, job.attemptsMade < (job.opts.attempts ?? 1) ? 'retried' : 'failed'),
      );
    }
  }

  private gauge(name: string, help: string): Gauge {
    return this.metrics.gauge({ name, help });
  }

  /**
   * Reads `source` once per scrape, within SCRAPE_TIMEOUT_MS, and sets its gauges; when the read
   * fails they are reset (labelled gauges then have no series) and unlabelled ones set to NaN.
   */
  private onScrape<T>(
    source: string,
    gauges: Gauge[],
    load: () => Promise<T>,
    apply: (value: T) => void,
  ): void {
    this.metrics.beforeScrape(async () => {
      let value: T;
      try {
        value = await within(load(), SCRAPE_TIMEOUT_MS);
      } catch (error) {
        this.errors.inc({ source });
        this.logger.warn(`could not read ${source} for /metrics (${(error as Error).message})`);
        for (const gauge of gauges) {
          gauge.reset();
          if (!(gauge as unknown as { labelNames: string[] }).labelNames.length) gauge.set(Number.NaN);
        }
        return;
      }
      for (const gauge of gauges) gauge.reset();
      apply(value);
    });
  }
}
