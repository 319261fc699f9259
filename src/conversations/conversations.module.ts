import { Module } from '@nestjs/common';
import { LabelsModule } from '../labels/labels.module';
import { SitesModule } from '../sites/sites.module';
import { ConversationsController } from './conversations.controller';
import { ConversationsRepository } from './conversations.repository';
import { ConversationsService } from './conversations.service';
import { IdempotencyService } from './idempotency.service';
import { CONVERSATION_SEARCH } from './search/conversation-search';
import { PostgresConversationSearch } from './search/postgres/postgres-conversation-search';
import { SeedService } from './seed/seed.service';

/** Recording, listing and reading conversations. The search backend is behind CONVERSATION_SEARCH. */
@Module({
  imports: [SitesModule, LabelsModule],
  controllers: [ConversationsController],
  providers: [
    ConversationsRepository,
    ConversationsService,
    IdempotencyService,
    PostgresConversationSearch,
    SeedService,
    { provide: CONVERSATION_SEARCH, useExisting: PostgresConversationSearch },
  ],
  exports: [ConversationsService, ConversationsRepository, CONVERSATION_SEARCH],
})
export class ConversationsModule {}
