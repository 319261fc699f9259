import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit-log';
import { IdempotencyModule } from '../common/idempotency/idempotency.module';
import { SitesModule } from '../sites/sites.module';
import { ViewsController } from './views.controller';
import { ViewsRepository } from './views.repository';
import { ViewsService } from './views.service';

/**
 * Saved views, `…/sites/{siteId}/views` (workflows-v1 §4). ViewsService#resolve and
 * combineWithView (view-combination.ts) are what the routes taking `view=` use.
 */
@Module({
  imports: [SitesModule, AuditModule, IdempotencyModule],
  controllers: [ViewsController],
  providers: [ViewsService, ViewsRepository],
  exports: [ViewsService],
})
export class ViewsModule {}
