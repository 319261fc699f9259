// First: tracing patches http, express, pg and ioredis as they load (off without OTEL_EXPORTER_OTLP_ENDPOINT).
import './tracing';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { answerClientErrorsWithProblems } from './common/http/client-error';
import { logListening } from './common/logging/process-logger';
import { startProcess } from './common/process/start-process';
import { configureApp } from './configure-app';

// Every line this process prints is JSON, from the first warning to a fatal error.
startProcess(process.env, async (config, nestOptions, logger) => {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.register(config), {
    bodyParser: false,
    ...nestOptions,
  });
  configureApp(app, config);
  answerClientErrorsWithProblems(app.getHttpServer(), config.publicBaseUrl);
  await app.listen(config.port);
  logListening(logger, app.getHttpServer().address(), config.publicBaseUrl);
});
