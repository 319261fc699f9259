import { InjectQueue } from '@nestjs/bull';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bull';
import { WorkerIntervalJob } from '../common/interval-job';
import { AppConfig } from '../config/app-config';
import { activeJobTrustedMs, mayBeResumed } from './lease-policy';
import { within } from '../common/resilience';
import { PAGE_IMPORT_QUEUE, PageImportJob } from './page-import-queue';
import { PageImportsRepository } from './page-imports.repository';

/**
 * Makes sure no import stays `running` forever when its worker dies. An import whose holder has
 * been silent longer than IMPORT_LEASE_MS is left alone while Bull still has its job waiting or
 * active (Bull hands a stalled job to a live worker, which takes the expired lease and resumes
 * the import); otherwise it is closed failed with `interrupted`. Runs every lease period on
 * worker processes.
 */
@Injectable()
export class ImportRecovery extends WorkerIntervalJob {
  constructor(
    @InjectQueue(PAGE_IMPORT_QUEUE) private readonly queue: Queue<PageImportJob>,
    private readonly imports: PageImportsRepository,
    private readonly config: AppConfig,
  ) {
    super(config.workers, {
      name: ImportRecovery.name,
      everyMs: config.imports.leaseMs,
      unref: true,
      failure: (error) => `import recovery sweep failed: ${error.message}`,
      recovered: 'import recovery sweeps again',
    });
  }

  protected runJob(): Promise<string[]> {
    return this.sweep();
  }

  /** Closes the stale imports nobody will resume; returns their ids. */
  async sweep(): Promise<string[]> {
    const { leaseMs, maxDurationMs, queueTimeoutMs } = this.config.imports;
    const closed: string[] = [];
    for (const stale of await this.imports.findStale(leaseMs)) {
      let state: string;
      try {
        const job = await within(this.queue.getJob(stale.id), queueTimeoutMs);
        state = job ? await within(job.getState(), queueTimeoutMs) : 'missing';
      } catch {
        continue; // Redis unknown: decide on a later sweep.
      }
      const silentMs = Date.now() - new Date(stale.heartbeatAt).getTime();
      const pending = ['waiting', 'delayed', 'paused'].includes(state);
      const active = state === 'active' && silentMs < activeJobTrustedMs(maxDurationMs, leaseMs);
      if ((pending || active) && mayBeResumed(stale.attempts)) continue;
      const staleBefore = new Date(Date.now() - leaseMs);
      if (await this.imports.failIfRunning(stale.id, 'interrupted', { staleBefore })) closed.push(stale.id);
    }
    if (closed.length > 0)
      this.logger.warn(`closed ${closed.length} interrupted page import(s): ${closed.join(', ')}`);
    return closed;
  }
}
