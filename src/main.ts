// First: tracing patches http, express, pg and ioredis as they load (off without OTEL_EXPORTER_OTLP_ENDPOINT).
import './tracing';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { answerClientErrorsWithProblems } from './common/http/client-error';
import {
  createProcessLogger,
  exitOnFatal,
  logDatabasePrepared,
  logListening,
  logShutdownSignals,
  logUncaughtErrors,
  NestProcessLogger,
} from './common/logging/process-logger';
import { loadConfig } from './config/config';
import { configureApp } from './configure-app';
import { prepareDatabase } from './database/data-source';

// Every line this process prints is JSON, from the first warning to a fatal error.
const logger = createProcessLogger();
logUncaughtErrors(logger);

async function bootstrap(): Promise<void> {
  const config = loadConfig(process.env, (message) => logger.warn(message));
  logger.level = config.logLevel;
  logDatabasePrepared(logger, await prepareDatabase(config.databaseUrl));
  const app = await NestFactory.create<NestExpressApplication>(AppModule.register(config), {
    bodyParser: false,
    bufferLogs: true,
    logger: new NestProcessLogger(logger),
  });
  configureApp(app, config);
  answerClientErrorsWithProblems(app.getHttpServer(), config.publicBaseUrl);
  await app.listen(config.port);
  logListening(logger, app.getHttpServer().address(), config.publicBaseUrl);
  logShutdownSignals(logger);
}

bootstrap().catch((error) => exitOnFatal(logger, error));
