import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../common/idempotency/idempotency.module';
import { LabelRecordsModule } from '../labels/label-records.module';
import { SearchModule } from '../search/search.module';
import { SitesModule } from '../sites/sites.module';
import { ViewsModule } from '../views/views.module';
import { ConversationEventsModule } from './conversation-events.module';
import { ConversationsController } from './conversations.controller';
import { ConversationsRepository } from './conversations.repository';
import { ConversationsService } from './conversations.service';
import { SeedModule } from './seed/seed.module';

/**
 * Recording, listing and reading conversations. The listing engine (CONVERSATION_SEARCH) comes
 * from SearchModule: Postgres by default, or OpenSearch with Postgres as fallback.
 */
@Module({
  imports: [
    SitesModule,
    SearchModule,
    IdempotencyModule,
    ConversationEventsModule,
    LabelRecordsModule,
    ViewsModule,
    SeedModule,
  ],
  controllers: [ConversationsController],
  providers: [ConversationsRepository, ConversationsService],
  exports: [ConversationsService, ConversationsRepository, SearchModule],
})
export class ConversationsModule {}
