import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { housekeepingJob, WorkerIntervalJob } from '../common/interval-job';
import { AppConfig } from '../config/app-config';
import { DeletionsRepository } from './deletions.repository';
import { DeletionsService } from './deletions.service';

/**
 * Retention (workflows-v1 §3) on the workers, every RETENTION_SWEEP_INTERVAL_SECONDS (and at
 * start): for each site with `retentionDays`, a deletion job (origin `retention`) of the
 * conversations last updated before now minus that many days, run by DeletionWorker like any
 * job (batches, events, resumable). One retention job per site at a time; none when nothing is
 * due. A conversation with activity after the cutoff is kept, even if it was in the job's set.
 */
@Injectable()
export class RetentionSweep extends WorkerIntervalJob {
  constructor(
    private readonly dataSource: DataSource,
    private readonly deletions: DeletionsRepository,
    private readonly service: DeletionsService,
    config: AppConfig,
  ) {
    super(
      config.workers,
      housekeepingJob(RetentionSweep.name, config.retention.sweepIntervalSeconds * 1000, 'retention sweep'),
    );
  }

  protected runJob(): Promise<string[]> {
    return this.sweep();
  }

  /** Creates the due retention jobs; returns their ids. */
  async sweep(): Promise<string[]> {
    const created: string[] = [];
    for (const site of await this.deletions.sitesWithRetention()) {
      const job = await this.dataSource.transaction((manager) => this.service.createRetention(site, manager));
      if (job) created.push(job.id);
    }
    if (created.length) this.logger.log({ deletions: created, msg: 'retention deletions created' });
    return created;
  }
}
