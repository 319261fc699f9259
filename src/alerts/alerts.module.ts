import { DynamicModule, Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit-log';
import { IdempotencyModule } from '../common/idempotency/idempotency.module';
import { AppConfig } from '../config/app-config';
import { EventsModule } from '../events/events.module';
import { StatsEnginesModule } from '../search/stats/stats-engines.module';
import { SitesModule } from '../sites/sites.module';
import { ViewsModule } from '../views/views.module';
import { AlertClock } from './alert-clock';
import { AlertEvaluationJobs } from './alert-evaluation-jobs';
import { AlertEvaluator } from './alert-evaluator';
import { AlertsController } from './alerts.controller';
import { AlertsRepository } from './alerts.repository';
import { AlertsService } from './alerts.service';

/**
 * Threshold alerts, `…/sites/{siteId}/alerts` (workflows-v1 §4), and their evaluator over the
 * statistics engines (run by AlertEvaluationModule on the workers).
 */
@Module({
  imports: [SitesModule, ViewsModule, AuditModule, IdempotencyModule, EventsModule, StatsEnginesModule],
  controllers: [AlertsController],
  providers: [AlertsService, AlertsRepository, AlertClock, AlertEvaluator],
  exports: [AlertEvaluator, AlertClock],
})
export class AlertsModule {}

/** The periodic evaluation of alerts: registered only when WORKERS=on. */
@Module({})
export class AlertEvaluationModule {
  static register(config: AppConfig): DynamicModule {
    if (!config.workers) return { module: AlertEvaluationModule };
    return { module: AlertEvaluationModule, imports: [AlertsModule], providers: [AlertEvaluationJobs] };
  }
}
