import { Module } from '@nestjs/common';
import { SitesModule } from '../sites/sites.module';
import { CONVERSATION_STATS } from '../search/stats/conversation-stats';
import { conversationStatsProvider } from '../search/stats/conversation-stats.provider';
import { PostgresConversationStats } from '../search/stats/postgres/postgres-conversation-stats';
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
  providers: [PostgresConversationStats, conversationStatsProvider(PostgresConversationStats), StatsService],
  exports: [CONVERSATION_STATS, PostgresConversationStats],
})
export class StatsModule {}
