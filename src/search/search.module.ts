import { Module } from '@nestjs/common';
import { CONVERSATION_SEARCH } from './listing/conversation-search';
import { conversationSearchProvider } from './conversation-search.provider';
import { PostgresConversationSearch } from './postgres/postgres-conversation-search';

/**
 * The listing engine: CONVERSATION_SEARCH is the Postgres engine, or OpenSearch with Postgres
 * as fallback when SEARCH_BACKEND=opensearch (README, "Search backends").
 */
@Module({
  providers: [PostgresConversationSearch, conversationSearchProvider],
  exports: [CONVERSATION_SEARCH],
})
export class SearchModule {}
