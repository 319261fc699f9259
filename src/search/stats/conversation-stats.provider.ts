import { Logger, Provider, Type } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { serverTimeoutMs } from '../conversation-search.provider';
import { OpenSearchClients } from '../opensearch/opensearch-clients';
import { SearchSyncForTests } from '../testing/search-sync-for-tests';
import { SyncedConversationStats } from '../testing/synced-opensearch-problems';
import type { ExactMetrics } from './commerce-metrics';
import { CONVERSATION_STATS, ConversationStatsEngine, ExactPercentiles } from './conversation-stats';
import { FallbackConversationStats } from './opensearch/fallback-conversation-stats';
import { MirrorWatermark } from './opensearch/mirror-watermark';
import { OpenSearchConversationStats } from './opensearch/opensearch-conversation-stats';

/** Stats requests within this long of the engine's last index refresh reuse it (docs/statistics.md). */
export const REUSE_REFRESH_MS = 1000;

/**
 * The stats engine, chosen by SEARCH_BACKEND as the listing's is: `postgres` (default) or
 * `opensearch` (OPENSEARCH_URL, falling back to Postgres when OpenSearch fails); with
 * SEARCH_SYNC_FOR_TESTS, OpenSearch alone, synced before each request
 * (../testing/search-sync-for-tests.ts). The client is the application's (OpenSearchClients).
 *
 * The OpenSearch engine reads exact percentiles and the commerce metrics from the Postgres engine.
 *
 * `postgresEngine` is the Postgres engine's class (PostgresConversationStats), registered as a
 * provider of the same module: `providers: [PostgresConversationStats,
 * conversationStatsProvider(PostgresConversationStats)]`.
 */
export const conversationStatsProvider = (
  postgresEngine: Type<ConversationStatsEngine & ExactPercentiles & ExactMetrics>,
): Provider => ({
  provide: CONVERSATION_STATS,
  inject: [AppConfig, postgresEngine, MirrorWatermark, OpenSearchClients, SearchSyncForTests],
  useFactory: (
    config: AppConfig,
    postgres: ConversationStatsEngine & ExactPercentiles & ExactMetrics,
    watermark: MirrorWatermark,
    clients: OpenSearchClients,
    syncForTests: SearchSyncForTests,
  ): ConversationStatsEngine => {
    if (config.search.backend !== 'opensearch') return postgres;
    const { alias } = clients.names;
    if (syncForTests.enabled)
      return new SyncedConversationStats(
        // The mirror's client (OPENSEARCH_BULK_TIMEOUT_MS): each synced request refreshes the
        // index, which under a drain's bulks and other requests' refreshes can outlast
        // OPENSEARCH_TIMEOUT_MS (2 s by default) with no fallback to answer instead.
        new OpenSearchConversationStats(
          clients.bulk(),
          watermark,
          alias,
          syncForTests.siteSync({ refresh: false }),
          0,
          0,
          postgres,
          postgres,
        ),
        alias,
      );
    new Logger('ConversationStats').log(
      `stats served by OpenSearch at ${config.search.opensearchUrl} (Postgres as fallback)`,
    );
    return new FallbackConversationStats(
      new OpenSearchConversationStats(
        clients.search(),
        watermark,
        alias,
        undefined,
        REUSE_REFRESH_MS,
        serverTimeoutMs(config.search.timeoutMs),
        postgres,
        postgres,
      ),
      postgres,
    );
  },
});
