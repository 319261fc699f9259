import { Global, Module } from '@nestjs/common';
import { SearchOutboxModule } from '../search/mirror/search-outbox.module';
import { MetricsCollectors } from './metrics.collectors';
import { MetricsController } from './metrics.controller';
import { MetricsRepository } from './metrics.repository';
import { MetricsService } from './metrics.service';

/**
 * GET /metrics and the registry behind it. Global: any feature may inject MetricsService to add
 * its own counters (see metrics.service.ts).
 */
@Global()
@Module({
  imports: [SearchOutboxModule],
  controllers: [MetricsController],
  providers: [MetricsService, MetricsRepository, MetricsCollectors],
  exports: [MetricsService],
})
export class MetricsModule {}
