import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit-log';
import { EventsModule } from '../events/events.module';
import { SitesModule } from '../sites/sites.module';
import { AttributionSweep } from './attribution-sweep';
import { OrderAttribution } from './order-attribution';
import { OrderRetention } from './order-retention';
import { OrdersController } from './orders.controller';
import { OrdersRepository } from './orders.repository';
import { OrdersService } from './orders.service';
import { VisitorIdHasher } from './visitor-id';

/**
 * Attribution (outcomes-v1 §2) and the visitor id hash: what recording and deleting
 * conversations call in their transactions, and what the orders use.
 */
@Module({
  imports: [EventsModule],
  providers: [OrderAttribution, VisitorIdHasher, OrdersRepository],
  exports: [OrderAttribution, VisitorIdHasher, OrdersRepository],
})
export class AttributionModule {}

/** Orders (outcomes-v1 §1); their routes are OrdersRoutesModule, their background work OrderWorkModule. */
@Module({
  imports: [AttributionModule, SitesModule, EventsModule, AuditModule],
  providers: [OrdersService],
  exports: [OrdersService],
})
export class OrdersModule {}

/** `…/sites/{siteId}/orders` (the HTTP app only). */
@Module({ imports: [OrdersModule], controllers: [OrdersController] })
export class OrdersRoutesModule {}

/** The window sweep and the orders' retention: registered only when WORKERS=on (backgroundModules). */
@Module({ imports: [OrdersModule, AttributionModule], providers: [AttributionSweep, OrderRetention] })
export class OrderWorkModule {}
