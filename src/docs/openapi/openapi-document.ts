import type { INestApplication } from '@nestjs/common';
import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { AppConfig } from '../../config/app-config';
import { nullableSchemas } from './nullable-schemas';
import { ProblemEntrySchema, ProblemSchema } from './problem.schema';

/** Name of the API key security scheme in components.securitySchemes. */
export const API_KEY_SCHEME = 'apiKey';

/** Where the document is served (and the browsable UI). */
export const OPENAPI_JSON_PATH = 'api/v1/openapi.json';
export const OPENAPI_UI_PATH = 'docs';

/** Marks a controller (or one operation) as needing the organization API key. */
export function ApiKeyAuth(): MethodDecorator & ClassDecorator {
  return applyDecorators(ApiBearerAuth(API_KEY_SCHEME));
}

/** The OpenAPI document of the app, generated from the controllers' decorators. */
export function buildOpenApiDocument(app: INestApplication, config: AppConfig): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Shopping-assistant analytics API')
    .setDescription(
      [
        'REST API v1. Authenticate with `Authorization: Bearer <API_KEY>` (an organization API key, `sak_…`).',
        `Every error is an RFC 9457 problem document (\`application/problem+json\`, schema \`Problem\`); branch on \`code\`. Codes: ${config.publicBaseUrl}/docs/api/errors.`,
        'Every response carries `X-Request-Id`. A method a path does not support is a plain-text 405 with `Allow` (not a problem document).',
      ].join('\n\n'),
    )
    .setVersion('1')
    .addServer(config.publicBaseUrl)
    .addTag('Sites', "The organization's sites.")
    .addTag('Conversations', 'Recording conversations and reading them (listing, one conversation, labels).')
    .addTag('Labels', 'The label vocabulary (taxonomy v1.1).')
    .addTag('Pages', "Importing a site's pages from its sitemap, and reading them.")
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'sak_ API key (opaque)',
        description:
          'Organization API key: `sak_` + 32 base62 characters + a 6-character checksum, opaque (not a JWT). Sent as `Authorization: Bearer sak_…`. A missing, malformed, unknown, revoked or expired key is 401 `unauthorized`.',
      },
      API_KEY_SCHEME,
    )
    .build();
  return nullableSchemas(
    SwaggerModule.createDocument(app, builder, { extraModels: [ProblemSchema, ProblemEntrySchema] }),
  );
}

/** Serves the document at /api/v1/openapi.json and the browsable UI at /docs. */
export function setupOpenApi(app: INestApplication, config: AppConfig): void {
  const document = buildOpenApiDocument(app, config);
  SwaggerModule.setup(OPENAPI_UI_PATH, app, document, { jsonDocumentUrl: OPENAPI_JSON_PATH, raw: ['json'] });
}
