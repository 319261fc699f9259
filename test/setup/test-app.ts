import type { Writable } from 'node:stream';
import type { Type } from '@nestjs/common';
import { createServiceLogger, ServiceLogger } from '../../src/common/logging/request-logging';
import { Test } from '@nestjs/testing';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module';
import { answerClientErrorsWithProblems } from '../../src/common/http/client-error';
import { AppConfig } from '../../src/config/app-config';
import { loadConfig } from '../../src/config/config';
import { configureApp } from '../../src/configure-app';
import { createIsolatedDatabase } from './isolated-database';
import { checkedAgainstDocument } from './checked-answers';
import { runResponseContract } from './run-openapi-document';
import { TEST_RUN_ENV } from './test-run';

/**
 * Rate limits no request of the suite reaches: for suites whose rules are not the rate limits, so
 * that their many requests stay out of the budget the run's other apps share (one Redis prefix).
 */
export const OWN_BUDGET = { RATE_LIMIT_IP_MAX: '1000000', RATE_LIMIT_KEY_MAX: '1000000' } as const;

export interface TestApp {
  app: NestExpressApplication;
  config: AppConfig;
  /** The app's PostgreSQL connection, for reading or arranging rows directly. */
  db: DataSource;
  /**
   * A supertest client of the app. Each answer it receives is checked against the OpenAPI
   * document (checked-answers.ts): an answer the document does not allow fails the request.
   */
  http: () => ReturnType<typeof request>;
  close: () => Promise<void>;
}

/**
 * The whole service as `npm start` serves it, on this run's database and Redis prefix.
 * `env` overrides variables (e.g. small rate limits); `keyPrefixSuffix` isolates Redis keys.
 * With SEARCH_BACKEND=opensearch and SEARCH_SYNC_FOR_TESTS, the listing and stats engines are
 * the synced OpenSearch ones (src/search/testing/search-sync-for-tests.ts). `ownDatabase` runs it on a
 * database of its own (created and migrated first, dropped by close()): for apps whose background
 * workers scan every conversation, so that they never touch other suites' rows.
 */
export async function createTestApp(
  env: Record<string, string> = {},
  options: TestAppOptions & { ownDatabase?: boolean } = {},
): Promise<TestApp> {
  if (!options.ownDatabase) return startTestApp(process.env[TEST_RUN_ENV.database]!, env, options);
  const database = await createIsolatedDatabase();
  try {
    const t = await startTestApp(database.url, env, options);
    return { ...t, close: () => t.close().finally(database.drop) };
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/** The configuration of a test app: the run's, with `env` over it. */
function testConfig(databaseUrl: string, env: Record<string, string>, redisKeyPrefixSuffix = ''): AppConfig {
  return loadConfig({
    ...process.env,
    DATABASE_URL: databaseUrl,
    REDIS_KEY_PREFIX: `${process.env[TEST_RUN_ENV.prefix]}${redisKeyPrefixSuffix}`,
    CURSOR_SECRET: 'test-cursor-secret-0123456789abcdef0123456789',
    WORKERS: 'off',
    ...env,
  });
}

/** How a test app differs from the run's: its Redis prefix, extra controllers, where its log lines go. */
export interface TestAppOptions {
  redisKeyPrefixSuffix?: string;
  extraControllers?: Type<unknown>[];
  /** The service's log lines at `info`, as `npm start` writes them (else LOG_LEVEL, silent in tests). */
  logs?: Writable;
}

async function startTestApp(
  databaseUrl: string,
  env: Record<string, string>,
  options: TestAppOptions,
): Promise<TestApp> {
  const config = testConfig(databaseUrl, env, options.redisKeyPrefixSuffix);
  // The document of the service as every app of the run serves it (no test controller, no override).
  const contract = await runResponseContract(testConfig(process.env[TEST_RUN_ENV.database]!, {}));
  const builder = Test.createTestingModule({
    imports: [AppModule.register(config)],
    controllers: options.extraControllers ?? [],
  });
  if (options.logs)
    builder
      .overrideProvider(ServiceLogger)
      .useValue(new ServiceLogger(createServiceLogger('info', options.logs)));
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false, logger: false });
  configureApp(app, config);
  answerClientErrorsWithProblems(app.getHttpServer(), config.publicBaseUrl);
  await app.init();
  const server = app.getHttpServer();
  return {
    app,
    config,
    db: app.get(DataSource),
    http: () => checkedAgainstDocument(request(server), contract),
    close: () => app.close(),
  };
}
