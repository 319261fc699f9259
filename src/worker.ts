// First: tracing patches http, express, pg and ioredis as they load (off without OTEL_EXPORTER_OTLP_ENDPOINT).
import './tracing';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { ServiceLogger } from './common/logging/request-logging';
import { startProcess } from './common/process/start-process';
import { WorkerModule } from './worker.module';

/** `npm run worker`: one more process running the queues (labeling), to scale out `npm start`. */
startProcess({ ...process.env, WORKERS: 'on' }, async (config, nestOptions, logger) => {
  const app = await NestFactory.createApplicationContext(WorkerModule.register(config), nestOptions);
  app.useLogger(app.get(ServiceLogger));
  app.enableShutdownHooks();
  logger.info('worker started: processing the queues');
});
