import { Module } from '@nestjs/common';
import { AttributionModule } from '../../orders/orders.module';
import { OrderSeeder } from '../../orders/order-seeder';
import { SeedService } from './seed.service';

/** The seed command's service (SeedService), in the CLI and beside the conversations it writes. */
@Module({ imports: [AttributionModule], providers: [SeedService, OrderSeeder], exports: [SeedService] })
export class SeedModule {}
