// First: tracing patches http, express, pg and ioredis as they load (off without OTEL_EXPORTER_OTLP_ENDPOINT).
import './tracing';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import cluster from 'node:cluster';
import { AppModule } from './app.module';
import { answerClientErrorsWithProblems } from './common/http/client-error';
import { logListening } from './common/logging/process-logger';
import { superviseHttpProcesses } from './common/process/http-processes';
import { startProcess } from './common/process/start-process';
import { configureApp } from './configure-app';

// Every line this process prints is JSON, from the first warning to a fatal error.
startProcess(process.env, async (config, nestOptions, logger) => {
  // HTTP_PROCESSES > 1: this process (the primary) forks the HTTP processes and supervises them.
  if (cluster.isPrimary && config.httpProcesses > 1) {
    superviseHttpProcesses(config.httpProcesses, config.workers, logger);
    return;
  }
  const app = await NestFactory.create<NestExpressApplication>(AppModule.register(config), {
    bodyParser: false,
    ...nestOptions,
  });
  configureApp(app, config);
  answerClientErrorsWithProblems(app.getHttpServer(), config.publicBaseUrl);
  await app.listen(config.port);
  logListening(logger, app.getHttpServer().address(), config.publicBaseUrl);
});
