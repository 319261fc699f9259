import type { NestApplicationOptions } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '../../config/app-config';
import { loadConfig } from '../../config/config';
import { prepareDatabase } from '../../database/data-source';
import { isHttpProcessOfCluster } from './http-processes';
import {
  createProcessLogger,
  exitOnFatal,
  logDatabasePrepared,
  logShutdownSignals,
  logUncaughtErrors,
  NestProcessLogger,
} from '../logging/process-logger';

/** What an entry point builds once the configuration is read and the database is prepared. */
export type ProcessStarter = (
  config: AppConfig,
  nestOptions: Pick<NestApplicationOptions, 'bufferLogs' | 'logger'>,
  logger: Logger,
) => Promise<void>;

/**
 * The start-up every process shares (`npm start`, `npm run worker`): JSON logs from the first
 * warning to a fatal error, the configuration, the migrations, then the process's own
 * application, then the shutdown-signal log. A failure anywhere exits with one fatal line.
 */
export function startProcess(env: NodeJS.ProcessEnv, start: ProcessStarter): void {
  const logger = createProcessLogger();
  logUncaughtErrors(logger);
  const run = async (): Promise<void> => {
    const config = loadConfig(env, (message) => logger.warn(message));
    logger.level = config.logLevel;
    // With HTTP_PROCESSES > 1 the primary has prepared the database before forking this process.
    if (!isHttpProcessOfCluster()) logDatabasePrepared(logger, await prepareDatabase(config.databaseUrl));
    await start(config, { bufferLogs: true, logger: new NestProcessLogger(logger) }, logger);
    logShutdownSignals(logger);
  };
  run().catch((error) => exitOnFatal(logger, error));
}
