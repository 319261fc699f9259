import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { randomBase62 } from '../common/ids/ids';
import { housekeepingJob, WorkerIntervalJob } from '../common/interval-job';
import { WORKER_ID } from '../common/process/worker-id';
import { AppConfig } from '../config/app-config';
import { ConversationRemovalRepository } from '../conversations/conversation-removal.repository';
import type { DeletionRecord } from './deletion.records';
import { DeletionsRepository } from './deletions.repository';

/** Silence after which a running job's worker counts as dead and another worker resumes it. */
export const DELETION_LEASE_MS = 30_000;
/** How often an idle worker looks for a job to run. */
const POLL_MS = 1000;
/** Claims after which a job that keeps dying is failed `interrupted` rather than tried again. */
export const MAX_DELETION_ATTEMPTS = 20;
/**
 * Pause after each batch, as a share of the time the batch took (the worker then keeps a core
 * busy at most 1 / (1 + share) of the time). 0: measured side by side on the 2-core machine, a
 * pause of half a batch cost 38 % of the rate (1,292/s against 2,082/s) for a listing p99 of 43
 * against 47 ms during the job (docs/data-lifecycle.md, Figures). A lever for a saturated machine.
 */
export const DELETION_PAUSE_SHARE = 0;
/**
 * Batches of one job deleted at once, each in its own transaction on its own connection: a
 * batch's work is almost all in Postgres (the rollup deltas, the child rows, the postings), so
 * two lanes keep both cores of the 2-core machine busy where one kept one
 * (docs/data-lifecycle.md, Figures).
 */
export const DELETION_LANES = 2;

/** The job is no longer this worker's (taken over after a stall). */
class DeletionLost extends Error {}

/**
 * Runs deletion jobs on the workers (WORKERS=on), one job at a time per process, its batches
 * DELETION_LANES at a time. A job is a list of batches taken when it was created
 * (deletion_batches); each batch is one short transaction: the job row is share-locked under the
 * worker's lease, a batch no other lane holds is locked, its conversations are deleted with
 * their `conversation.deleted` events (removeConversations, set-based), the batch row goes,
 * `deleted` grows and the lease is renewed; then the lane pauses (DELETION_PAUSE_SHARE). Once no
 * batch is left the job completes. A worker that dies mid-batch leaves its batches rolled back
 * and the job resumes at them, by the next tick of any worker (at once after an error it
 * survived, after DELETION_LEASE_MS when it died), so a job is never left half-done.
 */
@Injectable()
export class DeletionWorker extends WorkerIntervalJob {
  constructor(
    private readonly dataSource: DataSource,
    private readonly deletions: DeletionsRepository,
    private readonly removal: ConversationRemovalRepository,
    config: AppConfig,
  ) {
    super(config.workers, housekeepingJob(DeletionWorker.name, POLL_MS, 'deletion worker'));
  }

  protected runJob(): Promise<number> {
    return this.runAll();
  }

  /** Runs jobs until none is left to take; returns how many it finished. */
  async runAll(): Promise<number> {
    let finished = 0;
    for (;;) {
      const owner = `${WORKER_ID}/${randomBase62(8)}`;
      const job = await this.deletions.claim(owner, DELETION_LEASE_MS);
      if (!job) return finished;
      if (job.attempts > MAX_DELETION_ATTEMPTS) {
        this.logger.error({ deletionId: job.id, msg: 'deletion failed: interrupted too many times' });
        await this.deletions.fail(job.id, 'interrupted');
        continue;
      }
      try {
        if (await this.run(job, owner)) finished++;
      } catch (error) {
        // The batch rolled back; the job is given back and resumed at that batch.
        await this.deletions.release(job.id, owner).catch(() => undefined);
        throw error;
      }
    }
  }

  /**
   * Deletes the job's batches one transaction each, DELETION_LANES at a time; true when it
   * completed here. Every lane is let finish its batch before a failure is thrown, so the job is
   * released only once none of its batches is in flight here.
   */
  private async run(job: DeletionRecord, owner: string): Promise<boolean> {
    const lanes = await Promise.allSettled(
      Array.from({ length: DELETION_LANES }, () => this.lane(job, owner)),
    );
    const failed = lanes.find((lane): lane is PromiseRejectedResult => lane.status === 'rejected');
    if (failed) throw failed.reason;
    if (lanes.some((lane) => lane.status === 'fulfilled' && lane.value === 'lost')) return false;
    const completed = await this.dataSource.transaction(async (manager) => {
      if (!(await this.deletions.hold(job.id, owner, manager))) return false;
      // A lane that stopped on a batch it found held by its sibling leaves it to the sibling;
      // every lane has stopped now, so a batch left here is one a lane could not take.
      const next = await this.deletions.nextBatch(job.id, manager);
      if (next.batch !== undefined || next.left) return false;
      return (await this.deletions.complete(job.id, owner, manager)) !== undefined;
    });
    if (completed) this.logger.log({ deletionId: job.id, matched: job.matched, msg: 'deletion completed' });
    return completed;
  }

  /** One lane: takes the job's free batches one transaction each until none is free. */
  private async lane(job: DeletionRecord, owner: string): Promise<'drained' | 'lost'> {
    for (;;) {
      const started = performance.now();
      const outcome = await this.dataSource
        .transaction(async (manager) => {
          // Each batch replans the delete triggers' statements, without jit (see prepareBatch).
          await this.deletions.prepareBatch(manager);
          if (!(await this.deletions.hold(job.id, owner, manager))) throw new DeletionLost();
          const batch = await this.deletions.nextBatch(job.id, manager);
          if (batch.batch === undefined) return 'drained' as const;
          const removed = await this.removal.remove(manager, job.siteId, batch.ids, {
            updatedBefore: job.updatedBefore,
          });
          await this.deletions.finishBatch(job.id, batch.batch, removed.length, manager);
          return 'batch' as const;
        })
        .catch((error: unknown) => {
          if (error instanceof DeletionLost) return 'lost' as const;
          throw error;
        });
      if (outcome !== 'batch') return outcome;
      await sleep((performance.now() - started) * DELETION_PAUSE_SHARE);
    }
  }
}
