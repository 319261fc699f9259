import { Module } from '@nestjs/common';
import { CONVERSATION_SEARCH } from './listing/conversation-search';
import { conversationSearchProvider } from './conversation-search.provider';
import { PostgresListingModule } from './postgres/postgres-listing.module';

/**
 * The listing engine: CONVERSATION_SEARCH is the Postgres engine, or OpenSearch with Postgres
 * as fallback when SEARCH_BACKEND=opensearch (README, "Search backends").
 */
@Module({
  imports: [PostgresListingModule],
  providers: [conversationSearchProvider],
  exports: [CONVERSATION_SEARCH],
})
export class SearchModule {}
