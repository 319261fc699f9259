import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../common/idempotency/idempotency.module';
import { EventsModule } from '../events/events.module';
import { LabelRecordsRepository } from '../labels/label-records.repository';
import { SearchModule } from '../search/search.module';
import { SitesModule } from '../sites/sites.module';
import { ViewsModule } from '../views/views.module';
import { ConversationEvents } from './conversation-events';
import { ConversationsController } from './conversations.controller';
import { ConversationsRepository } from './conversations.repository';
import { ConversationsService } from './conversations.service';
import { SeedService } from './seed/seed.service';

/**
 * Recording, listing and reading conversations. The listing engine (CONVERSATION_SEARCH) comes
 * from SearchModule: Postgres by default, or OpenSearch with Postgres as fallback.
 */
@Module({
  imports: [SitesModule, SearchModule, IdempotencyModule, EventsModule, ViewsModule],
  controllers: [ConversationsController],
  providers: [
    ConversationsRepository,
    ConversationsService,
    ConversationEvents,
    LabelRecordsRepository,
    SeedService,
  ],
  exports: [ConversationsService, ConversationsRepository, SearchModule],
})
export class ConversationsModule {}
