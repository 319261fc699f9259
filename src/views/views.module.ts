import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit-log';
import { IdempotencyModule } from '../common/idempotency/idempotency.module';
import { SitesModule } from '../sites/sites.module';
import { ViewsRepository } from './views.repository';
import { ViewsService } from './views.service';
import { ViewsController } from './views.controller';

/**
 * Saved views (workflows-v1 §4). ViewsService#resolve and combineWithView (view-combination.ts)
 * are what the routes taking `view=` use; the views' own routes are ViewsRoutesModule.
 */
@Module({
  imports: [SitesModule, AuditModule, IdempotencyModule],
  providers: [ViewsService, ViewsRepository],
  exports: [ViewsService],
})
export class ViewsModule {}

/** `…/sites/{siteId}/views` (the HTTP app only). */
@Module({ imports: [ViewsModule, IdempotencyModule], controllers: [ViewsController] })
export class ViewsRoutesModule {}
