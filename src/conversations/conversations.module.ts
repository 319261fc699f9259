import { Module } from '@nestjs/common';
import { LabelsModule } from '../labels/labels.module';
import { SearchModule } from '../search/search.module';
import { SitesModule } from '../sites/sites.module';
import { ConversationsController } from './conversations.controller';
import { ConversationsRepository } from './conversations.repository';
import { ConversationsService } from './conversations.service';
import { IdempotencyService } from './idempotency.service';
import { SeedService } from './seed/seed.service';

/**
 * Recording, listing and reading conversations. The listing engine (CONVERSATION_SEARCH) comes
 * from SearchModule: Postgres by default, or OpenSearch with Postgres as fallback.
 */
@Module({
  imports: [SitesModule, LabelsModule, SearchModule],
  controllers: [ConversationsController],
  providers: [ConversationsRepository, ConversationsService, IdempotencyService, SeedService],
  exports: [ConversationsService, ConversationsRepository, SearchModule],
})
export class ConversationsModule {}
