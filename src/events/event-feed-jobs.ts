import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { IntervalJob } from '../common/interval-job';
import { AppConfig } from '../config/app-config';
import { EventSequencer } from './event-sequencer';
import { EventsRepository } from './events.repository';

/** How often a worker positions newly committed events (readers also do it before reading). */
export const SEQUENCE_INTERVAL_MS = 250;
/** How often a worker deletes events past the retention. */
export const PURGE_INTERVAL_MS = 10 * 60_000;
const PURGE_BATCH = 5000;

/**
 * The feed's background work on the workers: positioning committed events (so a delivery
 * worker or a reader finds them numbered) and deleting events older than EVENT_RETENTION_DAYS.
 * Every worker process runs both; the sequencer lock and the purge's deletes make concurrent
 * runs harmless.
 */
@Injectable()
export class EventFeedJobs implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly sequenceJob = new IntervalJob(
    {
      name: 'EventSequencer',
      everyMs: SEQUENCE_INTERVAL_MS,
      failure: (error) => `events not positioned (${error.message}); readers position them when they read`,
      recovered: 'events positioned again',
    },
    () => this.sequencer.catchUp({ wait: false }),
  );

  private readonly purgeJob = new IntervalJob(
    {
      name: 'EventPurge',
      everyMs: PURGE_INTERVAL_MS,
      immediately: true,
      unref: true,
      failure: (error) => `expired events not purged (${error.message}); retried later`,
      recovered: 'expired events purged again',
    },
    () => this.purge(),
  );

  constructor(
    private readonly config: AppConfig,
    private readonly sequencer: EventSequencer,
    private readonly events: EventsRepository,
  ) {}

  onApplicationBootstrap(): void {
    this.sequenceJob.start();
    this.purgeJob.start();
  }

  onApplicationShutdown(): void {
    this.sequenceJob.stop();
    this.purgeJob.stop();
  }

  /** Deletes every event sequenced more than the retention ago; returns how many. */
  async purge(now: Date = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - this.config.events.retentionDays * 86_400_000);
    let total = 0;
    for (;;) {
      const n = await this.events.purge(cutoff, PURGE_BATCH);
      total += n;
      if (n < PURGE_BATCH) return total;
    }
  }
}
