import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../common/idempotency/idempotency.module';
import { LabelRecordsModule } from '../labels/label-records.module';
import { SearchModule } from '../search/search.module';
import { SitesModule } from '../sites/sites.module';
import { ViewsModule } from '../views/views.module';
import { AuditModule } from '../audit/audit-log';
import { AttributionModule } from '../orders/orders.module';
import { ConversationEventsModule } from './conversation-events.module';
import { ConversationLifecycle } from './conversation-lifecycle';
import { ConversationRemovalModule } from './conversation-removal.module';
import { ConversationsController } from './conversations.controller';
import { ConversationsRepository } from './conversations.repository';
import { ConversationListing } from './conversation-listing.service';
import { ConversationsService } from './conversations.service';
import { SeedModule } from './seed/seed.module';
import { TranscriptTextsRepository } from './transcript-texts.repository';

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
    AuditModule,
    ConversationRemovalModule,
    AttributionModule,
  ],
  controllers: [ConversationsController],
  providers: [
    ConversationsRepository,
    ConversationsService,
    ConversationListing,
    ConversationLifecycle,
    TranscriptTextsRepository,
  ],
  exports: [ConversationsService, ConversationsRepository, SearchModule],
})
export class ConversationsModule {}
