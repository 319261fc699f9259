import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Queue } from 'bull';

export const SEARCH_MIRROR_QUEUE = 'search-mirror';
export const DRAIN_JOB = 'drain';
/** How often the outbox is drained (a drain empties everything due, in batches). */
export const DRAIN_INTERVAL_MS = 2000;

/**
 * Each worker process ticks every DRAIN_INTERVAL_MS and enqueues the drain job of the current
 * slot; the slot's job id makes it one drain per interval whatever the number of processes (as
 * the label scan does). Postgres holds the work: a tick lost while Redis is down only delays
 * the drain, the outbox rows wait.
 */
@Injectable()
export class SearchMirrorScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SearchMirrorScheduler.name);
  private timer?: NodeJS.Timeout;
  private redisDown = false;
  /** While Redis is down an add waits for it (Bull queues commands): no second tick piles up. */
  private ticking = false;

  constructor(@InjectQueue(SEARCH_MIRROR_QUEUE) private readonly queue: Queue) {}

  onApplicationBootstrap(): void {
    void this.tick();
    this.timer = setInterval(() => void this.tick(), DRAIN_INTERVAL_MS);
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async tick(now: Date = new Date()): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      await this.queue.add(
        DRAIN_JOB,
        {},
        {
          jobId: `${DRAIN_JOB}:${Math.floor(now.getTime() / DRAIN_INTERVAL_MS)}`,
          removeOnComplete: 10,
          removeOnFail: 10,
          attempts: 1,
        },
      );
      if (this.redisDown) this.logger.log('search mirror drains scheduled again');
      this.redisDown = false;
    } catch (error) {
      if (!this.redisDown)
        this.logger.warn(`search mirror drain not scheduled (${(error as Error).message}); the outbox waits`);
      this.redisDown = true;
    } finally {
      this.ticking = false;
    }
  }
}
