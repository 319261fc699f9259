import { Module } from '@nestjs/common';
import { SitesModule } from '../sites/sites.module';
import { ViewsModule } from '../views/views.module';
import { StatsEnginesModule } from '../search/stats/stats-engines.module';
import { AgreementStats } from './agreement';
import { AgreementRepository } from './agreement.repository';
import { StatsRollupJobs } from './stats-rollup-jobs';
import { StatsController } from './stats.controller';
import { StatsService } from './stats.service';

/**
 * The statistics endpoint, `GET /api/v1/sites/{siteId}/conversations/stats`: its request parsing
 * (dto/stats-request.ts), controller and service, over the engines of src/search/stats/
 * (StatsEnginesModule). Import it before ConversationsModule (route order).
 */
@Module({
  imports: [SitesModule, StatsEnginesModule, ViewsModule],
  controllers: [StatsController],
  providers: [StatsService, AgreementStats, AgreementRepository],
  exports: [StatsEnginesModule],
})
export class StatsModule {}

/** Folding the rollups' appended rows (StatsRollupJobs): registered only when WORKERS=on (backgroundModules). */
@Module({ imports: [StatsEnginesModule], providers: [StatsRollupJobs] })
export class StatsRollupJobsModule {}
