import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { ApiKeyGuard } from './auth/api-key.guard';
import { AuthModule } from './auth/auth.module';
import { CommonModule } from './common/common.module';
import { ProblemFilter } from './common/errors/problem.filter';
import { LoggingModule } from './common/logging/logging.module';
import { AppConfig } from './config/app-config';
import { workersOnly } from './common/process/workers-only';
import { ConfigModule } from './config/config.module';
import { DeletionsModule, DeletionsRoutesModule } from './deletions/deletions.module';
import { DatabaseModule } from './database/database.module';
import { ErrorsPageController } from './docs/errors-page.controller';
import { EventFeedJobsModule, EventsRoutesModule } from './events/events.module';
import { ExportsRoutesModule, ExportWorkModule } from './exports/exports.module';
import { HealthModule } from './health/health.module';
import { OrganizationsModule } from './organizations/organizations.module';
import { PageImportWorkModule, PagesRoutesModule } from './pages/pages.module';
import { QueueModule } from './queue/queue.module';
import { RateLimitGuard } from './rate-limit/rate-limit.guard';
import { RateLimitModule } from './rate-limit/rate-limit.module';
import { RedisModule } from './redis/redis.module';
import { ReviewsModule } from './reviews/reviews.module';
import { ConversationsModule } from './conversations/conversations.module';
import { LabelingQueueModule } from './labeling/labeling-queue.module';
import { LabelsModule, LabelsRoutesModule } from './labeling/labels.module';
import { MetricsModule } from './metrics/metrics.module';
import { SearchMirrorModule } from './search/search-mirror.module';
import { SitesRoutesModule } from './sites/sites.module';
import { StatsModule, StatsRollupJobsModule } from './stats/stats.module';
import { WebhookDeliveryModule, WebhooksModule } from './webhooks/webhooks.module';
import { AlertEvaluationModule, AlertsRoutesModule } from './alerts/alerts.module';
import { ViewsRoutesModule } from './views/views.module';
import { OrderWorkModule, OrdersRoutesModule } from './orders/orders.module';

/** Infrastructure every process (HTTP server, worker, CLI) shares. */
export function infrastructureModules(config: AppConfig) {
  return [
    ConfigModule.forConfig(config),
    LoggingModule.forConfig(config),
    CommonModule,
    DatabaseModule,
    RedisModule,
    QueueModule,
  ];
}

/**
 * The background work, without routes: the work modules (processors, periodic jobs) are
 * registered only when WORKERS=on. The HTTP app and the worker entry point
 * (src/worker.module.ts) both run it.
 */
export function backgroundModules(config: AppConfig) {
  // The search mirror also serves /metrics and switches the outbox on; its drain job runs with WORKERS=on.
  return [
    LabelingQueueModule.register(config),
    ...workersOnly(config, PageImportWorkModule),
    SearchMirrorModule.register(config),
    ...workersOnly(
      config,
      EventFeedJobsModule,
      StatsRollupJobsModule,
      ExportWorkModule,
      WebhookDeliveryModule,
      AlertEvaluationModule,
      OrderWorkModule,
    ),
    // The deletion worker and the retention sweep start their timers only when WORKERS=on.
    DeletionsModule,
  ];
}

@Module({})
export class AppModule {
  static register(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ...infrastructureModules(config),
        RateLimitModule,
        AuthModule,
        HealthModule,
        // Before ConversationsModule: …/conversations/exports must not be read as a conversation id.
        ExportsRoutesModule,
        // Before ConversationsModule: …/conversations/deletions must not be read as a conversation id.
        DeletionsRoutesModule,
        MetricsModule,
        SitesRoutesModule,
        OrganizationsModule,
        LabelsRoutesModule,
        // The label writer, in every process (the labeling process imports it too).
        LabelsModule,
        // Before ConversationsModule: its GET …/conversations/:id would otherwise take `stats`.
        StatsModule,
        // Before ConversationsModule: …/conversations/review-sample must not be read as an id.
        ReviewsModule,
        ConversationsModule,
        EventsRoutesModule,
        WebhooksModule,
        ViewsRoutesModule,
        AlertsRoutesModule,
        OrdersRoutesModule,
        PagesRoutesModule,
        ...backgroundModules(config),
      ],
      controllers: [ErrorsPageController],
      providers: [
        // Guards run in this order: rate limits before the key is validated.
        { provide: APP_GUARD, useClass: RateLimitGuard },
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        { provide: APP_FILTER, useClass: ProblemFilter },
      ],
    };
  }
}
