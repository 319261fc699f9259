import { Logger, Provider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { CONVERSATION_SEARCH, ConversationSearch } from './listing/conversation-search';
import { PostgresConversationSearch } from './postgres/postgres-conversation-search';
import { FallbackConversationSearch } from './fallback-conversation-search';
import { createOpenSearchClient, indexNames } from './opensearch/opensearch-client';
import { OpenSearchConversationSearch } from './opensearch/opensearch-conversation-search';
import { syncedOpenSearch, wantsSyncedOpenSearch } from './synced-for-tests';

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
 * OpenSearch alone, synced before each search (synced-for-tests.ts).
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
    if (wantsSyncedOpenSearch(config)) return syncedOpenSearch(config, dataSource);
    const client = createOpenSearchClient(config.search.opensearchUrl!, config.search.timeoutMs);
    new Logger('ConversationSearch').log(
      `listing served by OpenSearch at ${config.search.opensearchUrl} (Postgres as fallback)`,
    );
    const opensearch = new OpenSearchConversationSearch(
      client,
      indexNames(config.search.index).alias,
      undefined,
      {
        // Every hit is re-checked against Postgres: the mirror may lag the rows it describes.
        recheck: (siteId, filter, ids) => postgres.matching(siteId, filter, ids),
        serverTimeoutMs: serverTimeoutMs(config.search.timeoutMs),
      },
    );
    return new FallbackConversationSearch(opensearch, postgres).closingWith(() => client.close());
  },
};
