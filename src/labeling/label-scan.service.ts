import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Queue } from 'bull';
import { IntervalJob } from '../common/interval-job';
import { AppConfig } from '../config/app-config';
import { addOncePerInterval } from '../queue/once-per-interval';
import { LABEL_JOB, LabelJobData, labelJobId, LABELING_QUEUE, SCAN_JOB } from './labeling-queue';
import { LabelingQueueRepository } from './labeling-queue.repository';

/** Conversations read and enqueued per batch, and batches per scan at most. */
export const SCAN_BATCH_SIZE = 500;
const SCAN_MAX_BATCHES = 20;

/**
 * The scheduled scan: every LABEL_SCAN_INTERVAL_SECONDS, pending conversations quiet for
 * LABEL_QUIET_MINUTES are read from Postgres and enqueued as label jobs in batches. Postgres is
 * the source of truth: a job lost with Redis, or a dead worker's job, is enqueued again by a
 * later scan as long as the conversation is still pending.
 *
 * Each worker process ticks once per interval and enqueues the scan job of the current interval
 * slot; the slot's job id makes it one scan per interval whatever the number of processes.
 * (A Bull repeatable job would stop for good if Redis lost its next occurrence; a tick that
 * fails while Redis is down is simply tried again at the next one.)
 */
@Injectable()
export class LabelScanService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(LabelScanService.name);
  private job?: IntervalJob;

  constructor(
    private readonly config: AppConfig,
    private readonly repository: LabelingQueueRepository,
    @InjectQueue(LABELING_QUEUE) private readonly queue: Queue,
  ) {}

  onApplicationBootstrap(): void {
    this.job = new IntervalJob(
      {
        name: LabelScanService.name,
        everyMs: this.config.labeling.scanIntervalSeconds * 1000,
        immediately: true,
        failure: (error) => `label scan not scheduled (${error.message}); trying again every interval`,
        recovered: 'label scan scheduled again',
      },
      () => this.enqueueScan(),
    );
    this.job.start();
  }

  onApplicationShutdown(): void {
    this.job?.stop();
  }

  /** Enqueues this interval's scan job (once per interval across processes). */
  async enqueueScan(now: Date = new Date()): Promise<void> {
    await addOncePerInterval(this.queue, SCAN_JOB, this.config.labeling.scanIntervalSeconds * 1000, now);
  }

  /**
   * Enqueues every due conversation (up to the per-scan bound); returns how many were read. A scan
   * that found work logs one summary line: how many were due, and how many jobs wait in the
   * labeling queue (this scan's and earlier ones': a job id already waiting is not added twice).
   */
  async scan(now: Date = new Date()): Promise<number> {
    const quietBefore = new Date(now.getTime() - this.config.labeling.quietMinutes * 60_000);
    let after: { id: string; updatedAt: Date } | undefined;
    let total = 0;
    for (let batch = 0; batch < SCAN_MAX_BATCHES; batch++) {
      const due = await this.repository.findDue(quietBefore, SCAN_BATCH_SIZE, after);
      if (due.length === 0) break;
      await this.queue.addBulk(
        due.map((c) => ({
          name: LABEL_JOB,
          data: { conversationId: c.id, updatedAt: c.updatedAt.toISOString() } satisfies LabelJobData,
          opts: { jobId: labelJobId(c.id, c.updatedAt) },
        })),
      );
      total += due.length;
      after = due[due.length - 1];
      if (due.length < SCAN_BATCH_SIZE) break;
    }
    if (total > 0) await this.logSummary(total);
    return total;
  }

  private async logSummary(due: number): Promise<void> {
    // The count is for operators only: a Redis hiccup here must not fail a scan that enqueued.
    const queued = await this.queue.getWaitingCount().catch(() => null);
    this.logger.log({
      msg: `label scan: ${due} conversations due, ${queued ?? 'unknown'} jobs waiting in the labeling queue`,
      due,
      queued,
    });
  }
}
