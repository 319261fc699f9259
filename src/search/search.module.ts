import { Module } from '@nestjs/common';
import { CONVERSATION_SEARCH } from './listing/conversation-search';
import { conversationSearchProvider } from './conversation-search.provider';
import { OpenSearchClientsModule } from './opensearch/opensearch-clients.module';
import { PostgresListingModule } from './postgres/postgres-listing.module';
import { SearchSyncForTestsModule } from './testing/search-sync-for-tests';

/**
 * The listing engine: CONVERSATION_SEARCH is the Postgres engine, or OpenSearch with Postgres
 * as fallback when SEARCH_BACKEND=opensearch (README, "Search backends").
 */
@Module({
  imports: [PostgresListingModule, OpenSearchClientsModule, SearchSyncForTestsModule],
  providers: [conversationSearchProvider],
  exports: [CONVERSATION_SEARCH],
})
export class SearchModule {}
