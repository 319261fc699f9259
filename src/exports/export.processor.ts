import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { randomBase62 } from '../common/ids/ids';
import { WORKER_ID } from '../common/process/worker-id';
import { AppConfig } from '../config/app-config';
import { EXPORT_OUTCOME_LISTENER, ExportOutcomeListener } from './export-outcome';
import { EXPORT_JOB, EXPORT_QUEUE, ExportJob, ExportScheduler } from './export-queue';
import { ExportRunner } from './export-runner';
import { ExportsRepository } from './exports.repository';

/**
 * Runs exports from the queue, EXPORT_WORKER_CONCURRENCY at a time per process, within
 * EXPORT_CONCURRENCY_PER_ORG per organization across all workers. Registered only when WORKERS=on.
 */
@Injectable()
export class ExportProcessor implements OnModuleInit {
  private readonly logger = new Logger(ExportProcessor.name);

  constructor(
    @InjectQueue(EXPORT_QUEUE) private readonly queue: Queue<ExportJob>,
    private readonly dataSource: DataSource,
    private readonly exports: ExportsRepository,
    private readonly runner: ExportRunner,
    private readonly scheduler: ExportScheduler,
    private readonly config: AppConfig,
    @Inject(EXPORT_OUTCOME_LISTENER) private readonly outcome: ExportOutcomeListener,
  ) {}

  onModuleInit(): void {
    this.queue
      .process(EXPORT_JOB, this.config.exports.workerConcurrency, (job) => this.handle(job.data))
      .catch((error: Error) => this.logger.error(`export worker stopped: ${error.message}`));
  }

  async handle(job: ExportJob): Promise<void> {
    const { concurrencyPerOrg, leaseMs } = this.config.exports;
    // One lease holder per claim, not per process: when this process stalls past the lease and the
    // sweep hands the export out again, a second claim here must not pass the first attempt's
    // heartbeat or let it publish or fail the export (the new attempt removes the old partial file).
    const owner = `${WORKER_ID}/${randomBase62(8)}`;
    const record = await this.exports.claim(job.exportId, owner, concurrencyPerOrg, leaseMs);
    if (!record) return; // done, deleted, held by a live worker, or its organization is at its limit
    try {
      const outcome = await this.runner.run(record, owner);
      if (outcome === 'lost') this.logger.log({ exportId: record.id, msg: 'export cancelled or taken over' });
    } catch (error) {
      this.logger.error({ err: error, exportId: record.id, msg: 'export failed' });
      const reason = isStorageError(error) ? 'storage_error' : 'internal_error';
      await this.dataSource
        .transaction(async (manager) => {
          const failed = await this.exports.fail(record.id, reason, manager, owner);
          if (failed) await this.outcome.failed(failed, manager);
        })
        .catch(() => undefined); // the database is down too: the sweep restarts or fails it later
    } finally {
      // A slot of the organization is free: start its next queued export now.
      await this.scheduler.handQueued(record.organizationId).catch(() => undefined);
    }
  }
}

/** Errors of the storage (file system, S3) rather than of the database or the code. */
function isStorageError(error: unknown): boolean {
  const e = error as { code?: string; $metadata?: unknown; message?: string };
  return (
    e?.$metadata !== undefined ||
    ['ENOSPC', 'EACCES', 'EROFS', 'EIO', 'ENOENT', 'EDQUOT'].includes(e?.code ?? '') ||
    /export file check failed/.test(e?.message ?? '')
  );
}
