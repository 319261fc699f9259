import { Module, Provider } from '@nestjs/common';
import { SitesModule } from '../sites/sites.module';
import { CONVERSATION_STATS } from '../search/stats/conversation-stats';
import { PostgresConversationStats } from '../search/stats/postgres/postgres-conversation-stats';
import { StatsController } from './stats.controller';
import { StatsService } from './stats.service';

/**
 * The stats engine. Postgres (exact, rollups + scan) by default; the OpenSearch engine binds
 * here for SEARCH_BACKEND=opensearch.
 */
const statsEngineProvider: Provider = {
  provide: CONVERSATION_STATS,
  useExisting: PostgresConversationStats,
};

/** `GET /api/v1/sites/{siteId}/conversations/stats`. Import it before ConversationsModule (route order). */
@Module({
  imports: [SitesModule],
  controllers: [StatsController],
  providers: [PostgresConversationStats, statsEngineProvider, StatsService],
  exports: [CONVERSATION_STATS, PostgresConversationStats],
})
export class StatsModule {}
