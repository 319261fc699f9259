import { Module } from '@nestjs/common';
import { OpenSearchClientsModule } from '../opensearch/opensearch-clients.module';
import { SearchSyncForTestsModule } from '../testing/search-sync-for-tests';
import { CONVERSATION_STATS } from './conversation-stats';
import { conversationStatsProvider } from './conversation-stats.provider';
import { MirrorWatermark } from './opensearch/mirror-watermark';
import { PostgresConversationStats } from './postgres/postgres-conversation-stats';
import { StatsRollupCompactor } from './postgres/stats-rollup-compactor';
import { StatsScanHelpers } from './postgres/stats-scan-helpers';

/**
 * The statistics engines, as SearchModule is the listing's: CONVERSATION_STATS follows
 * SEARCH_BACKEND (Postgres, exact from rollups and scans, by default; OpenSearch with Postgres as
 * its fallback), and the compactor of the Postgres engine's rollups. The endpoint is
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
  ],
  exports: [CONVERSATION_STATS, PostgresConversationStats, StatsRollupCompactor],
})
export class StatsEnginesModule {}
