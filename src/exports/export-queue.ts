import { InjectQueue } from '@nestjs/bull';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bull';
import { AppConfig } from '../config/app-config';
import { within } from '../common/resilience';
import { ExportsRepository } from './exports.repository';

/** The Bull queue of exports: a job asks a worker to try to run one export. */
export const EXPORT_QUEUE = 'exports';
export const EXPORT_JOB = 'export';
const QUEUE_TIMEOUT_MS = 2000;

export interface ExportJob {
  exportId: string;
}

/**
 * Hands queued exports to the workers. A job's id is the export id and its attempt number, so
 * handing the same queued export twice adds one job, while a restart after a takeover adds a
 * new one even if the dead worker's job is still in Bull. A job that finds its organization at
 * EXPORT_CONCURRENCY_PER_ORG leaves the export queued: it is handed again when one of the
 * organization's exports ends, and by the sweep.
 */
@Injectable()
export class ExportScheduler {
  constructor(
    @InjectQueue(EXPORT_QUEUE) private readonly queue: Queue<ExportJob>,
    private readonly exports: ExportsRepository,
    private readonly config: AppConfig,
  ) {}

  async hand(exportId: string, attempts: number): Promise<void> {
    await within(
      this.queue.add(
        EXPORT_JOB,
        { exportId },
        { jobId: `${exportId}.${attempts}`, removeOnComplete: true, removeOnFail: true },
      ),
      QUEUE_TIMEOUT_MS,
    );
  }

  /** Hands the oldest queued exports: of one organization (up to its limit), or of all. */
  async handQueued(organizationId?: string): Promise<number> {
    const queued = await this.exports.findQueued(
      organizationId ? this.config.exports.concurrencyPerOrg : 200,
      organizationId,
    );
    for (const e of queued) await this.hand(e.id, e.attempts);
    return queued.length;
  }
}
