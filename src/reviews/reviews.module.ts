import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit-log';
import { IdempotencyModule } from '../common/idempotency/idempotency.module';
import { ConversationEventsModule } from '../conversations/conversation-events.module';
import { LabelRecordsModule } from '../labels/label-records.module';
import { SitesModule } from '../sites/sites.module';
import { ViewsModule } from '../views/views.module';
import { ReviewSampler } from './review-sample';
import { ReviewSampleRepository } from './review-sample.repository';
import { ReviewsController } from './reviews.controller';
import { ReviewsRepository } from './reviews.repository';
import { ReviewsService } from './reviews.service';

/**
 * Label reviews (workflows-v1 §2): `…/conversations/{id}/review` and `…/conversations/review-sample`.
 * Import it before ConversationsModule (route order).
 */
@Module({
  imports: [
    SitesModule,
    AuditModule,
    IdempotencyModule,
    ConversationEventsModule,
    LabelRecordsModule,
    ViewsModule,
  ],
  controllers: [ReviewsController],
  providers: [ReviewsService, ReviewsRepository, ReviewSampler, ReviewSampleRepository],
})
export class ReviewsModule {}
