import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { jsonBodyMiddlewares } from './common/http/body-parsing';
import { requestIdMiddleware } from './common/http/request-id.middleware';
import { createValidationPipe } from './common/http/validation';
import { AppConfig } from './config/app-config';
import { httpMetricsMiddleware, MetricsService } from './metrics';

/**
 * Everything the HTTP app needs besides its modules, in order. Shared by main.ts and the tests,
 * so the tests serve exactly what production serves. Create the app with `bodyParser: false`.
 */
export function configureApp(app: NestExpressApplication, config: AppConfig): NestExpressApplication {
  app.useLogger(app.get(Logger));
  app.set('trust proxy', config.trustProxy);
  app.disable('x-powered-by');
  app.use(httpMetricsMiddleware(app.get(MetricsService)));
  const trust = app.getHttpAdapter().getInstance().get('trust proxy fn') as (
    addr: string,
    hop: number,
  ) => boolean;
  app.use(requestIdMiddleware((peer) => trust(peer, 0)));
  app.use(...jsonBodyMiddlewares(config.publicBaseUrl));
  app.useGlobalPipes(createValidationPipe());
  setupOpenApi(app, config);
  app.enableShutdownHooks();
  return app;
}

function setupOpenApi(app: NestExpressApplication, config: AppConfig): void {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Shopping-assistant analytics API')
      .setDescription(
        `REST API v1. Authenticate with \`Authorization: Bearer <API_KEY>\`. Errors are RFC 9457 problem documents; see ${config.publicBaseUrl}/docs/api/errors.`,
      )
      .setVersion('1')
      .addServer(config.publicBaseUrl)
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'Organization API key (sak_…)' })
      .build(),
  );
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'api/v1/openapi.json', raw: ['json'] });
}
