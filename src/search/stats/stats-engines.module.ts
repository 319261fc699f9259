import { Module } from '@nestjs/common';
import { OpenSearchClientsModule } from '../opensearch/opensearch-clients.module';
import { SearchSyncForTestsModule } from '../testing/search-sync-for-tests';
import { CONVERSATION_GROUPS } from './conversation-groups';
import { CONVERSATION_STATS } from './conversation-stats';
import { conversationStatsProvider } from './conversation-stats.provider';
import { MirrorWatermark } from './opensearch/mirror-watermark';
import { PostgresConversationStats } from './postgres/postgres-conversation-stats';
import { PostgresConversationGroups } from './postgres/stats-groups';
import { StatsRollupCompactor } from './postgres/stats-rollup-compactor';
import { StatsScanHelpers } from './postgres/stats-scan-helpers';

/**
 * The statistics engines, as SearchModule is the listing's: CONVERSATION_STATS follows
 * SEARCH_BACKEND (Postgres, exact from rollups and scans, by default; OpenSearch with Postgres as
 * its fallback), CONVERSATION_GROUPS (`by`: exact groups from PostgreSQL whatever the engine),
 * and the compactor of the Postgres engine's rollups. The endpoint is
 * src/stats/ (StatsModule).
 */
@Module({
  imports: [OpenSearchClientsModule, SearchSyncForTestsModule],
  providers: [
    MirrorWatermark,
    StatsScanHelpers,
    PostgresConversationStats,
    conversationStatsProvider(PostgresConversationStats),
    StatsRollupCompactor,
    { provide: CONVERSATION_GROUPS, useClass: PostgresConversationGroups },
  ],
  exports: [CONVERSATION_STATS, CONVERSATION_GROUPS, PostgresConversationStats, StatsRollupCompactor],
})
export class StatsEnginesModule {}
