import { InjectQueue } from '@nestjs/bull';
import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Queue } from 'bull';
import { IntervalJob } from '../../common/interval-job';
import { addOncePerInterval } from '../../queue/once-per-interval';

export const SEARCH_MIRROR_QUEUE = 'search-mirror';
export const DRAIN_JOB = 'drain';
/**
 * How often the outbox is drained (a drain empties everything due, in batches). With
 * OpenSearch's refresh every second, a change is searchable about a second after its commit
 * (bench/results/opensearch.md, mirror lag); an empty drain is one indexed read of the outbox.
 */
export const DRAIN_INTERVAL_MS = 500;

/**
 * Each worker process ticks every DRAIN_INTERVAL_MS and enqueues the drain job of the current
 * slot; the slot's job id makes it one drain per interval whatever the number of processes (as
 * the label scan does). Postgres holds the work: a tick lost while Redis is down only delays
 * the drain, the outbox rows wait.
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

  constructor(@InjectQueue(SEARCH_MIRROR_QUEUE) private readonly queue: Queue) {}

  onApplicationBootstrap(): void {
    this.job.start();
  }

  onApplicationShutdown(): void {
    this.job.stop();
  }

  /** Enqueues this interval's drain job (once per interval across processes). */
  async enqueueDrain(now: Date = new Date()): Promise<void> {
    await addOncePerInterval(this.queue, DRAIN_JOB, DRAIN_INTERVAL_MS, now);
  }
}
