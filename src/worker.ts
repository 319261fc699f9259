// First: tracing patches http, express, pg and ioredis as they load (off without OTEL_EXPORTER_OTLP_ENDPOINT).
import './tracing';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import {
  createProcessLogger,
  exitOnFatal,
  logDatabasePrepared,
  logShutdownSignals,
  logUncaughtErrors,
  NestProcessLogger,
} from './common/logging/process-logger';
import { loadConfig } from './config/config';
import { prepareDatabase } from './database/data-source';
import { WorkerModule } from './worker.module';

// Every line this process prints is JSON, from the first warning to a fatal error.
const logger = createProcessLogger();
logUncaughtErrors(logger);

/** `npm run worker`: one more process running the queues (labeling), to scale out `npm start`. */
async function bootstrap(): Promise<void> {
  const config = loadConfig({ ...process.env, WORKERS: 'on' }, (message) => logger.warn(message));
  logger.level = config.logLevel;
  logDatabasePrepared(logger, await prepareDatabase(config.databaseUrl));
  const app = await NestFactory.createApplicationContext(WorkerModule.register(config), {
    bufferLogs: true,
    logger: new NestProcessLogger(logger),
  });
  app.useLogger(app.get(Logger));
  app.enableShutdownHooks();
  logger.info('worker started: processing the queues');
  logShutdownSignals(logger);
}

bootstrap().catch((error) => exitOnFatal(logger, error));
