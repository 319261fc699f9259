import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit-log';
import { IdempotencyModule } from '../common/idempotency/idempotency.module';
import { ConversationEvents } from '../conversations/conversation-events';
import { EventsModule } from '../events/events.module';
import { LabelRecordsRepository } from '../labels/label-records.repository';
import { SitesModule } from '../sites/sites.module';
import { ViewsModule } from '../views/views.module';
import { ReviewSampler } from './review-sample';
import { ReviewsController } from './reviews.controller';
import { ReviewsRepository } from './reviews.repository';
import { ReviewsService } from './reviews.service';

/**
 * Label reviews (workflows-v1 §2): `…/conversations/{id}/review` and `…/conversations/review-sample`.
 * Import it before ConversationsModule (route order).
 */
@Module({
  imports: [SitesModule, AuditModule, IdempotencyModule, EventsModule, ViewsModule],
  controllers: [ReviewsController],
  providers: [ReviewsService, ReviewsRepository, ReviewSampler, LabelRecordsRepository, ConversationEvents],
})
export class ReviewsModule {}
