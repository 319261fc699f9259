import type { NextFunction, Request, Response } from 'express';
import { MetricsService } from './metrics.service';

/** Route label of requests no endpoint matched (404, 405): never the raw path, which is unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Times every HTTP request into `http_request_duration_seconds{method, route, status_code}`.
 * `route` is the route template Express matched (`/api/v1/sites/:siteId`), so ids never become
 * labels. Registered first (configure-app.ts), so the time includes the other middlewares.
 */
export function httpMetricsMiddleware(metrics: MetricsService) {
  const duration = metrics.histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving an HTTP request to the end of its answer, by route template and status.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  });
  return (req: Request, res: Response, next: NextFunction): void => {
    const end = duration.startTimer();
    // `close` also covers a client that went away before the answer was complete.
    res.once('close', () => {
      end({ method: req.method, route: routeTemplate(req), status_code: String(res.statusCode) });
    });
    next();
  };
}

function routeTemplate(req: Request): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  // Wildcard routes are middleware mounted for every path (the request logger), not endpoints:
  // when the last route a request went through is one, no endpoint matched it.
  if (typeof path !== 'string' || path.includes('*')) return UNMATCHED_ROUTE;
  return `${req.baseUrl ?? ''}${path}` || '/';
}
