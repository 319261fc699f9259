import { Logger, Provider } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { CONVERSATION_SEARCH, ConversationSearch } from './listing/conversation-search';
import { PostgresConversationSearch } from './postgres/postgres-conversation-search';
import { FallbackConversationSearch } from './fallback-conversation-search';
import { CONVERSATIONS_ALIAS, createOpenSearchClient } from './opensearch/opensearch-client';
import { OpenSearchConversationSearch } from './opensearch/opensearch-conversation-search';

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
    const opensearch = new OpenSearchConversationSearch(client, CONVERSATIONS_ALIAS, undefined, {
      // Every hit is re-checked against Postgres: the mirror may lag the rows it describes.
      recheck: (siteId, filter, ids) => postgres.matching(siteId, filter, ids),
      serverTimeoutMs: serverTimeoutMs(config.search.timeoutMs),
    });
    return new FallbackConversationSearch(opensearch, postgres).closingWith(() => client.close());
  },
};
