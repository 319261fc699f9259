import { InjectQueue } from '@nestjs/bull';
import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Queue } from 'bull';
import { IntervalJob } from '../../common/interval-job';
import { AppConfig } from '../../config/app-config';
import { addOncePerInterval } from '../../queue/once-per-interval';
import { OutboxListener } from './outbox-listener';

export const SEARCH_MIRROR_QUEUE = 'search-mirror';
export const DRAIN_JOB = 'drain';
/**
 * How often the outbox is drained (a drain empties everything due, in batches). With
 * OpenSearch's refresh every second, a change is searchable about a second after its commit
 * (bench/results/opensearch.md, mirror lag); an empty drain is one indexed read of the outbox.
 */
export const DRAIN_INTERVAL_MS = 500;
/**
 * Shortest gap between two drains woken by the outbox (per process, and one job per gap across
 * processes): a burst of commits wakes one drain, which takes every row due.
 */
export const WAKE_GAP_MS = 50;

/**
 * Drains are woken by the outbox: each worker process listens to the outbox's notifications
 * (OutboxListener: a transaction that wrote outbox rows has committed) and enqueues a drain at
 * once, at most one per WAKE_GAP_MS (a burst of commits, one drain; the job id makes it one
 * across processes). It also ticks every DRAIN_INTERVAL_MS and enqueues the drain job of the
 * current slot, for rows a lost notification or a postponement left (as the label scan does).
 * Postgres holds the work: a tick lost while Redis is down only delays the drain, the outbox
 * rows wait.
 */
@Injectable()
export class SearchMirrorScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  // While Redis is down an add waits for it (Bull queues commands): the job runs no second
  // tick while one is going, so none piles up.
  private readonly job = new IntervalJob(
    {
      name: SearchMirrorScheduler.name,
      everyMs: DRAIN_INTERVAL_MS,
      immediately: true,
      failure: (error) => `search mirror drain not scheduled (${error.message}); the outbox waits`,
      recovered: 'search mirror drains scheduled again',
    },
    () => this.enqueueDrain(),
  );

  private readonly listener: OutboxListener;
  private wakeTimer?: NodeJS.Timeout;
  private lastWake = 0;

  constructor(
    @InjectQueue(SEARCH_MIRROR_QUEUE) private readonly queue: Queue,
    config: AppConfig,
  ) {
    this.listener = new OutboxListener(config.databaseUrl, () => this.wake());
  }

  onApplicationBootstrap(): void {
    this.job.start();
    this.listener.start();
  }

  async onApplicationShutdown(): Promise<void> {
    this.job.stop();
    clearTimeout(this.wakeTimer);
    await this.listener.stop();
  }

  /** Enqueues a drain now, or once WAKE_GAP_MS has passed since the last one woken. */
  wake(): void {
    if (this.wakeTimer) return;
    const wait = Math.max(0, this.lastWake + WAKE_GAP_MS - Date.now());
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = undefined;
      this.lastWake = Date.now();
      this.queue
        .add(
          DRAIN_JOB,
          {},
          {
            jobId: `${DRAIN_JOB}:wake:${Math.floor(this.lastWake / WAKE_GAP_MS)}`,
            removeOnComplete: 10,
            removeOnFail: 10,
            attempts: 1,
          },
        )
        .catch(() => undefined);
    }, wait);
  }

  /** Enqueues this interval's drain job (once per interval across processes). */
  async enqueueDrain(now: Date = new Date()): Promise<void> {
    await addOncePerInterval(this.queue, DRAIN_JOB, DRAIN_INTERVAL_MS, now);
  }
}
