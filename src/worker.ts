// First: tracing patches http, express, pg and ioredis as they load (off without OTEL_EXPORTER_OTLP_ENDPOINT).
import './tracing';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { ConfigError, loadConfig } from './config/config';
import { prepareDatabase } from './database/data-source';
import { WorkerModule } from './worker.module';

/** `npm run worker`: one more process running the queues (labeling), to scale out `npm start`. */
async function bootstrap(): Promise<void> {
  const config = loadConfig({ ...process.env, WORKERS: 'on' }, (message) =>
    console.error(`warning: ${message}`),
  );
  await prepareDatabase(config.databaseUrl);
  const app = await NestFactory.createApplicationContext(WorkerModule.register(config), { bufferLogs: true });
  app.useLogger(app.get(Logger));
  app.enableShutdownHooks();
}

bootstrap().catch((error) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
