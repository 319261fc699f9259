import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../common/idempotency/idempotency.module';
import { EventsModule } from '../events/events.module';
import { SitesModule } from '../sites/sites.module';
import { WebhookDeliveryWorker } from './webhook-delivery.worker';
import { WebhookMessagesRepository } from './webhook-messages.repository';
import { WebhookSecrets } from './webhook-secrets';
import { WebhooksController } from './webhooks.controller';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';

/** The endpoints' signing secrets, sealed at rest: for the routes and the delivery workers. */
@Module({ providers: [WebhookSecrets], exports: [WebhookSecrets] })
export class WebhookSecretsModule {}

/** /api/v1/webhooks: endpoints, secrets, deliveries log, replay and test (analytics-v1 §4). */
@Module({
  imports: [SitesModule, IdempotencyModule, WebhookSecretsModule],
  controllers: [WebhooksController],
  providers: [WebhooksService, WebhooksRepository],
})
export class WebhooksModule {}

/** The dispatcher and delivery workers: registered only when WORKERS=on (backgroundModules). */
@Module({
  imports: [EventsModule, WebhookSecretsModule],
  providers: [WebhookMessagesRepository, WebhookDeliveryWorker],
})
export class WebhookDeliveryModule {}
