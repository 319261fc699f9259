import { Injectable } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import type { Counter, Histogram } from 'prom-client';
import { MetricsService } from './metrics.service';

const JOB_STATES = ['waiting', 'active', 'delayed', 'failed', 'paused'] as const;

/**
 * The Bull queues /metrics reports on: each feature hands its queue to `observe` when this
 * process has it (some need WORKERS or OPENSEARCH_URL). Their depths are read at scrape time
 * (`queue_jobs`, source `queues`); the jobs this process finishes are counted and timed from
 * Bull's local events.
 */
@Injectable()
export class QueueMetrics {
  private readonly queues = new Map<string, Queue>();
  private readonly finished: Counter<'queue' | 'outcome'>;
  private readonly duration: Histogram<'queue' | 'outcome'>;

  constructor(metrics: MetricsService) {
    const jobs = metrics.gauge({
      name: 'queue_jobs',
      help: 'Jobs in a Bull queue, by queue and state (waiting, active, delayed, failed, paused).',
      labelNames: ['queue', 'state'],
    });
    metrics.readAtScrape(
      'queues',
      [jobs],
      () =>
        Promise.all(
          this.observed().map(async ([queue, bull]) => ({
            queue,
            counts: (await bull.getJobCounts()) as unknown as Record<string, number | undefined>,
          })),
        ),
      (all) => {
        for (const { queue, counts } of all)
          for (const state of JOB_STATES) jobs.set({ queue, state }, counts[state] ?? 0);
      },
    );
    this.finished = metrics.counter({
      name: 'queue_jobs_finished_total',
      help: 'Jobs this process finished, by queue and outcome (completed; failed; retried: failed, another attempt scheduled).',
      labelNames: ['queue', 'outcome'],
    });
    this.duration = metrics.histogram({
      name: 'queue_job_duration_seconds',
      help: 'Run time of the jobs this process finished, by queue and outcome.',
      labelNames: ['queue', 'outcome'],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900],
    });
  }

  /**
   * Reports the depths of `bull` under `queue`, and the outcomes of the jobs this process runs
   * from it. One Queue object per name: a second one handed over for a name is ignored.
   */
  observe(queue: string, bull: Queue): void {
    if (this.queues.has(queue)) return;
    this.queues.set(queue, bull);
    const record = (job: Job, outcome: string) => {
      this.finished.inc({ queue, outcome });
      if (job.processedOn) this.duration.observe({ queue, outcome }, (Date.now() - job.processedOn) / 1000);
    };
    bull.on('completed', (job: Job) => record(job, 'completed'));
    bull.on('failed', (job: Job) =>
      record(job, job.attemptsMade < (job.opts.attempts ?? 1) ? 'retried' : 'failed'),
    );
  }

  /** The observed queues in name order, whatever order the features registered them in. */
  private observed(): Array<[string, Queue]> {
    return [...this.queues].sort(([a], [b]) => a.localeCompare(b));
  }
}
