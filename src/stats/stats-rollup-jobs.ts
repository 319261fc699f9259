import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { IntervalJob } from '../common/interval-job';
import { StatsRollupCompactor } from '../search/rollups';

/** How often a worker folds the rollups' appended rows (docs/statistics.md). */
export const ROLLUP_COMPACTION_INTERVAL_MS = 5000;

/**
 * Folds the statistics rollups' appended rows on the workers. Every worker process runs it;
 * the compactor's per-site lock makes concurrent runs harmless. Answers never depend on it
 * (readers sum appended rows too); a stopped job only lets the rollups grow.
 */
@Injectable()
export class StatsRollupJobs implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly job = new IntervalJob(
    {
      name: 'StatsRollupCompaction',
      everyMs: ROLLUP_COMPACTION_INTERVAL_MS,
      immediately: true,
      failure: (error) => `statistics rollups not folded (${error.message}); retried later`,
      recovered: 'statistics rollups folded again',
    },
    () => this.compactor.compactAll(),
  );

  constructor(private readonly compactor: StatsRollupCompactor) {}

  onApplicationBootstrap(): void {
    this.job.start();
  }

  onApplicationShutdown(): void {
    this.job.stop();
  }
}
