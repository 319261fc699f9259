import { Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';
import { MetricsService } from './metrics.service';
import { QueueMetrics } from './queue-metrics';

/**
 * GET /metrics, the registry behind it (with the process metrics; the HTTP durations are
 * http-metrics.middleware.ts) and the depths and job outcomes of the queues features observe.
 * Global: each feature registers its own metrics from a collector of its folder, injecting
 * MetricsService and QueueMetrics (see metrics.service.ts); this module imports no feature.
 */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [MetricsService, QueueMetrics],
  exports: [MetricsService, QueueMetrics],
})
export class MetricsModule {}
