import { DynamicModule, Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit-log';
import { IdempotencyModule } from '../common/idempotency/idempotency.module';
import { AppConfig } from '../config/app-config';
import { SitesModule } from '../sites/sites.module';
import { ViewsModule } from '../views/views.module';
import { DeletionWorker } from './deletion-worker';
import { DeletionsController } from './deletions.controller';
import { DeletionsRepository } from './deletions.repository';
import { DeletionsService } from './deletions.service';
import { RetentionSweep } from './retention-sweep';

/**
 * Deletion jobs and retention (workflows-v1 §3; docs/data-lifecycle.md). The worker and the
 * retention sweep run only when WORKERS=on. Import it before ConversationsModule (route order).
 */
@Module({})
export class DeletionsModule {
  static register(_config: AppConfig): DynamicModule {
    return {
      module: DeletionsModule,
      imports: [SitesModule, ViewsModule, AuditModule, IdempotencyModule],
      controllers: [DeletionsController],
      // The worker and the sweep start their timers only when WORKERS=on (tests drive them by hand).
      providers: [DeletionsRepository, DeletionsService, DeletionWorker, RetentionSweep],
      exports: [DeletionsService, DeletionWorker, RetentionSweep],
    };
  }
}
