import { Logger, OnApplicationShutdown, Provider } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { CONVERSATION_SEARCH, ConversationSearch } from './listing/conversation-search';
import { PostgresConversationSearch } from './postgres/postgres-conversation-search';
import { FallbackConversationSearch } from './fallback-conversation-search';
import { createOpenSearchClient } from './opensearch/opensearch-client';
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

/**
 * The listing's engine, chosen by SEARCH_BACKEND: `postgres` (default) or `opensearch`
 * (OPENSEARCH_URL, falling back to Postgres when OpenSearch fails). The test app replaces it
 * when SEARCH_SYNC_FOR_TESTS is set (test/setup/synced-opensearch.ts).
 */
export const conversationSearchProvider: Provider = {
  provide: CONVERSATION_SEARCH,
  inject: [AppConfig, PostgresConversationSearch],
  useFactory: (config: AppConfig, postgres: PostgresConversationSearch): ConversationSearch => {
    if (config.search.backend !== 'opensearch') return postgres;
    const client = createOpenSearchClient(config.search.opensearchUrl!, config.search.timeoutMs);
    new Logger('ConversationSearch').log(
      `listing served by OpenSearch at ${config.search.opensearchUrl} (Postgres as fallback)`,
    );
    return new ClosingFallbackSearch(new OpenSearchConversationSearch(client), postgres, () =>
      client.close(),
    );
  },
};
