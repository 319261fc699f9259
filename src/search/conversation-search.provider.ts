import { Logger, Provider } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { CONVERSATION_SEARCH, ConversationSearch } from './listing/conversation-search';
import { PostgresConversationSearch } from './postgres/postgres-conversation-search';
import { FallbackConversationSearch } from './fallback-conversation-search';
import { OpenSearchClients } from './opensearch/opensearch-clients';
import { OpenSearchConversationSearch } from './opensearch/opensearch-conversation-search';
import { SearchSyncForTests } from './testing/search-sync-for-tests';
import { SyncedConversationSearch } from './testing/synced-opensearch-problems';

/**
 * The `timeout` sent with each listing search: below the client's request timeout, so that
 * OpenSearch stops a slow search itself (answering timed_out, which falls back) rather than
 * keep working on a request the client has given up.
 */
export function serverTimeoutMs(requestTimeoutMs: number): number {
  return Math.max(25, Math.floor(requestTimeoutMs * 0.8));
}

/**
 * The listing's engine, chosen by SEARCH_BACKEND: `postgres` (default) or `opensearch`
 * (OPENSEARCH_URL, falling back to Postgres when OpenSearch fails); with SEARCH_SYNC_FOR_TESTS,
 * OpenSearch alone, synced before each search (testing/search-sync-for-tests.ts). The client is
 * the application's (OpenSearchClients), which closes it at shutdown.
 */
export const conversationSearchProvider: Provider = {
  provide: CONVERSATION_SEARCH,
  inject: [AppConfig, PostgresConversationSearch, OpenSearchClients, SearchSyncForTests],
  useFactory: (
    config: AppConfig,
    postgres: PostgresConversationSearch,
    clients: OpenSearchClients,
    syncForTests: SearchSyncForTests,
  ): ConversationSearch => {
    if (config.search.backend !== 'opensearch') return postgres;
    const { alias } = clients.names;
    if (syncForTests.enabled)
      return new SyncedConversationSearch(
        new OpenSearchConversationSearch(clients.search(), alias, syncForTests.siteSync({ refresh: true })),
        alias,
      );
    new Logger('ConversationSearch').log(
      `listing served by OpenSearch at ${config.search.opensearchUrl} (Postgres as fallback)`,
    );
    const opensearch = new OpenSearchConversationSearch(clients.search(), alias, undefined, {
      // Every hit is re-checked against Postgres: the mirror may lag the rows it describes.
      recheck: (siteId, filter, ids) => postgres.matching(siteId, filter, ids),
      serverTimeoutMs: serverTimeoutMs(config.search.timeoutMs),
    });
    return new FallbackConversationSearch(opensearch, postgres);
  },
};
