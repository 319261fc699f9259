import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../common/idempotency/idempotency.module';
import { LabelsModule } from '../labels/labels.module';
import { SitesModule } from '../sites/sites.module';
import { ConversationsController } from './conversations.controller';
import { ConversationsRepository } from './conversations.repository';
import { ConversationsService } from './conversations.service';
import { CONVERSATION_SEARCH } from './search/conversation-search';
import { PostgresConversationSearch } from './search/postgres/postgres-conversation-search';
import { SeedService } from './seed/seed.service';
import { conversationSearchProvider } from '../search/conversation-search.provider';

/** Recording, listing and reading conversations. The search backend is behind CONVERSATION_SEARCH. */
@Module({
  imports: [SitesModule, LabelsModule, IdempotencyModule],
  controllers: [ConversationsController],
  providers: [
    ConversationsRepository,
    ConversationsService,
    PostgresConversationSearch,
    SeedService,
    // SEARCH_BACKEND: Postgres (default) or OpenSearch with Postgres as fallback (issue 7).
    conversationSearchProvider,
  ],
  exports: [ConversationsService, ConversationsRepository, CONVERSATION_SEARCH],
})
export class ConversationsModule {}
