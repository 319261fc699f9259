import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { housekeepingJob, WorkerIntervalJob } from '../common/interval-job';
import { AppConfig } from '../config/app-config';
import { EXPORT_OUTCOME_LISTENER, ExportOutcomeListener } from './export-outcome';
import { ExportScheduler } from './export-queue';
import { storageKeyOf } from './export.records';
import { ExportsRepository } from './exports.repository';
import { EXPORT_STORAGE, ExportStorage } from './storage/export-storage';

/** Takeovers after which a dying export is failed `interrupted` rather than restarted again. */
export const MAX_EXPORT_ATTEMPTS = 3;

/**
 * The exports' housekeeping on worker processes, every half lease period:
 * - an export whose worker has been silent for EXPORT_LEASE_MS is put back in the queue and
 *   restarted from a fresh snapshot by another worker (failed `interrupted` after three tries),
 *   so none stays `running` forever;
 * - queued exports are handed to the queue again (a lost Redis write, a free slot);
 * - completed exports past `expiresAt` have their file deleted and become `expired`.
 */
@Injectable()
export class ExportSweep extends WorkerIntervalJob {
  constructor(
    private readonly dataSource: DataSource,
    private readonly exports: ExportsRepository,
    private readonly scheduler: ExportScheduler,
    private readonly config: AppConfig,
    @Inject(EXPORT_STORAGE) private readonly storage: ExportStorage,
    @Inject(EXPORT_OUTCOME_LISTENER) private readonly outcome: ExportOutcomeListener,
  ) {
    super(
      config.workers,
      housekeepingJob(
        ExportSweep.name,
        Math.max(500, Math.floor(config.exports.leaseMs / 2)),
        'export sweep',
      ),
    );
  }

  protected runJob(): Promise<unknown> {
    return this.sweep();
  }

  async sweep(): Promise<{ restarted: string[]; interrupted: string[]; expired: string[] }> {
    const restarted: string[] = [];
    const interrupted: string[] = [];
    for (const stale of await this.exports.findStale(this.config.exports.leaseMs)) {
      if (stale.attempts >= MAX_EXPORT_ATTEMPTS) {
        const failed = await this.dataSource.transaction(async (manager) => {
          const closed = await this.exports.fail(stale.id, 'interrupted', manager);
          if (closed) await this.outcome.failed(closed, manager);
          return closed;
        });
        if (failed) interrupted.push(stale.id);
      } else if (await this.exports.requeueStale(stale.id, this.config.exports.leaseMs)) {
        restarted.push(stale.id);
      }
    }
    if (restarted.length)
      this.logger.warn(`restarting ${restarted.length} export(s) of dead workers: ${restarted.join(', ')}`);
    if (interrupted.length)
      this.logger.warn(`closed ${interrupted.length} interrupted export(s): ${interrupted.join(', ')}`);

    await this.scheduler.handQueued();

    const expired: string[] = [];
    for (const due of await this.exports.findDueForExpiry(100)) {
      await this.storage.remove(due.storageKey ?? storageKeyOf(due));
      await this.exports.markExpired(due.id);
      expired.push(due.id);
    }
    return { restarted, interrupted, expired };
  }
}
