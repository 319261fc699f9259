import { Logger, OnApplicationShutdown, Provider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { CONVERSATION_SEARCH, ConversationSearch } from '../conversations/search/conversation-search';
import { PostgresConversationSearch } from '../conversations/search/postgres/postgres-conversation-search';
import { FallbackConversationSearch } from './fallback-conversation-search';
import { SearchIndexer } from './mirror/search-indexer.service';
import { SearchOutboxRepository } from './mirror/search-outbox.repository';
import { CONVERSATIONS_ALIAS, createOpenSearchClient } from './opensearch/opensearch-client';
import { OpenSearchConversationSearch } from './opensearch/opensearch-conversation-search';

/** FallbackConversationSearch that closes its OpenSearch client when the app stops. */
class ClosingFallbackSearch extends FallbackConversationSearch implements OnApplicationShutdown {
  constructor(
    primary: ConversationSearch,
    fallback: ConversationSearch,
    private readonly close: () => Promise<void>,
  ) {
    super(primary, fallback);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}

/** SEARCH_SYNC_FOR_TESTS: OpenSearch only (no fallback), each search sees every committed write. */
class SyncedOpenSearchForTests extends OpenSearchConversationSearch implements OnApplicationShutdown {
  constructor(
    private readonly clients: Array<{ close(): Promise<void> }>,
    ...args: ConstructorParameters<typeof OpenSearchConversationSearch>
  ) {
    super(...args);
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled(this.clients.map((c) => c.close()));
  }
}

/**
 * The listing's engine, chosen by SEARCH_BACKEND: `postgres` (default) or `opensearch`
 * (OPENSEARCH_URL, falling back to Postgres when OpenSearch fails).
 */
export const conversationSearchProvider: Provider = {
  provide: CONVERSATION_SEARCH,
  inject: [AppConfig, PostgresConversationSearch, DataSource],
  useFactory: (
    config: AppConfig,
    postgres: PostgresConversationSearch,
    dataSource: DataSource,
  ): ConversationSearch => {
    if (config.search.backend !== 'opensearch') return postgres;
    const client = createOpenSearchClient(config.search.opensearchUrl!, config.search.timeoutMs);
    if (config.search.syncForTests) {
      const bulk = createOpenSearchClient(config.search.opensearchUrl!, config.search.bulkTimeoutMs);
      const indexer = new SearchIndexer(dataSource, new SearchOutboxRepository(dataSource), bulk);
      // Serialized: the listing runs page and count at once, and two drains splitting the rows
      // (SKIP LOCKED) could let one search start before the other's rows are written.
      let chain: Promise<void> = Promise.resolve();
      const drainAndRefresh = async (siteId: string) => {
        // Until none of the site's rows is due (rows postponed after an error are not: the
        // search then misses them and the parity test fails, as it should).
        let result;
        do result = await indexer.drain(20, siteId);
        while (result.taken > 0 && result.targets.length > 0);
        await bulk.indices.refresh({ index: CONVERSATIONS_ALIAS });
      };
      const sync = (siteId: string) =>
        (chain = chain.catch(() => undefined).then(() => drainAndRefresh(siteId)));
      return new SyncedOpenSearchForTests([client, bulk], client, CONVERSATIONS_ALIAS, sync);
    }
    new Logger('ConversationSearch').log(
      `listing served by OpenSearch at ${config.search.opensearchUrl} (Postgres as fallback)`,
    );
    return new ClosingFallbackSearch(new OpenSearchConversationSearch(client), postgres, () =>
      client.close(),
    );
  },
};
