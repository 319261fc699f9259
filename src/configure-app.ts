import type { NestExpressApplication } from '@nestjs/platform-express';
import { jsonBodyMiddlewares } from './common/http/body-parsing';
import { pathAndQueryMiddleware } from './common/http/path-and-query';
import { requestIdMiddleware } from './common/http/request-id.middleware';
import { accessLogMiddleware, ServiceLogger } from './common/logging/request-logging';
import { AppConfig } from './config/app-config';
import { setupOpenApi } from './docs/openapi/openapi-document';
import { httpMetricsMiddleware, MetricsService } from './metrics';

/**
 * Everything the HTTP app needs besides its modules, in order. Shared by main.ts and the tests,
 * so the tests serve exactly what production serves. Create the app with `bodyParser: false`.
 */
export function configureApp(app: NestExpressApplication, config: AppConfig): NestExpressApplication {
  const logger = app.get(ServiceLogger);
  app.useLogger(logger);
  app.set('trust proxy', config.trustProxy);
  app.disable('x-powered-by');
  // No automatic weak ETag on JSON answers: Express hashed every body (SHA-1 of a 20 KB page) for
  // a conditional GET the contract does not offer. Routes that promise an ETag set their own.
  app.set('etag', false);
  app.use(httpMetricsMiddleware(app.get(MetricsService)));
  const trust = app.getHttpAdapter().getInstance().get('trust proxy fn') as (
    addr: string,
    hop: number,
  ) => boolean;
  app.use(requestIdMiddleware((peer) => trust(peer, 0)));
  // The access log (no line for /health/*), and the request bound to the lines written serving it.
  app.use(accessLogMiddleware(logger.root, (req) => req.url.startsWith('/health')));
  app.use(pathAndQueryMiddleware(), ...jsonBodyMiddlewares(config.publicBaseUrl));
  setupOpenApi(app, config);
  app.enableShutdownHooks();
  return app;
}
