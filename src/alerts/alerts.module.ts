import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit-log';
import { IdempotencyModule } from '../common/idempotency/idempotency.module';
import { EventsModule } from '../events/events.module';
import { StatsEnginesModule } from '../search/stats/stats-engines.module';
import { SitesModule } from '../sites/sites.module';
import { ViewsModule } from '../views/views.module';
import { AlertClock } from './alert-clock';
import { AlertsController } from './alerts.controller';
import { AlertEvaluationJobs } from './alert-evaluation-jobs';
import { AlertEvaluator } from './alert-evaluator';
import { AlertsRepository } from './alerts.repository';
import { AlertsService } from './alerts.service';

/**
 * Threshold alerts (workflows-v1 §4) and their evaluator over the statistics engines; their
 * routes, `…/sites/{siteId}/alerts`, are AlertsRoutesModule, their periodic evaluation on the
 * workers AlertEvaluationModule.
 */
@Module({
  imports: [SitesModule, ViewsModule, AuditModule, IdempotencyModule, EventsModule, StatsEnginesModule],
  providers: [AlertsService, AlertsRepository, AlertClock, AlertEvaluator],
  exports: [AlertsService, AlertEvaluator, AlertClock],
})
export class AlertsModule {}

/** `…/sites/{siteId}/alerts` (the HTTP app only). */
@Module({ imports: [AlertsModule, IdempotencyModule], controllers: [AlertsController] })
export class AlertsRoutesModule {}

/** The periodic evaluation of alerts: registered only when WORKERS=on (backgroundModules). */
@Module({ imports: [AlertsModule], providers: [AlertEvaluationJobs] })
export class AlertEvaluationModule {}
