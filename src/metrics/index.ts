export { httpMetricsMiddleware } from './http-metrics.middleware';
export { MetricsModule } from './metrics.module';
export { MetricsService } from './metrics.service';
