import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { SitesModule } from '../sites/sites.module';
import { CONVERSATION_STATS } from '../search/stats/conversation-stats';
import { conversationStatsProvider } from '../search/stats/conversation-stats.provider';
import { PostgresConversationStats } from '../search/stats/postgres/postgres-conversation-stats';
import { StatsRollupCompactor } from '../search/stats/postgres/stats-rollup-compactor';
import { StatsRollupJobs } from './stats-rollup-jobs';
import { StatsController } from './stats.controller';
import { StatsService } from './stats.service';

/**
 * `GET /api/v1/sites/{siteId}/conversations/stats`. The engine follows SEARCH_BACKEND as the
 * listing's does: Postgres (exact, rollups + scan) by default, OpenSearch with Postgres as its
 * fallback. Import it before ConversationsModule (route order).
 */
@Module({
  imports: [SitesModule],
  controllers: [StatsController],
  providers: [
    PostgresConversationStats,
    conversationStatsProvider(PostgresConversationStats),
    StatsService,
    StatsRollupCompactor,
  ],
  exports: [CONVERSATION_STATS, PostgresConversationStats, StatsRollupCompactor],
})
export class StatsModule {}

/** Folding the rollups' appended rows (StatsRollupJobs): registered only when WORKERS=on. */
@Module({})
export class StatsRollupJobsModule {
  static register(config: AppConfig): DynamicModule {
    if (!config.workers) return { module: StatsRollupJobsModule };
    return { module: StatsRollupJobsModule, providers: [StatsRollupCompactor, StatsRollupJobs] };
  }
}
