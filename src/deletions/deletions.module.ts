import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit-log';
import { IdempotencyModule } from '../common/idempotency/idempotency.module';
import { ConversationRemovalModule } from '../conversations/conversation-removal.module';
import { SitesModule } from '../sites/sites.module';
import { ViewsModule } from '../views/views.module';
import { DeletionWorker } from './deletion-worker';
import { DeletionsController } from './deletions.controller';
import { DeletionsRepository } from './deletions.repository';
import { DeletionsService } from './deletions.service';
import { RetentionSweep } from './retention-sweep';

/**
 * Deletion jobs and retention (workflows-v1 §3; docs/data-lifecycle.md), in every process; the
 * routes are DeletionsRoutesModule.
 */
@Module({
  imports: [SitesModule, ViewsModule, AuditModule, IdempotencyModule, ConversationRemovalModule],
  // The worker and the sweep start their timers only when WORKERS=on (tests drive them by hand).
  providers: [DeletionsRepository, DeletionsService, DeletionWorker, RetentionSweep],
  exports: [DeletionsService, DeletionWorker, RetentionSweep],
})
export class DeletionsModule {}

/**
 * `…/sites/{siteId}/conversations/deletions` (the HTTP app only). Import it before
 * ConversationsModule (route order).
 */
@Module({ imports: [DeletionsModule, IdempotencyModule], controllers: [DeletionsController] })
export class DeletionsRoutesModule {}
