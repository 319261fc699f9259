import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { IntervalJob } from '../common/interval-job';
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
export class RetentionSweep implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(RetentionSweep.name);
  private job?: IntervalJob;

  constructor(
    private readonly dataSource: DataSource,
    private readonly deletions: DeletionsRepository,
    private readonly service: DeletionsService,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    if (!this.config.workers) return;
    this.job = new IntervalJob(
      {
        name: RetentionSweep.name,
        everyMs: this.config.retention.sweepIntervalSeconds * 1000,
        immediately: true,
        unref: true,
        failure: (error) => `retention sweep failed: ${error.message}`,
        recovered: 'retention sweep runs again',
      },
      () => this.sweep(),
    );
    this.job.start();
  }

  onModuleDestroy(): void {
    this.job?.stop();
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
