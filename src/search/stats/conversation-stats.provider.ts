import { Logger, OnApplicationShutdown, Provider, Type } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { SearchIndexer } from '../mirror/search-indexer.service';
import { SearchOutboxRepository } from '../mirror/search-outbox.repository';
import { createOpenSearchClient } from '../opensearch/opensearch-client';
import { CONVERSATION_STATS, ConversationStatsEngine } from './conversation-stats';
import { FallbackConversationStats } from './opensearch/fallback-conversation-stats';
import { MirrorWatermark } from './opensearch/mirror-watermark';
import { OpenSearchConversationStats } from './opensearch/opensearch-conversation-stats';

/** FallbackConversationStats that closes its OpenSearch client when the app stops. */
class ClosingFallbackStats extends FallbackConversationStats implements OnApplicationShutdown {
  constructor(
    primary: ConversationStatsEngine,
    fallback: ConversationStatsEngine,
    private readonly close: () => Promise<void>,
  ) {
    super(primary, fallback);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}

/** SEARCH_SYNC_FOR_TESTS: OpenSearch only (no fallback), each request sees every committed write. */
class SyncedOpenSearchStatsForTests extends OpenSearchConversationStats implements OnApplicationShutdown {
  constructor(
    private readonly clients: Array<{ close(): Promise<void> }>,
    ...args: ConstructorParameters<typeof OpenSearchConversationStats>
  ) {
    super(...args);
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled(this.clients.map((c) => c.close()));
  }
}

/**
 * The stats engine, chosen by SEARCH_BACKEND as the listing's is: `postgres` (default) or
 * `opensearch` (OPENSEARCH_URL, falling back to Postgres when OpenSearch fails). With
 * SEARCH_SYNC_FOR_TESTS each request first drains the site's outbox (the engine refreshes the
 * index itself) and nothing falls back, so a parity run cannot pass through Postgres.
 *
 * `postgresEngine` is the Postgres engine's class (PostgresConversationStats), registered as a
 * provider of the same module: `providers: [PostgresConversationStats,
 * conversationStatsProvider(PostgresConversationStats)]`.
 */
export const conversationStatsProvider = (postgresEngine: Type<ConversationStatsEngine>): Provider => ({
  provide: CONVERSATION_STATS,
  inject: [AppConfig, postgresEngine, DataSource],
  useFactory: (
    config: AppConfig,
    postgres: ConversationStatsEngine,
    dataSource: DataSource,
  ): ConversationStatsEngine => {
    if (config.search.backend !== 'opensearch') return postgres;
    const client = createOpenSearchClient(config.search.opensearchUrl!, config.search.timeoutMs);
    const watermark = new MirrorWatermark(dataSource);
    if (config.search.syncForTests) {
      const bulk = createOpenSearchClient(config.search.opensearchUrl!, config.search.bulkTimeoutMs);
      const indexer = new SearchIndexer(dataSource, new SearchOutboxRepository(dataSource), bulk);
      const drainSite = async (siteId: string) => {
        // Until none of the site's rows is due (rows postponed after an error are not: the
        // watermark then stays behind them).
        let result;
        do result = await indexer.drain(20, siteId);
        while (result.taken > 0 && result.targets.length > 0);
      };
      // Serialized: two drains splitting the rows (SKIP LOCKED) could let one request read
      // before the other's rows are written.
      let chain: Promise<void> = Promise.resolve();
      const drain = (siteId: string) => (chain = chain.catch(() => undefined).then(() => drainSite(siteId)));
      return new SyncedOpenSearchStatsForTests([client, bulk], client, watermark, undefined, drain);
    }
    new Logger('ConversationStats').log(
      `stats served by OpenSearch at ${config.search.opensearchUrl} (Postgres as fallback)`,
    );
    return new ClosingFallbackStats(new OpenSearchConversationStats(client, watermark), postgres, () =>
      client.close(),
    );
  },
});
